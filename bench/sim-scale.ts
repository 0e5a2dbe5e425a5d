import { runScenario } from '../sim/scenario/run-scenario.ts'
import type { RunOptions, Scenario, ScenarioCharm } from '../sim/scenario/scenario-types.ts'
import { limits } from '../runtime/limits.ts'
import { agentRaftTiming } from '../sim/system/system-world.ts'
import { decode } from '../runtime/codec.ts'
import type { Entry } from '../runtime/raft/raft-types.ts'

/**
 * The whole system on the simulator at scale (issue 9): 3 controllers, N machine agents
 * started by the provisioner on the sim cloud, 5 units per agent (five applications of N
 * units, the last four placed on the first one's machines, as `juju deploy --to` does),
 * every unit running install → leader-elected → config-changed → start with hooks of
 * 10–200 ms simulated. Measured from the first command to every unit active/idle:
 * simulated time, wall time, and their ratio, and the Raft entries and commands per agent
 * (what the leader's group commit folds). The goal is 1,000 agents in < 30 s wall (issue 28).
 */
export interface SimScalePoint {
  agents: number
  units: number
  outcome: string
  convergedSimulatedSeconds: number | undefined
  wallSeconds: number
  simToWall: number
  hooks: number
  hooksPerWallSecond: number
  /** The process's peak resident memory so far (getrusage maxrss). */
  peakRssMb: number
  /** CPU the process used (user + system): on a shared machine, what the point cost apart from its share of the cores. */
  cpuSeconds: number
  /** Raft entries the first controller applied, per machine agent (what group commit cuts). */
  entriesPerAgent: number
  /** Model commands those entries carried (an `apply-batch` counts its commands), per agent. */
  commandsPerAgent: number
  /** Commands per entry that carried a command: 1 without any batching. */
  commandsPerEntry: number
}

const applicationsPerAgent = 5
/** Simulated time the deploy may take before the run counts as not converged. */
const convergeBudgetMs = 1_800_000

const trivial: ScenarioCharm = {
  name: 'trivial',
  provides: {},
  requires: {},
  peers: {},
  subordinate: false,
  hooks: { '*': { durationMs: [10, 200] }, start: { status: { status: 'active' } } }
}

/**
 * Five applications per group of at most limits.modelUnitsPerCommandMax machines (one
 * deploy may add no more units): the first deploys onto new machines, the other four are
 * placed on the first one's. Up to 1,000 agents that is the one group app0…app4.
 */
function scaleApplications (agents: number): Scenario['applications'] {
  const perGroup = limits.modelUnitsPerCommandMax
  const groups = Math.ceil(agents / perGroup)
  return Array.from({ length: groups }, (_, g) => {
    const first = g * perGroup
    const machines = Array.from({ length: Math.min(perGroup, agents - first) }, (_, i) => String(first + i))
    return Array.from({ length: applicationsPerAgent }, (_, i) => ({
      name: groups === 1 ? `app${i}` : `app${i}-g${g}`, charm: 'trivial', units: machines.length, config: {}, ...(i === 0 ? {} : { to: machines })
    }))
  }).flatMap(group => group)
}

export function scaleScenario (agents: number): Scenario {
  return {
    name: `scale-${agents}`,
    description: `${agents} machine agents × ${applicationsPerAgent} units, 3 controllers, a plain deploy`,
    seed: 1,
    controllers: 3,
    // A cloud that takes every start at once (the agent's default keeps 8 in flight, which
    // would make the deploy's simulated time, and so the wall time, grow with the agents).
    provider: { nodes: agents + 8, startsInFlight: agents, latencyMs: { allocate: 200, deploy: 3_000, release: 500 }, failureRates: { allocate: 0, deploy: 0, release: 0 } },
    network: { latencyMs: [1, 10] },
    charms: { trivial },
    applications: scaleApplications(agents),
    relations: [],
    workload: [],
    faults: [],
    faultsUntilMs: 0,
    // The agents' own snapshot interval, not the simulator's small default (which is there to
    // exercise compaction): each RaftSnapshot re-encodes the whole model of N × 5 units.
    raft: { ...agentRaftTiming, snapshotEveryEntries: limits.raftSnapshotEveryEntries },
    livenessBudgetMs: convergeBudgetMs,
    bugs: []
  }
}

/**
 * With CANTRIP_SIM_PROGRESS=1, a line on stderr every 30 s of wall time: simulated time,
 * machine agents up, units in the model, and memory (a long point shows how it goes).
 * It only reads the world when an entry applies, so the run and its trace hash are the same.
 */
function progressObserver (counts: EntryCounts): NonNullable<RunOptions['observe']> {
  const progress = process.env['CANTRIP_SIM_PROGRESS'] === '1'
  const started = performance.now()
  let last = started
  return world => {
    // onApplied: the runner sets onStep after observing; the invariants set this one before.
    const onApplied = world.observers.onApplied
    const counted = world.group.ids[0]
    world.observers.onApplied = (id, entry) => {
      onApplied?.(id, entry)
      if (id === counted) countEntry(counts, entry)
      if (!progress) return
      const now = performance.now()
      if (now - last < 30_000) return
      last = now
      const units = world.model()?.units.size ?? 0
      const cpu = process.cpuUsage()
      console.error(`sim-scale: ${Math.round((now - started) / 1000)} s wall, ${((cpu.user + cpu.system) / 1e6).toFixed(0)} CPU-s, simulated ${(world.sim.clock.now() / 1000).toFixed(1)} s, ${world.agents.size} agents, ${units} units, heap ${Math.round(process.memoryUsage().heapUsed / 1e6)} MB, RSS ${Math.round(process.memoryUsage().rss / 1e6)} MB`)
    }
  }
}

interface EntryCounts { entries: number, withCommands: number, commands: number }

/** Counts one applied entry and the model commands it carried (decoded again: the bench's cost, not the run's). */
function countEntry (counts: EntryCounts, entry: Entry): void {
  counts.entries++
  if (entry.type !== 'normal' || entry.data.length === 0) return
  const command = decode(entry.data, 'sim-scale') as { type?: unknown, commands?: unknown }
  counts.withCommands++
  counts.commands += command.type === 'apply-batch' && Array.isArray(command.commands) ? command.commands.length : 1
}

export async function measureSimScale (agents: number): Promise<SimScalePoint> {
  const counts: EntryCounts = { entries: 0, withCommands: 0, commands: 0 }
  const observe = progressObserver(counts)
  const record = await runScenario(scaleScenario(agents), { seed: 1, observe })
  const r = record.result
  const wallSeconds = r.wallMs / 1000
  return {
    agents,
    units: r.counts.units,
    outcome: r.outcome === 'pass' ? 'converged' : `${r.outcome}: ${r.failure ?? ''}`.slice(0, 300),
    convergedSimulatedSeconds: r.convergedAtMs === undefined ? undefined : Number((r.convergedAtMs / 1000).toFixed(1)),
    wallSeconds: Number(wallSeconds.toFixed(1)),
    simToWall: Number((r.simulatedMs / r.wallMs).toFixed(2)),
    hooks: r.counts.hooks,
    hooksPerWallSecond: Math.round(r.counts.hooks / wallSeconds),
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1e3),
    cpuSeconds: Number(((process.cpuUsage().user + process.cpuUsage().system) / 1e6).toFixed(1)),
    entriesPerAgent: Number((counts.entries / agents).toFixed(1)),
    commandsPerAgent: Number((counts.commands / agents).toFixed(1)),
    commandsPerEntry: Number((counts.commands / Math.max(1, counts.withCommands)).toFixed(2))
  }
}

// `node --import tsx bench/sim-scale.ts 10 100`: a quick look without the whole bench.
if (import.meta.url === `file://${process.argv[1]}`) {
  for (const n of process.argv.slice(2).map(Number)) console.log(JSON.stringify(await measureSimScale(n)))
}
