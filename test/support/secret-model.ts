/**
 * A model driven command by command through the real apply path (sealing included), for
 * the secret tests: `ok` applies and fails the test on a refusal, `error` returns the
 * refusal. `vaultAndApp` is their common start: vault provides `creds`, app requires it,
 * one unit each, related.
 */
import * as assert from 'uvu/assert'
import { applyCommand, emptyModel } from '../../runtime/model/model-store.ts'
import type { CommandResult, Entity, ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { encodingSealer, sealCommand } from '../../runtime/model/secret-sealing.ts'

/** A command without its request id (the model numbers them). */
export type CommandBody = ModelCommand extends infer C ? C extends ModelCommand ? Omit<C, 'requestId'> : never : never

export const admin: Entity = { kind: 'user', name: 'admin' }

export class CommandModel {
  context: ModelContext = emptyModel()
  index = 0

  run (command: ModelCommand): CommandResult {
    const outcome = applyCommand(this.context, sealCommand(command, encodingSealer), { index: ++this.index, term: 1 })
    this.context = outcome.context
    return outcome.result
  }

  ok (command: CommandBody): void {
    const result = this.run({ ...command, requestId: `r${this.index}` } as ModelCommand)
    if (!result.ok) assert.unreachable(result.error)
  }

  error (command: CommandBody): string {
    const result = this.run({ ...command, requestId: `r${this.index}` } as ModelCommand)
    return result.ok ? 'applied' : result.error
  }
}

/** vault (provides creds: password) and app (requires it), one unit each, related. */
export function vaultAndApp (m: CommandModel): void {
  m.ok({ type: 'add-charm', proposer: admin, url: 'local:vault-0', hash: 'a'.repeat(16), metadata: { name: 'vault', provides: { creds: 'password' } } })
  m.ok({ type: 'add-charm', proposer: admin, url: 'local:app-0', hash: 'b'.repeat(16), metadata: { name: 'app', requires: { creds: 'password' } } })
  m.ok({ type: 'deploy', proposer: admin, application: 'vault', charm: 'local:vault-0', config: {}, constraints: {}, numUnits: 1 })
  m.ok({ type: 'deploy', proposer: admin, application: 'app', charm: 'local:app-0', config: {}, constraints: {}, numUnits: 1 })
  m.ok({ type: 'integrate', proposer: admin, a: 'vault', b: 'app' })
}
