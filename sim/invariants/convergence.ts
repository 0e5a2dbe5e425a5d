import { inHookError } from '../../actors/unit/local-state.ts'
import type { UnitWorld } from '../unit-world.ts'

/**
 * What "converged" means once faults have healed: every unit in the model is running,
 * idle, and its durable local state agrees with what the controller wants — config,
 * charm, leadership, and for every relation exactly the members and versions the other
 * side shows, with nothing pending. Returns one line per problem, empty when converged.
 */
export function convergenceProblems (world: UnitWorld): string[] {
  const problems: string[] = []
  if (world.heldHooks().length > 0) problems.push(`held hooks: ${world.heldHooks().map(h => h.hook).join(', ')}`)
  for (const unit of world.model.units()) {
    const remote = world.model.remoteState(unit)
    const local = world.durable.get(unit)
    if (remote.life !== 'alive') { problems.push(`${unit}: still ${remote.life}`); continue }
    if (!world.running(unit)) { problems.push(`${unit}: agent not running`); continue }
    const state = world.stateOf(unit)
    if (state !== 'idle') { problems.push(`${unit}: ${state}`); continue }
    if (local === undefined) { problems.push(`${unit}: nothing persisted`); continue }
    if (inHookError(local)) problems.push(`${unit}: in hook error`)
    if (!local.started) problems.push(`${unit}: not started`)
    if (local.configHash !== remote.configHash) problems.push(`${unit}: config ${local.configHash} != ${remote.configHash}`)
    if (local.charm?.url !== remote.charm.url) problems.push(`${unit}: charm ${local.charm?.url ?? 'none'} != ${remote.charm.url}`)
    if (local.leader !== remote.leader) problems.push(`${unit}: leader ${String(local.leader)} != ${String(remote.leader)}`)
    if (remote.actions.length > 0) problems.push(`${unit}: ${remote.actions.length} actions pending`)
    for (const [id, rel] of Object.entries(remote.relations)) {
      if (rel.life !== 'alive') continue
      const mine = local.relations[id]
      if (mine === undefined) { problems.push(`${unit}: relation ${id} not created`); continue }
      if (mine.changedPending !== undefined) problems.push(`${unit}: relation ${id} changed pending for ${mine.changedPending}`)
      const want = JSON.stringify(Object.entries(rel.members).sort())
      const have = JSON.stringify(Object.entries(mine.members).sort())
      if (want !== have) problems.push(`${unit}: relation ${id} members ${have} != ${want}`)
    }
    for (const id of Object.keys(local.relations)) {
      if (remote.relations[id] === undefined) problems.push(`${unit}: relation ${id} still known locally`)
    }
  }
  return problems
}
