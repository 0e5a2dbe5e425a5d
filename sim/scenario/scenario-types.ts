/**
 * The contract of `cantrip sim`: what a scenario file says (after parsing, with units
 * resolved: times in simulated ms), the fault events of a schedule, what one run records
 * for its report, and what it returns. The parser (parse-scenario.ts), the runner
 * (run-scenario.ts on the SystemWorld), the swarm, the shrinker and the report all meet
 * here and nowhere else.
 *
 * A fault schedule is a flat list of independent events: each one can be removed on its
 * own (that is what shrinking does), because the heal phase at `faultsUntilMs` undoes
 * everything still in force — restarts what is down, resumes what is paused, heals the
 * network, clears loss/duplication/delay/drift, disk and provider failures, and lets held
 * hooks finish.
 */
import type { SystemInvariants } from '../system/system-invariants.ts'
import type { SystemWorld } from '../system/system-world.ts'

/** Who a fault hits. `leader` is the controller that leads when the fault fires (none: the fault is skipped and traced). */
export type FaultTarget =
  | 'leader'
  | 'follower'
  | `controller/${number}`
  | `machine/${string}`

/** Partition shapes (DESIGN §8). Controllers are `controller/N`, machine agents `machine/N`. */
export type PartitionShape =
  | { shape: 'isolate', target: FaultTarget }
  | { shape: 'majority-minority', minority: number }
  | { shape: 'split', groups: string[][] }
  | { shape: 'bridge', bridge: FaultTarget }
  | { shape: 'one-way', from: FaultTarget, to: FaultTarget }
  /** Machine agents cut off from every controller (controllers still see each other). */
  | { shape: 'machines-from-controllers', machines: 'all' | string[] }

export type FaultEvent =
  | { at: number, kind: 'crash', target: FaultTarget }
  | { at: number, kind: 'restart', target: FaultTarget }
  | { at: number, kind: 'pause', target: FaultTarget, forMs?: number }
  | { at: number, kind: 'resume', target: FaultTarget }
  | ({ at: number, kind: 'partition', forMs?: number } & PartitionShape)
  | { at: number, kind: 'heal' }
  /** The connection between two running peers drops (both hear it closed; what it carried is lost): SimNetwork.resetConnection. */
  | { at: number, kind: 'reset-connection', from: FaultTarget, to: FaultTarget }
  | { at: number, kind: 'loss', probability: number, forMs?: number }
  | { at: number, kind: 'duplicate', probability: number, forMs?: number }
  | { at: number, kind: 'delay', minMs: number, maxMs: number, forMs?: number }
  | { at: number, kind: 'reorder', probability: number, extraMaxMs: number, forMs?: number }
  | { at: number, kind: 'clock-drift', target: FaultTarget, rate: number }
  /** The next `writes` writes on the target's disk fail (an I/O error). */
  | { at: number, kind: 'disk-error', target: FaultTarget, writes: number }
  /** Every write on the target's disk fails until `forMs` passes (or the heal phase). */
  | { at: number, kind: 'disk-full', target: FaultTarget, forMs?: number }
  /** Cloud steps fail at `rate` (0..1) until `forMs` passes (or the heal phase). */
  | { at: number, kind: 'provider-failure', step: 'allocate' | 'deploy' | 'release' | 'all', rate: number, forMs?: number }
  /** The unit's (or every unit of the application's) next `times` runs of `hook` exit 1. */
  | { at: number, kind: 'hook-fail', unit: string, hook: string, times: number }
  /** The unit's next run of `hook` hangs for `forMs` (until the heal phase when absent). */
  | { at: number, kind: 'hook-hang', unit: string, hook: string, forMs?: number }

export type FaultKind = FaultEvent['kind']

/** How a hook of a scripted charm behaves. Matched by hook name (`install`, `db-relation-changed`), then `*`. */
export interface HookBehaviour {
  /** Simulated duration, fixed or drawn uniformly from [min, max] on the "clock" stream. */
  durationMs?: number | [number, number]
  /** The first `failTimes` runs of this hook on each unit exit 1. */
  failTimes?: number
  /** Each run fails with this probability (drawn on the "faults" stream). */
  failProbability?: number
  /** Workload status the hook sets (status-set), e.g. `active`, `blocked` (with message). */
  status?: { status: 'active' | 'blocked' | 'waiting' | 'maintenance', message?: string }
  /** relation-set in -joined/-changed hooks of this endpoint: keys with their values (`{unit}` is the unit name). */
  relationSet?: Record<string, string>
  /** leader-set when the unit leads. */
  leaderSet?: Record<string, string>
}

export interface ScenarioCharm {
  name: string
  /** A real charm directory (resolved against the scenario file's directory); its metadata gives the endpoints. */
  path?: string
  /** Endpoints when no path is given: endpoint → interface. */
  provides: Record<string, string>
  requires: Record<string, string>
  peers: Record<string, string>
  subordinate: boolean
  /** Hook name or `*` → behaviour. Unlisted hooks succeed at once with no effect, except the default `*`. */
  hooks: Record<string, HookBehaviour>
}

export interface ScenarioApplication {
  name: string
  charm: string
  units: number
  config: Record<string, string | number | boolean>
  /** Placement (Juju's `--to`): the machine of each unit in turn, machines earlier applications created; units beyond it get new machines. */
  to?: string[]
}

/** A command of the workload, at a simulated time. */
export type WorkloadCommand =
  | { at: number, do: 'deploy', application: string, charm: string, units: number, config?: Record<string, string | number | boolean> }
  | { at: number, do: 'add-unit', application: string, units: number }
  | { at: number, do: 'remove-unit', unit: string }
  | { at: number, do: 'remove-application', application: string }
  | { at: number, do: 'config', application: string, config: Record<string, string | number | boolean> }
  | { at: number, do: 'integrate', endpoints: [string, string] }
  | { at: number, do: 'remove-relation', endpoints: [string, string] }
  /** Client writes (config of a dedicated application) at `ratePerS` until `untilMs`, checked for linearizability. */
  | { at: number, do: 'writes', ratePerS: number, untilMs: number }

/** Which random faults a run draws, from the "faults" stream of its seed. */
export interface RandomFaults {
  /** Named mix of fault kinds (see fault-profiles); `mixed` draws one profile per seed. */
  profile: string
  /** Events drawn, spread uniformly over [fromMs, untilMs). */
  events: number
  fromMs: number
  untilMs: number
}

/** Bugs planted on purpose, to show that the simulator finds them. */
export type PlantedBug = 'raft-commit-previous-term'

export interface Scenario {
  name: string
  description: string
  /** Seed when the command line gives none. */
  seed: number
  controllers: number
  provider: {
    nodes: number
    /** Instance starts the provisioner keeps in flight at once (the cloud API's rate); the agent's default when absent. */
    startsInFlight?: number
    latencyMs: { allocate: number, deploy: number, release: number }
    failureRates: { allocate: number, deploy: number, release: number }
  }
  /** Timing of the Raft group (ticks); defaults are the real agent's. */
  raft?: {
    tickMs: number
    electionTicks: number
    heartbeatTicks: number
    /** Bytes of entries per append message (default: the agent's 512 KiB); no command may be larger. */
    maxMessageBytes?: number
    /** Log entries between RaftSnapshots (default 256 in the simulator, so lagging servers get them often; the agent's is 10,000). */
    snapshotEveryEntries?: number
  }
  network: { latencyMs: [number, number] }
  charms: Record<string, ScenarioCharm>
  applications: ScenarioApplication[]
  relations: Array<[string, string]>
  workload: WorkloadCommand[]
  faults: FaultEvent[]
  randomFaults?: RandomFaults
  /** When the heal phase begins (everything undone); default: 2 s after the last fault or command. */
  faultsUntilMs: number
  /** Simulated time the system has after healing to converge. */
  livenessBudgetMs: number
  bugs: PlantedBug[]
}

/** One thing the report draws, at simulated time `t` (ms). */
export type RunEvent =
  | { t: number, kind: 'phase', phase: 'setup' | 'faults' | 'heal' | 'liveness' | 'done' }
  | { t: number, kind: 'agent', agent: string, state: 'up' | 'down' | 'paused' }
  | { t: number, kind: 'term', term: number, leader: string | undefined }
  | { t: number, kind: 'hook', unit: string, machine: string, hook: string, start: number, outcome: 'succeeded' | 'failed' | 'missing' | 'terminated' }
  | { t: number, kind: 'fault', fault: FaultEvent, text: string, skipped?: string }
  | { t: number, kind: 'command', text: string, ok: boolean }
  | { t: number, kind: 'units', active: number, total: number }
  | { t: number, kind: 'violation', check: string, message: string }

export type RunOutcome = 'pass' | 'safety' | 'liveness' | 'crash'

/** Exit codes of `cantrip sim`: one per outcome, so scripts can tell them apart. */
export const simExitCodes: Record<RunOutcome | 'usage', number> = { pass: 0, safety: 1, liveness: 2, crash: 3, usage: 64 }

export interface RunResult {
  scenario: string
  seed: number
  /** sha256 prefix of the trace: the same scenario, seed and code give the same hash. */
  hash: string
  outcome: RunOutcome
  /** One line: what failed, when (simulated ms) and why. */
  failure?: string
  simulatedMs: number
  wallMs: number
  /** The concrete schedule the run used: the scenario's faults plus the drawn ones, in time order. */
  faults: FaultEvent[]
  /** When the system converged after the heal (simulated ms), if it did. */
  convergedAtMs?: number
  counts: {
    controllers: number
    machines: number
    units: number
    hooks: number
    hookFailures: number
    leaderTerms: number
    commands: number
    invariantChecks: number
  }
  /** The one command that replays this run. */
  replay: string
}

export interface RunOptions {
  seed: number
  /** Keep RunEvents for the report (off in swarms: only the result is kept). */
  recordEvents?: boolean
  /** Where the scenario came from, for the replay command. */
  scenarioPath?: string
  /** Tests: called once the world and its invariants exist, before the clock first runs, to look at them (the status-truth check's counts, say). */
  observe?: (world: SystemWorld, invariants: SystemInvariants) => void
}

export interface RunRecord {
  result: RunResult
  events: RunEvent[]
}
