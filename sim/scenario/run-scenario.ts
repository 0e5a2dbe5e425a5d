/**
 * One `cantrip sim` run: a Scenario and a seed in, a RunRecord out.
 *
 * Phases (each traced and recorded): setup — the controllers elect, the admin adds the
 * charms, deploys the applications and relates them; faults — the workload commands and
 * the fault schedule (the scenario's plus those drawn from the seed) at their times; heal
 * at `faultsUntilMs` — everything undone; liveness — within `livenessBudgetMs` the
 * system must converge: a working controller leader with every voter caught up, every
 * machine with exactly one deployed instance recorded in the model, every machine agent
 * up, and the agents' state matching the model (the convergence part, when given); done.
 *
 * The invariants (system-invariants.ts) are checked after every simulated step; the
 * first violation ends the run as a safety failure. A throw is a crash. Then the
 * acknowledged writes and the clients' history are checked.
 */
import { tableValues } from '../../runtime/model/table.ts'
import type { ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { checkLinearizable } from '../linearizability/check.ts'
import { kvModel } from '../linearizability/model.ts'
import { Simulation } from '../simulation.ts'
import { drawFaults, sortFaults } from '../system/fault-draw.ts'
import { RunRecorder } from '../system/run-recorder.ts'
import { SystemInvariants } from '../system/system-invariants.ts'
import { raftTiming, SystemWorld, type SystemParts } from '../system/system-world.ts'
import { WriteClients } from '../system/write-clients.ts'
import { HookFaultBookImpl } from '../system/hook-fault-book.ts'
import { SimMachineAgent } from '../system/sim-machine-agent.ts'
import { systemConvergenceProblems, type ConvergenceMemo } from '../system/system-convergence.ts'
import type { FaultEvent, RunOptions, RunOutcome, RunRecord, RunResult, Scenario, WorkloadCommand } from './scenario-types.ts'

/**
 * The parts other files provide: the simulated machine agents, a fresh hook fault book
 * per run, and the agents' convergence. Tests may pass their own (a run without a
 * machine agent factory can run controllers-only scenarios and nothing that deploys).
 */
export const defaultSystemParts: SystemParts = {
  startMachineAgent: options => new SimMachineAgent(options),
  newHookFaults: () => new HookFaultBookImpl(),
  convergence: systemConvergenceProblems
}

/** Simulated time the controllers have to elect a first leader. */
const firstLeaderBudgetMs = 30_000
/** Simulated time one setup command may take. */
const setupCommandBudgetMs = 60_000
/** How often the run loop looks up from the clock (checks, samples) in simulated ms. */
const runSliceMs = 250
/** Problems a liveness failure names (the convergence check stops looking after these). */
const livenessProblemsShown = 3
/** Simulated time the clients' last operations have to finish after the liveness phase. */
const clientsDrainBudgetMs = 15_000

interface Timed { at: number, order: number, apply: () => Promise<void> }

export async function runScenario (scenario: Scenario, options: RunOptions, parts: SystemParts = defaultSystemParts): Promise<RunRecord> {
  const wallStart = performance.now()
  const seed = options.seed >>> 0
  const replay = `cantrip sim ${options.scenarioPath ?? `${scenario.name}.yaml`} --seed ${seed}`
  const sim = new Simulation({ seed, replay })
  const recorder = new RunRecorder(sim, options.recordEvents === true)
  const faults = scheduleFaults(scenario, sim)
  const counts: RunResult['counts'] = { controllers: scenario.controllers, machines: 0, units: 0, hooks: 0, hookFailures: 0, leaderTerms: 0, commands: 0, invariantChecks: 0 }
  let world: SystemWorld | undefined
  let invariants: SystemInvariants | undefined
  let convergedAtMs: number | undefined
  let lastModel: ModelContext | undefined

  const finish = (outcome: RunOutcome, failure?: string): RunRecord => {
    recorder.record({ kind: 'phase', phase: 'done' }, `phase done: ${outcome}`)
    const model = world?.model() ?? lastModel
    if (model !== undefined) {
      counts.machines = Math.max(counts.machines, tableValues(model.machines).length)
      counts.units = tableValues(model.units).length
    }
    counts.invariantChecks = invariants?.checks ?? 0
    const result: RunResult = {
      scenario: scenario.name,
      seed,
      hash: sim.traceHash(),
      outcome,
      ...(failure === undefined ? {} : { failure }),
      simulatedMs: sim.clock.now(),
      wallMs: Math.round(performance.now() - wallStart),
      faults,
      ...(convergedAtMs === undefined ? {} : { convergedAtMs }),
      counts,
      replay
    }
    return { result, events: recorder.events }
  }

  try {
    if (needsAgents(scenario) && parts.startMachineAgent === undefined) {
      throw new Error(`sim: scenario ${scenario.name} deploys units but this run has no machine agent factory (SystemParts.startMachineAgent)`)
    }
    world = await SystemWorld.create({ scenario, sim, recorder, ...parts })
    const w = world
    const checks = new SystemInvariants(w)
    invariants = checks
    options.observe?.(w, checks)
    const clients = new WriteClients(w, checks.raft)
    let leaderSeen: { id: string, term: number } = { id: '', term: -1 }
    w.observers.onStep = () => {
      checks.step()
      const leader = w.group.leader()
      if (leader !== undefined && (leader.id !== leaderSeen.id || leader.term !== leaderSeen.term)) {
        leaderSeen = { id: leader.id, term: leader.term }
        counts.leaderTerms++
        recorder.record({ kind: 'term', term: leader.term, leader: leader.id }, `term ${leader.term} leader ${leader.id}`)
      }
    }
    w.observers.onHook = run => {
      counts.hooks++
      if (run.outcome === 'failed') counts.hookFailures++
      recorder.record({ kind: 'hook', unit: run.unit, machine: run.machine, hook: run.hook, start: run.startMs, outcome: run.outcome },
        `hook ${run.hook} on ${run.machine} ${run.outcome} ${run.startMs}..${run.endMs}`)
    }
    const violated = (): boolean => checks.first !== undefined
    const safety = (): RunRecord => finish('safety', `${checks.first!.check} at ${Math.round(checks.first!.t)} ms: ${checks.first!.message}`)
    let unitsSample = ''
    const sample = (): void => {
      const model = w.model()
      // The model is immutable: the same object means nothing to count again.
      if (model === undefined || model === lastModel) return
      lastModel = model
      counts.machines = Math.max(counts.machines, tableValues(model.machines).length)
      const units = tableValues(model.units).filter(u => u.application !== 'sim-writes')
      const active = units.filter(u => u.workload.status === 'active').length
      const key = `${active}/${units.length}`
      if (key !== unitsSample) {
        unitsSample = key
        recorder.record({ kind: 'units', active, total: units.length }, `units active ${key}`)
      }
    }
    /** Runs the world until simulated time `t`, stopping early on a violation or an agent error. */
    const runTo = async (t: number): Promise<void> => {
      while (sim.clock.now() < t && !violated()) {
        await w.group.runFor(Math.min(runSliceMs, t - sim.clock.now()))
        sample()
        if (w.errors.length > 0) throw new Error(w.errors[0])
      }
    }

    // Setup.
    recorder.record({ kind: 'phase', phase: 'setup' }, 'phase setup')
    if (!await w.group.runUntil(() => violated() || w.group.leaderNode() !== undefined, firstLeaderBudgetMs)) {
      return finish('liveness', `no controller leader within ${firstLeaderBudgetMs} ms of starting`)
    }
    if (violated()) return safety()
    for (const command of setupCommands(w, scenario)) {
      await runCommand(w, command, true, counts)
      if (violated()) return safety()
    }

    // Faults and workload.
    recorder.record({ kind: 'phase', phase: 'faults' }, 'phase faults')
    const timeline: Timed[] = [
      ...scenario.workload.map((command, i): Timed => ({ at: command.at, order: i, apply: async () => { workloadCommand(w, clients, command, i, counts) } })),
      ...faults.map((fault, i): Timed => ({ at: fault.at, order: scenario.workload.length + i, apply: async () => { await w.applyFault(fault) } }))
    ].sort((a, b) => a.at - b.at || a.order - b.order)
    for (const item of timeline) {
      if (item.at >= scenario.faultsUntilMs) break
      await runTo(item.at)
      if (violated()) return safety()
      await item.apply()
    }
    await runTo(scenario.faultsUntilMs)
    if (violated()) return safety()

    // Heal.
    recorder.record({ kind: 'phase', phase: 'heal' }, 'phase heal')
    clients.stop()
    await w.heal()

    // Liveness.
    recorder.record({ kind: 'phase', phase: 'liveness' }, 'phase liveness')
    const deadline = sim.clock.now() + scenario.livenessBudgetMs
    let problem: string | undefined = 'not checked yet'
    const convergenceMemo: ConvergenceMemo = { suspects: [] }
    while (!violated()) {
      problem = await livenessProblem(w, convergenceMemo)
      if (problem === undefined || sim.clock.now() >= deadline) break
      await runTo(Math.min(deadline, sim.clock.now() + runSliceMs))
    }
    if (violated()) return safety()
    if (problem !== undefined) return finish('liveness', `not converged within ${scenario.livenessBudgetMs} ms of the heal: ${problem}`)
    convergedAtMs = sim.clock.now()
    sample()

    // The clients' last operations, then what they were told against what applied.
    await w.group.runUntil(() => violated() || clients.openCount === 0, clientsDrainBudgetMs)
    if (violated()) return safety()
    if (clients.openCount > 0) return finish('liveness', `${clients.openCount} client operations still open ${clientsDrainBudgetMs} ms after converging`)
    // Client loops sleep on the simulated clock between operations: run it until they return.
    const drained = await w.drive(clients.finished(), clientsDrainBudgetMs)
    if (drained === undefined) return finish('liveness', `the write clients did not stop within ${clientsDrainBudgetMs} ms of converging`)
    const leader = w.group.leaderNode()
    if (leader !== undefined) {
      const voters = leader.host.appliedConfig().voters
      const appliedOn = (id: string): number => w.group.host(w.group.indexOf(id))?.state().revision ?? 0
      await w.group.runUntil(() => voters.every(id => appliedOn(id) >= leader.host.status().commit), 5_000)
      checks.raft.checkAcknowledged(Math.min(...voters.map(appliedOn)))
      if (checks.raft.violations.length > 0) checks.violate('acknowledged-writes', checks.raft.violations[0]!)
    }
    if (clients.history.size > 0) {
      const verdict = checkLinearizable(kvModel, clients.history.history())
      if (verdict.ok === false) checks.violate('linearizability', `the clients' history is not linearizable: ${verdict.explanation}`)
    }
    if (violated()) return safety()
    return finish('pass')
  } catch (error) {
    return finish('crash', error instanceof Error ? error.stack ?? error.message : String(error))
  } finally {
    try {
      await world?.stop()
    } catch (error) {
      // The run's outcome stands; a failing stop is worth a trace line, not a new outcome.
      sim.trace(`stop failed: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
}

/** The scenario's faults and those drawn from the seed's "faults" stream, in time order. */
function scheduleFaults (scenario: Scenario, sim: Simulation): FaultEvent[] {
  const random = scenario.randomFaults
  if (random === undefined) return sortFaults(scenario.faults)
  // A stream of its own: the world picks fault targets from "faults" as the faults fire,
  // so a drawn schedule written out as a fixed one (by --shrink) replays the same run.
  const drawn = drawFaults(sim.random('fault-draw'), random.profile, {
    fromMs: random.fromMs,
    untilMs: random.untilMs,
    events: random.events,
    controllers: scenario.controllers,
    machines: expectedMachines(scenario),
    units: expectedUnits(scenario),
    electionTimeoutMs: raftTiming(scenario).tickMs * raftTiming(scenario).electionTicks
  })
  return sortFaults([...scenario.faults, ...drawn])
}

function needsAgents (scenario: Scenario): boolean {
  return scenario.applications.some(app => app.units > 0) || scenario.workload.some(c => c.do === 'deploy' || c.do === 'add-unit')
}

/** Units the deployment will have: the scenario's, then those its workload adds, numbered as Juju does. */
function expectedUnits (scenario: Scenario): string[] {
  const next = new Map<string, number>()
  const units: string[] = []
  const add = (application: string, n: number): void => {
    for (let i = 0; i < n; i++) {
      const number = next.get(application) ?? 0
      next.set(application, number + 1)
      units.push(`${application}/${number}`)
    }
  }
  for (const app of scenario.applications) add(app.name, app.units)
  for (const command of scenario.workload) {
    if (command.do === 'deploy' || command.do === 'add-unit') add(command.application, command.units)
  }
  return units
}

/** Machine ids the deployment will have: one per principal unit, numbered from 0. */
function expectedMachines (scenario: Scenario): string[] {
  const charmOf = new Map(scenario.applications.map(app => [app.name, app.charm]))
  for (const command of scenario.workload) if (command.do === 'deploy') charmOf.set(command.application, command.charm)
  const principals = expectedUnits(scenario).filter(unit => scenario.charms[charmOf.get(unit.split('/')[0]!) ?? '']?.subordinate !== true)
  return principals.map((_, i) => String(i))
}

// ---------------------------------------------------------------------------------
// Commands

/** The charm URL of a scenario charm. */
export function charmUrl (charm: string): string {
  return `local:${charm}-0`
}

/** add-charm for every charm an application or a deploy uses, deploy, integrate, and the writes application. */
function setupCommands (world: SystemWorld, scenario: Scenario): ModelCommand[] {
  const used = new Set([...scenario.applications.map(app => app.charm), ...scenario.workload.flatMap(c => c.do === 'deploy' ? [c.charm] : [])])
  const commands: ModelCommand[] = []
  for (const name of [...used].sort()) {
    const charm = scenario.charms[name]
    if (charm === undefined) throw new Error(`sim: scenario ${scenario.name}: expected a charm named ${JSON.stringify(name)}, got none`)
    commands.push(world.command(`setup/charm/${name}`, {
      type: 'add-charm',
      url: charmUrl(name),
      hash: hashOf(name),
      metadata: {
        name,
        subordinate: charm.subordinate,
        provides: charm.provides,
        requires: charm.requires,
        peers: charm.peers,
        config: configOptions(scenario, name)
      }
    }))
  }
  for (const app of scenario.applications) {
    commands.push(world.command(`setup/deploy/${app.name}`, {
      type: 'deploy', application: app.name, charm: charmUrl(app.charm), config: app.config, constraints: {}, numUnits: app.units,
      ...(app.to === undefined ? {} : { placement: app.to })
    }))
  }
  for (const [a, b] of scenario.relations) commands.push(world.command(`setup/integrate/${a}/${b}`, { type: 'integrate', a, b }))
  if (scenario.workload.some(c => c.do === 'writes')) commands.push(...WriteClients.setupCommands(world))
  return commands
}

/** Config options of a charm: every key the scenario sets on its applications, typed by its values. */
function configOptions (scenario: Scenario, charm: string): Record<string, { type: 'string' | 'int' | 'float' | 'boolean' }> {
  const applications = new Set([...scenario.applications.filter(a => a.charm === charm).map(a => a.name),
    ...scenario.workload.flatMap(c => c.do === 'deploy' && c.charm === charm ? [c.application] : [])])
  const options: Record<string, { type: 'string' | 'int' | 'float' | 'boolean' }> = {}
  const note = (config: Record<string, string | number | boolean> | undefined): void => {
    for (const [key, value] of Object.entries(config ?? {})) {
      const type = typeof value === 'boolean' ? 'boolean' : typeof value === 'string' ? 'string' : Number.isInteger(value) ? 'int' : 'float'
      // An option set both as int and float is a float.
      options[key] = options[key]?.type === 'float' || (options[key]?.type === 'int' && type === 'float') ? { type: 'float' } : { type }
    }
  }
  for (const app of scenario.applications) if (applications.has(app.name)) note(app.config)
  for (const command of scenario.workload) {
    if ((command.do === 'config' || command.do === 'deploy') && applications.has(command.application)) note(command.config)
  }
  return options
}

/** A fixed content address per charm name (the simulated charm store keeps no archives). */
function hashOf (name: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0
  return h.toString(16).padStart(8, '0').repeat(2)
}

/** Submits `command`; in setup the world runs until it is answered and a refusal ends the run. */
async function runCommand (world: SystemWorld, command: ModelCommand, setup: boolean, counts: RunResult['counts']): Promise<void> {
  counts.commands++
  const text = describeCommand(command)
  if (setup) {
    const outcome = await world.drive(world.submit(command), setupCommandBudgetMs)
    if (outcome === undefined) throw new Error(`sim: setup command ${text}: no answer within ${setupCommandBudgetMs} ms`)
    if ('error' in outcome) throw outcome.error
    world.recorder.record({ kind: 'command', text, ok: outcome.value.ok }, `command ${text} ${outcome.value.ok ? 'ok' : `refused: ${outcome.value.error}`}`)
    if (!outcome.value.ok) throw new Error(`sim: setup command ${text} refused: ${outcome.value.error}`)
    return
  }
  // In the fault phase the command runs beside the clock; its answer is recorded when it comes.
  world.submit(command).then(
    result => { world.recorder.record({ kind: 'command', text, ok: result.ok }, `command ${text} ${result.ok ? 'ok' : `refused: ${result.error}`}`) },
    (error: unknown) => { world.recorder.record({ kind: 'command', text, ok: false }, `command ${text} failed: ${error instanceof Error ? error.message : String(error)}`) })
}

function workloadCommand (world: SystemWorld, clients: WriteClients, command: WorkloadCommand, i: number, counts: RunResult['counts']): void {
  const id = `workload/${i}`
  switch (command.do) {
    case 'writes':
      counts.commands++
      world.recorder.record({ kind: 'command', text: `writes ${command.ratePerS}/s until ${command.untilMs} ms`, ok: true }, `command writes ${command.ratePerS}/s until ${command.untilMs}`)
      clients.start(command.ratePerS, command.untilMs)
      return
    case 'deploy':
      void runCommand(world, world.command(id, { type: 'deploy', application: command.application, charm: charmUrl(command.charm), config: command.config ?? {}, constraints: {}, numUnits: command.units }), false, counts)
      return
    case 'add-unit':
      void runCommand(world, world.command(id, { type: 'add-unit', application: command.application, numUnits: command.units }), false, counts)
      return
    case 'remove-unit':
      void runCommand(world, world.command(id, { type: 'remove-unit', unit: command.unit }), false, counts)
      return
    case 'remove-application':
      void runCommand(world, world.command(id, { type: 'remove-application', application: command.application }), false, counts)
      return
    case 'config':
      void runCommand(world, world.command(id, { type: 'set-config', application: command.application, config: command.config }), false, counts)
      return
    case 'integrate':
      void runCommand(world, world.command(id, { type: 'integrate', a: command.endpoints[0], b: command.endpoints[1] }), false, counts)
      return
    case 'remove-relation': {
      const model = world.model()
      const wanted = [...command.endpoints].sort().join(' ')
      const relation = model === undefined ? undefined : tableValues(model.relations).find(r => r.key === wanted)
      if (relation === undefined) {
        counts.commands++
        world.recorder.record({ kind: 'command', text: `remove-relation ${wanted}`, ok: false }, `command remove-relation ${wanted} refused: no such relation`)
        return
      }
      void runCommand(world, world.command(id, { type: 'remove-relation', relationId: relation.id }), false, counts)
    }
  }
}

function describeCommand (command: ModelCommand): string {
  switch (command.type) {
    case 'add-charm': return `add-charm ${command.url}`
    case 'deploy': return `deploy ${command.application} ${command.charm} -n ${command.numUnits}`
    case 'add-unit': return `add-unit ${command.application} -n ${command.numUnits}`
    case 'remove-unit': return `remove-unit ${command.unit}`
    case 'remove-application': return `remove-application ${command.application}`
    case 'set-config': return `config ${command.application} ${Object.entries(command.config).map(([k, v]) => `${k}=${String(v)}`).join(' ')}`
    case 'integrate': return `integrate ${command.a} ${command.b}`
    case 'remove-relation': return `remove-relation ${command.relationId}`
    default: return command.type
  }
}

// ---------------------------------------------------------------------------------
// Liveness

/** What still keeps the system from converged, or undefined. */
async function livenessProblem (world: SystemWorld, memo: ConvergenceMemo): Promise<string | undefined> {
  const controllers = await world.controllersProblem()
  if (controllers !== undefined) return controllers
  const model = world.model()
  if (model === undefined) return 'no model'
  const provisioning = world.provisioningProblem(model)
  if (provisioning !== undefined) return provisioning
  if (world.parts.startMachineAgent !== undefined) {
    for (const machine of tableValues(model.machines)) {
      if (machine.life !== 'alive' || machine.units.length === 0) continue
      const agent = world.agents.get(machine.id)
      if (agent === undefined) return `machine ${machine.id} has no agent`
      if (agent.state !== 'up') return `the agent of machine ${machine.id} is ${agent.state}`
    }
  }
  const convergence = world.parts.convergence
  if (convergence !== undefined) {
    const problems = convergence(model, world.agentList(), world.scenario.charms, livenessProblemsShown, memo)
    if (problems.length > 0) return problems.slice(0, livenessProblemsShown).join('; ')
  }
  return undefined
}
