/**
 * What "converged" means for the whole simulated system, checked against the real
 * replicated model (a controller's) and the machine agents: every unit of the model is
 * alive, its machine's agent is up and runs it, the uniter is idle with nothing in error,
 * its local state agrees with the remote state the model projects (charm, config, the
 * members of every relation, leadership), its agent status is idle and its workload
 * status is one its charm's hooks set; and every application with units has exactly one
 * unit that believes it leads, the one holding the lease. One line per problem; empty
 * when converged.
 */
import { inHookError } from '../../actors/unit/local-state.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { ModelContext, UnitRecord } from '../../runtime/model/model-types.ts'
import { remoteStateFor } from '../../runtime/model/remote-state-view.ts'
import { tableGet, tableValues } from '../../runtime/model/table.ts'
import type { ScenarioCharm } from '../scenario/scenario-types.ts'
import type { SimMachineAgentApi } from './machine-agent-types.ts'
import { charmNameOf, charmStatuses } from './sim-unit-hooks.ts'

/** Problems listed at most: the first ones say enough, and the check stays cheap. */
export const convergenceProblemsMax = 50

/**
 * What a caller that checks again and again (the liveness loop) keeps between calls: the
 * units that had problems last time are looked at first, and while one of them still has
 * one, that answers "not converged" without a look at the thousands of units that are fine.
 */
export interface ConvergenceMemo { suspects: UnitRecord['name'][] }

export function systemConvergenceProblems (model: ModelContext, agents: readonly SimMachineAgentApi[], charms?: Readonly<Record<string, ScenarioCharm>>, max = convergenceProblemsMax, memo?: ConvergenceMemo): string[] {
  const byMachine = new Map(agents.map(agent => [agent.machineId, agent]))
  if (memo !== undefined && memo.suspects.length > 0) {
    const suspects = memo.suspects.map(name => tableGet(model.units, name)).filter(unit => unit !== undefined)
    const problems = unitProblems(model, suspects, byMachine, charms, max)
    if (problems.length > 0) return problems
  }
  const units = tableValues(model.units)
  const problems = unitProblems(model, units, byMachine, charms, max)
  if (memo !== undefined) memo.suspects = problems.map(problem => problem.slice(0, problem.indexOf(':'))).filter(name => name.includes('/'))
  if (problems.length > 0) return problems
  problems.push(...leadershipProblems(model, agents, units, max))
  return problems.slice(0, max)
}

function unitProblems (model: ModelContext, units: readonly UnitRecord[], byMachine: ReadonlyMap<string, SimMachineAgentApi>, charms: Readonly<Record<string, ScenarioCharm>> | undefined, max: number): string[] {
  // Cheap checks of every unit first: while any unit is still deploying or busy, the
  // projection of its remote state (the costly part, per unit) would only add to a list
  // that is not empty anyway. A liveness loop calls this every slice; at 5,000 units
  // projecting every converged unit's remote state each time was most of the run.
  const problems = units.length === 0 ? [] : unitProgressProblems(units, byMachine, max)
  if (problems.length > 0) return problems
  for (const unit of units) {
    if (problems.length >= max) break
    problems.push(...unitAgreementProblems(model, unit, byMachine.get(unit.machine)!, charms))
  }
  return problems.slice(0, max)
}

/** Life, agent, uniter idle and started, agent status idle: what a deploy in progress shows. */
function unitProgressProblems (units: readonly UnitRecord[], byMachine: ReadonlyMap<string, SimMachineAgentApi>, max: number): string[] {
  const problems: string[] = []
  for (const unit of units) {
    if (problems.length >= max) break
    const name = unit.name
    if (unit.life !== 'alive') { problems.push(`${name}: still ${unit.life}`); continue }
    const agent = byMachine.get(unit.machine)
    if (agent === undefined) { problems.push(`${name}: machine ${unit.machine} has no agent`); continue }
    if (agent.state !== 'up') { problems.push(`${name}: agent of machine ${unit.machine} is ${agent.state}`); continue }
    const seen = agent.unitState(name)
    if (seen === undefined || !seen.running) { problems.push(`${name}: not running on machine ${unit.machine}`); continue }
    if (seen.state !== 'idle') { problems.push(`${name}: uniter ${seen.state}`); continue }
    const local = seen.local
    if (local === undefined) { problems.push(`${name}: no local state`); continue }
    if (inHookError(local)) problems.push(`${name}: in hook error`)
    if (!local.started) problems.push(`${name}: not started`)
    if (unit.agent.status !== 'idle') problems.push(`${name}: agent status ${unit.agent.status}`)
  }
  return problems
}

/** A settled unit's local state against the remote state the model projects, and its workload status against its charm. */
function unitAgreementProblems (model: ModelContext, unit: UnitRecord, agent: SimMachineAgentApi, charms: Readonly<Record<string, ScenarioCharm>> | undefined): string[] {
  const problems: string[] = []
  const name = unit.name
  const local = agent.unitState(name)!.local!
  // The lease decides leadership here, not any one clock.
  const remote = remoteStateFor(model, name, Number.NEGATIVE_INFINITY)!
  const lease = readerOf(model).lease(unit.application)
  if (local.charm?.url !== remote.charm.url) problems.push(`${name}: charm ${local.charm?.url ?? 'none'} != ${remote.charm.url}`)
  if (local.configHash !== remote.configHash) problems.push(`${name}: config ${local.configHash} != ${remote.configHash}`)
  if (local.leader !== (lease?.holder === name)) problems.push(`${name}: leader ${String(local.leader)}, lease held by ${lease?.holder ?? 'nobody'}`)
  for (const [id, relation] of Object.entries(remote.relations)) {
    if (relation.life !== 'alive') continue
    const mine = local.relations[id]
    if (mine === undefined) { problems.push(`${name}: relation ${id} not created`); continue }
    if (mine.changedPending !== undefined) problems.push(`${name}: relation ${id} changed pending for ${mine.changedPending}`)
    const want = JSON.stringify(Object.entries(relation.members).sort())
    const have = JSON.stringify(Object.entries(mine.members).sort())
    if (want !== have) problems.push(`${name}: relation ${id} members ${have} != ${want}`)
  }
  const charm = charms?.[charmNameOf(remote.charm.url)]
  const statuses = charm === undefined ? [] : charmStatuses(charm)
  if (statuses.length > 0 && !statuses.some(s => s.status === unit.workload.status && s.message === unit.workload.message)) {
    problems.push(`${name}: workload ${unit.workload.status} "${unit.workload.message}", the charm sets ${statuses.map(s => `${s.status} "${s.message}"`).join(' or ')}`)
  } else if (unit.workload.status === 'error') {
    problems.push(`${name}: workload error "${unit.workload.message}"`)
  }
  return problems
}

/** Every application with units has exactly one unit that believes it leads: the lease holder. */
function leadershipProblems (model: ModelContext, agents: readonly SimMachineAgentApi[], units: readonly UnitRecord[], max: number): string[] {
  const problems: string[] = []
  if (max <= 0) return problems
  const reader = readerOf(model)
  const believers = new Map<string, string[]>()
  for (const agent of agents) {
    if (agent.state !== 'up') continue
    for (const unit of agent.believedLeaders()) {
      const application = unit.slice(0, unit.lastIndexOf('/'))
      believers.set(application, [...believers.get(application) ?? [], unit])
    }
  }
  for (const application of [...new Set(units.map(unit => unit.application))].sort()) {
    if (problems.length >= max) break
    const leaders = believers.get(application) ?? []
    const holder = reader.lease(application)?.holder
    if (leaders.length !== 1) problems.push(`${application}: ${leaders.length} units believe they lead (${leaders.join(', ')})`)
    else if (leaders[0] !== holder) problems.push(`${application}: ${leaders[0]!} believes it leads, the lease is ${holder ?? 'nobody'}'s`)
  }
  return problems
}
