import { limits } from '../../limits.ts'
import type { ApplyMeta, ApplyOutcome, CommandOf, CommandResult, ModelCommand, ModelContext } from '../model-types.ts'
import { describeCommand } from './describe-command.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'

/**
 * `apply-batch`: several commands committed as one Raft entry. A leader proposes a machine
 * agent's `{batch}` request this way (actors/controller/model-replica.ts), the way Juju's
 * agents send one bulk API call for many entities (e.g. SetStatus with many entities, in
 * juju/juju apiserver/common/setstatus.go) and get one result per entity back: one entry,
 * one apply pass on each controller, one change notice and one check of the held watches,
 * instead of one of each per command.
 *
 * The entry point (model-apply.ts) applies the commands one after the other, each over the
 * context the previous one left, each with its own request-id dedup and result: a refused
 * command leaves the model as it was before it and does not refuse the others. Only a
 * controller proposes a batch; what each command may do is checked by its own proposer.
 */

/** Why the batch `c` as a whole cannot apply, or undefined: checked before any of its commands. */
export function batchProblem (c: CommandOf<'apply-batch'>): string | undefined {
  const what = `controller: cannot ${describeCommand(c)}`
  if (c.proposer.kind !== 'controller') return `${what}: only a controller proposes a batch, not ${q(c.proposer.kind)}`
  if (!Array.isArray(c.commands)) return `${what}: expected a list of commands, got ${q(c.commands)}`
  if (c.commands.length === 0 || c.commands.length > limits.modelEntryCommandsMax) {
    return `${what}: expected 1 to ${limits.modelEntryCommandsMax} commands, got ${c.commands.length}`
  }
  return undefined
}

/**
 * Applies each command of a valid batch at `meta.index` with `applyOne`, threading the
 * context; the batch's result lists each command's result in order. The batch's own
 * request id is not remembered: a retry is deduplicated command by command.
 */
export function applyBatchCommands (
  context: ModelContext, c: CommandOf<'apply-batch'>, meta: Required<ApplyMeta>,
  applyOne: (context: ModelContext, command: ModelCommand, meta: Required<ApplyMeta>) => ApplyOutcome
): ApplyOutcome {
  let next = context
  const deltas: Array<ApplyOutcome['deltas'][number]> = []
  const results: CommandResult[] = []
  for (const command of c.commands) {
    const outcome = applyOne(next, command, meta)
    next = outcome.context
    for (const delta of outcome.deltas) deltas.push(delta)
    results.push(outcome.result)
  }
  return { context: next, deltas, result: { ok: true, index: meta.index, results }, duplicate: false }
}

/** Reached only by a batch inside a batch: the entry point applies a top-level one itself. */
export const batchCommands: HandlerTable<'apply-batch'> = {
  'apply-batch': (_d, c) => refuse(c, 'a batch cannot hold another batch')
}
