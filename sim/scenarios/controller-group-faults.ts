/**
 * The controller group under the simulator's whole fault vocabulary, one seed at a time.
 *
 * 3 or 5 controllers (ModelReplica: Raft host, model, controller actor with singular
 * workers) serve clients that write and linearizably read keys of one application's
 * config through any controller, while the fault schedule crashes controllers (losing
 * unsynced writes), pauses them, partitions the network every way (random split,
 * majority/minority, isolated leader, bridge, one-way cut), resets connections, sets loss,
 * duplication and reordering, lets clocks drift, changes the membership (adds an empty server and
 * removes voters, the leader included) and compacts logs often enough that lagging
 * servers are sent RaftSnapshots. RaftSafetyChecker runs after every step and on every
 * message sent.
 *
 * Then everything heals and the liveness phase must, within a budget: elect a leader,
 * commit a fresh command through it, apply it on every voter, and settle the singular
 * workers on that leader. Finally every acknowledged command must be in the applied log
 * at its index, and the clients' history must be linearizable (sim/linearizability).
 */
import type { ModelReplica } from '../../actors/controller/model-replica.ts'
import type { ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { tableGet } from '../../runtime/model/table.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'
import type { Random } from '../../runtime/random.ts'
import { SimControllerGroup } from '../sim-controller-group.ts'
import { RaftSafetyChecker } from '../invariants/raft-safety.ts'
import { checkLinearizable } from '../linearizability/check.ts'
import { HistoryRecorder } from '../linearizability/history.ts'
import { kvModel, type KvInput, type KvOutput } from '../linearizability/model.ts'
import type { PlantedBug } from '../scenario/scenario-types.ts'
import { Simulation } from '../simulation.ts'

export interface ControllerScenarioOptions {
  seed: number
  /** Founding controllers; drawn (3 or 5) when absent. */
  size?: number
  /** Simulated time during which faults are injected. */
  faultPhaseMs?: number
  /** Simulated time the liveness phase may take after healing. */
  livenessBudgetMs?: number
  /** Test hook: clients read a controller's applied model directly instead of through ReadIndex. */
  staleReads?: boolean
  keepTrace?: boolean
  /** A bug planted in the controllers' Raft core, to measure how fast the swarm finds it. */
  plantedBug?: PlantedBug
  /** Raft's bytes per append message (default: the agent's); small values make catch-up span several messages. */
  maxSizePerMessage?: number
}

export interface ControllerScenarioResult {
  seed: number
  size: number
  hash: string
  failure: string | undefined
  kind: 'safety' | 'liveness' | 'linearizability' | 'crash' | undefined
  simulatedMs: number
  /** Fault events injected, by kind. */
  faults: Record<string, number>
  /** Client operations recorded, and how many were acknowledged. */
  operations: number
  acknowledged: number
  /** RaftSnapshots installed on lagging servers (model replaced from the leader's). */
  snapshotsInstalled: number
  /** The highest term any controller reached. */
  maxTerm: number
  membershipChanges: number
  /** Singular-worker starts over the run. */
  singularStarts: number
  checks: number
  linearizable: 'yes' | 'unknown'
}

const application = 'kv'
const keys = ['k0', 'k1', 'k2'] as const
const admin = { kind: 'user', name: 'admin' } as const
const faultPhaseMsDefault = 2_500
const livenessBudgetMsDefault = 15_000
const clientsCount = 3
const seatsMax = 7
const membershipChangesMax = 3

export async function runControllerGroupFaults (options: ControllerScenarioOptions): Promise<ControllerScenarioResult> {
  const sim = new Simulation({
    seed: options.seed,
    keepTrace: options.keepTrace ?? false,
    replay: `CANTRIP_SEED=${options.seed} node --import tsx test/sim-controller-group.test.ts`
  })
  const faults = sim.random('faults')
  const resets = sim.random('resets')
  const workload = sim.random('workload')
  const size = options.size ?? (faults.next() < 0.5 ? 3 : 5)
  let checker: RaftSafetyChecker | undefined
  let firstViolation: string | undefined
  let singularStarts = 0
  const group = await SimControllerGroup.create(sim, {
    size,
    tickMs: 10,
    electionTicks: 10,
    heartbeatTicks: 2,
    latency: { kind: 'uniform', minMs: 1, maxMs: 8 },
    clockDriftMax: 0.01,
    snapshotEveryEntries: faults.int(4, 24),
    leaseDurationMs: 2_500,
    ...(options.plantedBug === undefined ? {} : { plantedBug: options.plantedBug }),
    singularWorkers: controller => {
      singularStarts++
      sim.trace(`singular workers start on ${controller}`)
      return { stop: () => { sim.trace(`singular workers stop on ${controller}`) } }
    },
    hostOptions: id => ({
      proposeTimeoutMs: 600,
      readTimeoutMs: 400,
      ...(options.maxSizePerMessage === undefined ? {} : { maxSizePerMessage: options.maxSizePerMessage }),
      onApplied: entry => { checker?.onApplied(id, entry) }
    }),
    onRaftSend: (from, messages) => { checker?.onRaftSend(from, messages) },
    onStep: () => {
      if (checker === undefined || firstViolation !== undefined) return
      checker.step()
      if (checker.violations.length > 0) firstViolation = `at ${sim.clock.now()} ms: ${checker.violations[0]!}`
    }
  })
  checker = new RaftSafetyChecker(group)
  const counts: Record<string, number> = {}
  const history = new HistoryRecorder<KvInput, KvOutput>()
  const stats = { acknowledged: 0, snapshotsInstalled: 0, membershipChanges: 0 }
  const snapshotSeen = new Map<NodeId, number>()
  const result = (failure: string | undefined, kind: ControllerScenarioResult['kind'], linearizable: 'yes' | 'unknown' = 'yes'): ControllerScenarioResult => ({
    seed: options.seed,
    size,
    hash: sim.traceHash(),
    failure: failure === undefined || kind === undefined ? undefined : sim.failure(kind === 'linearizability' ? 'safety' : kind, failure),
    kind,
    simulatedMs: sim.clock.now(),
    faults: counts,
    operations: history.size,
    acknowledged: stats.acknowledged,
    snapshotsInstalled: stats.snapshotsInstalled,
    maxTerm: countMaxTerm(group),
    membershipChanges: stats.membershipChanges,
    singularStarts,
    checks: checker!.checks,
    linearizable
  })

  let clientsRunning = true
  const clientLoops: Array<Promise<void>> = []
  try {
    // Setup: an application whose config the clients use as a key-value store.
    if (!await group.runUntil(() => group.leader() !== undefined, 3_000)) return result('no leader elected at startup', 'liveness')
    for (const command of setupCommands()) {
      const outcome = await drive(group, group.leaderNode()!.submit(command), 5_000)
      if (outcome === undefined || !outcome.ok) return result(`setup command ${command.type} failed: ${outcome === undefined ? 'no answer' : outcome.error}`, 'liveness')
    }

    for (let c = 0; c < clientsCount; c++) {
      clientLoops.push(runClient(`client${c}`, group, sim, workload, history, checker, stats, () => clientsRunning, options.staleReads === true))
    }

    // Fault phase.
    const faultUntil = sim.clock.now() + (options.faultPhaseMs ?? faultPhaseMsDefault)
    while (sim.clock.now() < faultUntil && firstViolation === undefined) {
      const action = await injectFault(group, faults, resets, stats)
      counts[action.split(' ')[0]!] = (counts[action.split(' ')[0]!] ?? 0) + 1
      sim.trace(`fault: ${action}`)
      await group.runFor(faults.int(20, 250))
      countSnapshotInstalls(group, snapshotSeen, stats)
    }
    if (firstViolation !== undefined) return result(firstViolation, 'safety')

    // Heal, then liveness.
    sim.trace('heal')
    group.network.resetFaults()
    for (let i = 0; i < group.ids.length; i++) {
      group.resume(i)
      if (!group.isUp(i)) await group.restart(i)
    }
    clientsRunning = false
    const budgetMs = options.livenessBudgetMs ?? livenessBudgetMsDefault
    const deadline = sim.clock.now() + budgetMs
    const live = await liveness(group, deadline)
    countSnapshotInstalls(group, snapshotSeen, stats)
    if (firstViolation !== undefined) return result(firstViolation, 'safety')
    if (live !== undefined) return result(`within ${budgetMs} ms of healing: ${live}`, 'liveness')
    // Let the clients' last operations finish (each is bounded by its attempts).
    await group.runUntil(() => history.openCount === 0, 10_000)
    if (history.openCount > 0) return result(`${history.openCount} client operations still open after healing`, 'liveness')
    await Promise.all(clientLoops)

    // The clients' last commands may still be applying on some voters.
    const leader = group.leaderNode()
    if (leader === undefined) return result('no leader after the clients finished', 'liveness')
    const voters = (): readonly NodeId[] => leader.host.appliedConfig().voters
    const appliedOn = (id: NodeId): number => group.host(group.indexOf(id))?.state().revision ?? 0
    await group.runUntil(() => voters().every(id => appliedOn(id) >= leader.host.status().commit), 5_000)
    const appliedEverywhere = Math.min(...voters().map(appliedOn))
    checker.checkAcknowledged(appliedEverywhere)
    if (checker.violations.length > 0) return result(checker.violations[0]!, 'safety')

    const verdict = checkLinearizable(kvModel, history.history())
    if (verdict.ok === false) return result(`client history is not linearizable: ${verdict.explanation}`, 'linearizability')
    return result(undefined, undefined, verdict.ok === true ? 'yes' : 'unknown')
  } catch (error) {
    return result(error instanceof Error ? error.stack ?? error.message : String(error), 'crash')
  } finally {
    clientsRunning = false
    await group.stop()
  }
}

// ---------------------------------------------------------------------------------
// Workload

function setupCommands (): ModelCommand[] {
  const config = Object.fromEntries(keys.map(key => [key, { type: 'string' as const, default: null }]))
  return [
    { type: 'add-charm', requestId: 'setup-charm', proposer: admin, url: 'local:kv-0', hash: 'ab'.repeat(8), metadata: { name: 'kv', config } },
    { type: 'deploy', requestId: 'setup-deploy', proposer: admin, application, charm: 'local:kv-0', config: {}, constraints: {}, numUnits: 0 }
  ]
}

function readKey (model: ModelContext, key: string): string | undefined {
  const value = tableGet(model.applications, application)?.config[key]
  return typeof value === 'string' ? value : undefined
}

/**
 * One client: puts and linearizable gets through a random running controller, with a
 * think time between them, recorded in the history. A put the client was not told the
 * outcome of stays pending for good (it may apply later); a failed get is dropped (it
 * had no effect).
 */
async function runClient (
  client: string, group: SimControllerGroup, sim: Simulation, random: Random,
  history: HistoryRecorder<KvInput, KvOutput>, checker: RaftSafetyChecker,
  stats: { acknowledged: number }, running: () => boolean, staleReads: boolean
): Promise<void> {
  for (let n = 0; running(); n++) {
    await sleep(sim, random.int(5, 60))
    if (!running()) return
    const nodes = group.nodes()
    if (nodes.length === 0) continue
    const node = nodes[random.int(0, nodes.length - 1)]!
    const key = keys[random.int(0, keys.length - 1)]!
    if (random.next() < 0.5) {
      const value = `${client}.${n}`
      const id = history.invoke(client, { op: 'put', key, value }, sim.clock.now())
      const command: ModelCommand = {
        type: 'set-config', requestId: `${client}/${n}`, proposer: admin, application, config: { [key]: value }
      }
      try {
        const outcome = await node.submit(command)
        if (!outcome.ok) {
          // Refused when applied: it changed nothing. (It should not happen here at all.)
          history.discard(id)
          sim.trace(`${client}: put refused: ${outcome.error}`)
          continue
        }
        history.complete(id, { op: 'put' }, sim.clock.now())
        checker.onAcknowledged(command.requestId, outcome)
        stats.acknowledged++
      } catch {
        history.abandon(id)
      }
    } else {
      const id = history.invoke(client, { op: 'get', key }, sim.clock.now())
      try {
        const model = staleReads ? node.host.state() : await node.read()
        history.complete(id, { op: 'get', value: readKey(model, key) }, sim.clock.now())
      } catch {
        history.discard(id)
      }
    }
  }
}

// ---------------------------------------------------------------------------------
// Faults

async function injectFault (group: SimControllerGroup, random: Random, resets: Random, stats: { membershipChanges: number }): Promise<string> {
  const n = group.ids.length
  const i = random.int(0, n - 1)
  const id = group.ids[i]!
  const leader = group.leader()
  const leaderIndex = leader === undefined ? -1 : group.indexOf(leader.id)
  const roll = random.int(1, 100)
  if (roll <= 12) {
    group.crash(i)
    return `crash ${id}`
  }
  if (roll <= 24) {
    const down = group.ids.map((_, j) => j).filter(j => !group.isUp(j))
    if (down.length === 0) return 'restart none'
    const j = down[random.int(0, down.length - 1)]!
    await group.restart(j)
    return `restart ${group.ids[j]!}`
  }
  if (roll <= 30) {
    group.pause(i)
    return `pause ${id}`
  }
  if (roll <= 36) {
    for (let j = 0; j < n; j++) group.resume(j)
    return 'resume all'
  }
  if (roll <= 44) {
    const left = group.ids.filter(() => random.next() < 0.5)
    group.partition([left, group.ids.filter(x => !left.includes(x))])
    return `partition ${left.join(',')} | rest`
  }
  if (roll <= 50) {
    const minority = random.int(1, Math.ceil(n / 2) - 1)
    group.network.majorityMinority(group.ids, minority)
    return `majority-minority ${minority}`
  }
  if (roll <= 56) {
    if (leaderIndex < 0) return 'isolate-leader none'
    group.isolate(leaderIndex)
    return `isolate-leader ${group.ids[leaderIndex]!}`
  }
  if (roll <= 60 && n >= 3) {
    const others = group.ids.filter(x => x !== id)
    const sideA = others.filter(() => random.next() < 0.5)
    group.network.bridge(sideA, others.filter(x => !sideA.includes(x)), id)
    return `bridge via ${id}`
  }
  if (roll <= 64) {
    const j = random.int(0, n - 1)
    if (j !== i) group.network.cutOneWay(id, group.ids[j]!)
    return `cut-one-way ${id}->${group.ids[j]!}`
  }
  if (roll <= 74) {
    group.heal()
    return 'heal'
  }
  if (roll <= 78) {
    const p = random.int(0, 20) / 100
    group.network.setLoss(p)
    return `loss ${p}`
  }
  if (roll <= 81) {
    const p = random.int(0, 10) / 100
    group.network.setDuplication(p)
    return `duplicate ${p}`
  }
  if (roll <= 84) {
    const p = random.int(0, 30) / 100
    group.network.setReorder(p, random.int(1, 30))
    return `reorder ${p}`
  }
  if (roll <= 92 && stats.membershipChanges < membershipChangesMax && leader !== undefined) {
    return await changeMembership(group, leader.id, random, stats)
  }
  if (roll >= 93 && roll <= 97) {
    // A connection dropped between two live controllers: both hear the close, and what it carried is lost.
    // Its peer comes from a stream of its own, so the other faults' draws stay as they were.
    const j = resets.int(0, n - 1)
    if (j !== i) group.network.resetConnection(id, group.ids[j]!)
    return `reset-connection ${id}<->${group.ids[j]!}`
  }
  return 'quiet'
}

async function changeMembership (group: SimControllerGroup, leaderId: NodeId, random: Random, stats: { membershipChanges: number }): Promise<string> {
  const leaderNode = group.node(group.indexOf(leaderId))!
  const voters = leaderNode.host.status().config.voters
  const outsiders = group.ids.filter(id => !voters.includes(id) && group.isUp(group.indexOf(id)))
  const add = voters.length < 5 && (voters.length <= 3 || random.next() < 0.5)
  let target: NodeId
  if (add) {
    if (outsiders.length > 0) target = outsiders[random.int(0, outsiders.length - 1)]!
    else if (group.ids.length < seatsMax) target = group.ids[await group.addController()]!
    else return 'membership none'
  } else {
    target = voters[random.int(0, voters.length - 1)]!
  }
  stats.membershipChanges++
  const change = { type: add ? 'add-voter' : 'remove-voter', node: target } as const
  // The outcome shows in the log; refusals (another change pending, leader not ready) are normal.
  leaderNode.host.changeMembership(change).catch(() => {})
  return `${change.type} ${target}`
}

// ---------------------------------------------------------------------------------
// Liveness

/** Undefined once the healed group works; otherwise what is still wrong at the deadline. */
async function liveness (group: SimControllerGroup, deadline: number): Promise<string | undefined> {
  let problem = 'no leader'
  let marker = 0
  while (group.sim.clock.now() < deadline) {
    await group.runFor(50)
    const leader = group.leaderNode()
    if (leader === undefined) { problem = 'no leader'; continue }
    const voters = leader.host.appliedConfig().voters
    const down = voters.filter(id => !group.isUp(group.indexOf(id)))
    if (down.length > 0) { problem = `voters down: ${down.join(', ')}`; continue }
    const command: ModelCommand = { type: 'expose', requestId: `liveness/${++marker}`, proposer: admin, application }
    const outcome = await drive(group, leader.submit(command), Math.max(0, deadline - group.sim.clock.now()))
    if (outcome === undefined || !outcome.ok) { problem = `a fresh command did not commit (${outcome === undefined ? 'no answer' : outcome.error})`; continue }
    // The membership as of now: a removal may have applied since the loop began.
    const current = (): readonly NodeId[] => leader.host.appliedConfig().voters
    const applied = await group.runUntil(() => current().every(id => (group.host(group.indexOf(id))?.state().revision ?? 0) >= outcome.index),
      Math.max(0, deadline - group.sim.clock.now()))
    if (!applied) { problem = `command at ${outcome.index} not applied on every voter: ${describeVoters(group, current())}`; continue }
    const settled = await group.runUntil(() => singularOnlyOn(group, leader), Math.max(0, deadline - group.sim.clock.now()))
    if (!settled) { problem = `singular workers not settled on the leader ${leader.id}`; continue }
    return undefined
  }
  return problem
}

function describeVoters (group: SimControllerGroup, voters: readonly NodeId[]): string {
  return voters.map(id => {
    const host = group.host(group.indexOf(id))
    if (host === undefined) return `${id} down`
    const status = host.status()
    return `${id} ${status.role} term ${status.term} applied ${host.state().revision} commit ${status.commit} last ${status.lastIndex} config ${status.config.voters.join(',')} applied-config ${host.appliedConfig().voters.join(',')} lead ${status.leader} progress ${JSON.stringify(status.progress)}`
  }).join('; ')
}

function singularOnlyOn (group: SimControllerGroup, leader: ModelReplica): boolean {
  return !leader.stopped && group.nodes().every(node => node.runsSingularWorkers() === (node === leader))
}

// ---------------------------------------------------------------------------------

/** Runs the group until `promise` settles or `ms` pass; undefined if it did not resolve. */
async function drive<T> (group: SimControllerGroup, promise: Promise<T>, ms: number): Promise<T | undefined> {
  let outcome: { value: T } | undefined
  let failed = false
  promise.then(value => { outcome = { value } }, () => { failed = true })
  await group.runUntil(() => outcome !== undefined || failed, ms, 5)
  return outcome?.value
}

async function sleep (sim: Simulation, ms: number): Promise<void> {
  await new Promise<void>(resolve => { sim.clock.setTimeout(resolve, ms) })
}

function countSnapshotInstalls (group: SimControllerGroup, seen: Map<NodeId, number>, stats: { snapshotsInstalled: number }): void {
  for (const node of group.nodes()) {
    const received = node.host.snapshotsReceived
    const before = seen.get(node.id) ?? 0
    if (received > before) stats.snapshotsInstalled += received - before
    seen.set(node.id, received)
  }
}

function countMaxTerm (group: SimControllerGroup): number {
  let max = 0
  for (const node of group.nodes()) max = Math.max(max, node.host.term)
  return max
}
