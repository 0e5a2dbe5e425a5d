/**
 * The seam between the whole-system world (system-world.ts: controllers, provisioner,
 * cloud, faults) and the simulated machine agents it boots on deployed instances
 * (sim-machine-agent.ts: the shipped machine agent, with hooks scripted per charm). Both sides of `cantrip sim` meet here.
 */
import type { LocalState } from '../../actors/unit/local-state.ts'
import type { UnitEmitted } from '../../actors/unit/unit-effects.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'
import type { ScenarioCharm } from '../scenario/scenario-types.ts'
import type { Transport } from '../../runtime/transport.ts'
import type { SimStorage } from '../sim-storage.ts'
import type { Simulation } from '../simulation.ts'

/** Hook faults injected by the schedule, consulted by every hook run (shared by all agents). */
export interface HookFaultBook {
  /** The next `times` runs of `hook` on `unit` (or on every unit of an application, when `unit` has no `/`) exit 1. */
  fail (unit: string, hook: string, times: number): void
  /** The next run of `hook` on `unit` hangs until simulated time `untilMs` (or until `releaseAll`). */
  hang (unit: string, hook: string, untilMs: number | undefined): void
  /** The heal phase: no more injected failures; hung hooks finish (succeed) now. */
  releaseAll (): void
  /** Called by a hook run as it starts: what the schedule wants of it, consuming one use. */
  take (unit: string, hook: string): { kind: 'fail' } | { kind: 'hang', untilMs: number | undefined } | undefined
  /** Registers a hung hook's finisher, called by `releaseAll` (or when its time comes). */
  onRelease (finish: () => void): () => void
}

export interface HookRunRecord {
  unit: string
  machine: string
  /** `describeHook` form: `db-relation-joined kv/0`. */
  hook: string
  startMs: number
  endMs: number
  outcome: 'succeeded' | 'failed' | 'missing' | 'terminated'
}

/** What a machine agent needs of the simulated network (SimNetwork): its transport, and to drop off it on a crash. */
export interface MachineAgentNetwork {
  transport (peerId: string): Transport
  crash (peerId: string): void
}

export interface SimMachineAgentOptions {
  sim: Simulation
  network: MachineAgentNetwork
  machineId: string
  /** The model the agent belongs to ('default'). */
  model: string
  controllers: readonly NodeId[]
  /** Scripted charms by charm name; a charm URL `local:<name>-<rev>` names its charm. */
  charms: Readonly<Record<string, ScenarioCharm>>
  hookFaults: HookFaultBook
  /** The instance's bootstrap data (runtime/bootstrap-data.ts): machine id, controllers and the one-time registration secret. */
  bootstrap?: Uint8Array
  /** Rate error of this agent's clock (0.001 = 0.1 % fast); 0 when absent. */
  drift?: number
  leaseDurationMs?: number
  /** The agent is also a controller's, as `cantripd --role both` (MachineAgentInit.hostsController). */
  hostsController?: boolean
  onHook?: (run: HookRunRecord) => void
  /** Every event a unit actor emits, for the hook-order checker. */
  onUnitEvent?: (unit: string, event: UnitEmitted) => void
  /**
   * A unit's actor ended without stopping in order — killed with its agent (`crash`), or
   * failed (its state could not be saved) and about to start again — with what its disk
   * kept: the hook-order checker's `crash(unit, durable)`.
   */
  onUnitRestart?: (unit: string, durable: LocalState | undefined) => void
}

export type AgentState = 'up' | 'down' | 'paused'

export interface SimMachineAgentApi {
  readonly machineId: string
  /** Its id on the SimNetwork: `machine-<id>`. */
  readonly peerId: string
  readonly storage: SimStorage
  readonly state: AgentState
  /** The agent's work is over: its machine is dead or gone from the model. */
  readonly finished: boolean
  /** Starts the agent (first boot, or after `crash`: resumes from what its disk kept). */
  start (): Promise<void>
  /** kill -9: actors stop without persisting, unsynced writes are lost, the transport drops. */
  crash (): void
  /** SIGSTOP / SIGCONT: no timers fire, nothing that reaches it is handled until resume. */
  pause (): void
  resume (): void
  setDrift (rate: number): void
  /** Units whose agents run here now. */
  units (): string[]
  unitState (unit: string): { running: boolean, state: string, local: LocalState | undefined } | undefined
  /** Units on this agent that believe they lead their application now (by their own clock). */
  believedLeaders (): string[]
  /** Most hooks that ever ran at once on this machine (must stay 1). */
  readonly maxConcurrentHooks: number
  /** Actor errors seen (an invariant: none). */
  errors (): string[]
  /** Orderly stop at the end of a run. */
  stop (): Promise<void>
}
