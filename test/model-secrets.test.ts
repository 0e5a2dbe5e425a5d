/**
 * Secrets in the model, the read plan a controller follows for `secret-get`, sealing, and
 * the secret-changed resolver. Juju sources followed:
 * internal/worker/uniter/runner/context/context.go (pending creates then updates, so add
 * and set in one hook make revisions 1 and 2), apiserver/facades/agent/secretsmanager
 * (a consumer tracks the latest revision on its first read and with --refresh, --peek does
 * not track, no grant is ErrPerm), internal/worker/uniter/secrets/resolver.go
 * (secret-changed when the consumed revision moves).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admin, CommandModel, vaultAndApp } from './support/secret-model.ts'
import { nextOp } from '../actors/unit/resolver.ts'
import { initialLocalState, initialMemory } from '../actors/unit/local-state.ts'
import { initialRemoteState } from '../actors/unit/remote-state.ts'
import type { UnitName } from '../runtime/ids.ts'
import { machineModelView } from '../runtime/model/machine-view.ts'
import type { Entity } from '../runtime/model/model-types.ts'
import { remoteStateFor } from '../runtime/model/remote-state-view.ts'
import { planSecretRead } from '../runtime/model/secret-access.ts'
import { applyCommand } from '../runtime/model/model-store.ts'
import { encodingSealer } from '../runtime/model/secret-sealing.ts'
import { tableGet } from '../runtime/model/table.ts'

const unit = (name: UnitName): Entity => ({ kind: 'unit', name })
const id = 'c'.repeat(20)
/** A command without its request id (Omit over each member of the union). */
class Model extends CommandModel {
  secret () { return tableGet(this.context.secrets!, id) }
}

/** vault/0 (leader) on machine 0, app/0 on machine 1, vault:creds related to app:creds (relation 0). */
function world (): Model {
  const m = new Model()
  vaultAndApp(m)
  m.ok({ type: 'claim-leadership', proposer: unit('vault/0'), application: 'vault', unit: 'vault/0', now: 0, durationMs: 60_000 })
  return m
}

test('a hook adds then sets a secret: revisions 1 and 2, content sealed, grant to the relation', () => {
  const m = world()
  m.ok({
    type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0',
    secrets: { now: 5, creates: [{ id, owner: 'application', content: { plain: { password: 'one' } }, label: 'pw' }], updates: [{ id, content: { plain: { password: 'two' } } }], grants: [{ id, relationId: 0 }] }
  })
  const secret = m.secret()!
  assert.equal([secret.latestRevision, secret.label, secret.owner], [2, 'pw', { kind: 'application', name: 'vault' }])
  assert.equal(secret.revisions.map(r => encodingSealer.open(r.sealed)), [{ password: 'one' }, { password: 'two' }])
  assert.equal(secret.grants, [{ target: { kind: 'application', name: 'app' }, relationId: 0 }])
  // Machine views carry metadata, never the sealed content.
  assert.equal(tableGet(machineModelView(m.context, '1').secrets!, id)!.revisions.map(r => r.sealed), ['', ''])
})

test('plain content never reaches the log: the model refuses it; non-leaders may not manage application secrets', () => {
  const m = world()
  const create = { id, owner: 'application' as const, content: { plain: { password: 'one' } } }
  const raw = applyCommand(m.context, { type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', requestId: 'x', secrets: { creates: [create] } }, { index: ++m.index, term: 1 })
  assert.equal(raw.result, { ok: false, index: m.index, error: `controller: cannot commit hook changes of "vault/0": secret content reached the log unsealed` })
  m.ok({ type: 'release-leadership', proposer: unit('vault/0'), application: 'vault', unit: 'vault/0' })
  assert.is(m.error({ type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', secrets: { creates: [create] } }),
    'controller: cannot commit hook changes of "vault/0": "vault/0" is not the leader of "vault"')
})

test('secret-get plans: first read and --refresh track, --peek does not, no grant is permission denied', () => {
  const m = world()
  m.ok({ type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', secrets: { creates: [{ id, owner: 'application', content: { plain: { p: 'one' } } }] } })
  assert.equal(planSecretRead(m.context, 'app/0', { id }), { ok: false, error: 'permission denied' })
  m.ok({ type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', secrets: { grants: [{ id, relationId: 0 }] } })
  const first = planSecretRead(m.context, 'app/0', { id })
  assert.equal(first.ok && [first.revision, first.track], [1, { revision: 1 }])
  m.ok({ type: 'secret-consumed', proposer: unit('app/0'), unit: 'app/0', id, revision: 1, label: 'db' })
  m.ok({ type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', secrets: { updates: [{ id, content: { plain: { p: 'two' } } }] } })
  const tracked = planSecretRead(m.context, 'app/0', { label: 'db' })
  assert.equal(tracked.ok && [tracked.revision, tracked.track], [1, undefined])
  const peek = planSecretRead(m.context, 'app/0', { id, peek: true })
  assert.equal(peek.ok && [peek.revision, peek.track], [2, undefined])
  const refresh = planSecretRead(m.context, 'app/0', { id, refresh: true })
  assert.equal(refresh.ok && [refresh.revision, refresh.track], [2, { revision: 2 }])
  assert.equal(planSecretRead(m.context, 'app/0', { id: 'd'.repeat(20) }), { ok: false, error: `secret "${'d'.repeat(20)}" not found` })

  // The resolver: latest 2 > tracked 1 → secret-changed with the consumer's label; after its commit, nothing.
  // Relations left out: the created-relations resolver runs before secrets, and is not what this checks.
  const remote = { ...initialRemoteState('local:app-0'), ...remoteStateFor(m.context, 'app/0', 0)!, relations: {}, updateStatusVersion: 0, retryHookVersion: 0 }
  const local = { ...initialLocalState(), installed: true, started: true, charm: { url: 'local:app-0', modifiedVersion: 0 } }
  const input = { unit: 'app/0', local, memory: { ...initialMemory(false), leaderSettingsVersion: remote.leaderSettingsVersion }, remote, retryTimer: { armed: false, attempt: 0 }, automaticallyRetryHooks: true }
  assert.equal(nextOp(input).decision, { kind: 'run', op: { kind: 'run-hook', hook: { kind: 'secret-changed', secretId: id, secretRevision: 2, secretLabel: 'db' }, source: 'resolver' } })
  const after = nextOp({ ...input, local: { ...local, secretRevisions: { [id]: 2 } } }).decision
  assert.not.ok(after.kind === 'run' && after.op.kind === 'run-hook' && after.op.hook.kind === 'secret-changed', JSON.stringify(after))

  // Revoking drops the grant and the consumer: reads are refused again.
  m.ok({ type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', secrets: { revokes: [{ id, relationId: 0 }] } })
  assert.equal([m.secret()!.grants, m.secret()!.consumers], [[], {}])
  assert.equal(planSecretRead(m.context, 'app/0', { id }), { ok: false, error: 'permission denied' })
})

test('user secrets: admins only; remove drops the record and tells watchers', () => {
  const m = world()
  assert.match(m.error({ type: 'add-secret', proposer: unit('app/0'), id, label: 'token', content: { plain: { t: 'x' } }, now: 1 }), /permission denied/)
  m.ok({ type: 'add-secret', proposer: admin, id, label: 'token', content: { plain: { t: 'x' } }, now: 1 })
  m.ok({ type: 'grant-secret', proposer: admin, id, applications: ['app'] })
  assert.ok(planSecretRead(m.context, 'app/0', { id }).ok)
  m.ok({ type: 'remove-secret', proposer: admin, id })
  assert.is(m.secret(), undefined)
})

test.run()
