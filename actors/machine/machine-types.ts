import type { MachineId } from '../../runtime/ids.ts'

/**
 * Types of the machine actor: what the host passes in (input, events), what it keeps
 * (context) and what its injected side effects take and return.
 *
 * Time reaches the machine only as data: the host stamps the events it sends with its
 * clock reading (`at`, milliseconds on the same clock it gave to `createActor`), and
 * the machine keeps absolute deadlines in context. The machine never reads a clock.
 */

/** Juju constraints as key/value pairs (`{ mem: '4G', cores: '2' }`); passed to the provider unread. */
export type MachineConstraints = Readonly<Record<string, string>>

/**
 * What the new instance needs to become a machine agent (agent config, one-time
 * secret). Opaque to the machine actor, which only hands it to `startInstance`.
 */
export type BootstrapData = Uint8Array

/** The part of Juju's life cycle the model sees. */
export type MachineLife = 'alive' | 'dying' | 'dead'

/**
 * What the machine knows of its instance:
 * `none` (nothing started, or a failed start the provider cleaned up), `allocated` (the
 * provider reported an instance id while the start is still in flight), `running`
 * (startInstance returned it), `stopped` (stopInstance succeeded), `abandoned`
 * (force-destroyed after stop attempts ran out: it may still be running).
 */
export type InstanceState = 'none' | 'allocated' | 'running' | 'stopped' | 'abandoned'

/** Timeouts and retry bounds, kept in context so a restored actor re-arms with the same policy. */
export interface MachinePolicy {
  /** The agent shows `down` when not heard from for this long. */
  readonly agentDownAfterMs: number
  /** startInstance calls per round before the machine stays in provisioning error. */
  readonly provisioningAttemptsMax: number
  /** stopInstance calls before a dying machine stays in error (or, if forced, gives up). */
  readonly stopAttemptsMax: number
  /** First back-off delay; later ones double up to the maximum. */
  readonly retryDelayMsMin: number
  readonly retryDelayMsMax: number
  /** Each delay is scaled by a factor drawn uniformly from [1 - f, 1 + f], then kept within [min, max]. */
  readonly retryJitterFraction: number
}

/** An instance the provider has started. */
export interface StartedInstance {
  readonly instanceId: string
  readonly addresses: readonly string[]
}

export interface MachineInput {
  readonly machineId: MachineId
  /** The host's clock reading when it created the actor. */
  readonly now: number
  readonly constraints?: MachineConstraints
  readonly bootstrapData?: BootstrapData
  /** Seeds the jitter PRNG; defaults to a hash of the machine id so each machine differs but replays identically. */
  readonly seed?: number
  /** Units already assigned to this machine. */
  readonly unitCount?: number
  /**
   * An instance that exists already (the bootstrap machine, a manually added host):
   * the machine skips provisioning and waits for its agent.
   */
  readonly instance?: StartedInstance
  /** Overrides of the defaults from runtime/limits.ts (the simulator shortens timeouts). */
  readonly policy?: Partial<MachinePolicy>
}

export interface MachineFailure {
  readonly operation: 'startInstance' | 'stopInstance'
  /** The provider's error message, e.g. `quota exceeded`. */
  readonly reason: string
  /** Which attempt of its round failed (1-based). */
  readonly attempt: number
}

/** Plain data only (msgpackr-serialisable); absent values are `null` so they survive persistence. */
export interface MachineContext {
  readonly machineId: MachineId
  readonly constraints: MachineConstraints
  readonly bootstrapData: BootstrapData | null
  readonly policy: MachinePolicy

  readonly life: MachineLife
  /** `machine.forceDestroy` was asked for: do not wait for units, give up on a stuck stop. */
  readonly force: boolean
  readonly unitCount: number

  readonly instanceState: InstanceState
  readonly instanceId: string | null
  readonly addresses: readonly string[]
  /** The provider's latest progress message while provisioning (`instance.deploying`). */
  readonly progressMessage: string | null

  /** startInstance calls made in the current round (reset by `machine.retryProvisioning`). */
  readonly startAttempt: number
  /** stopInstance calls made in the current round (reset by `machine.retryStop`). */
  readonly stopAttempt: number
  /** The delay of the current back-off wait. */
  readonly retryDelayMs: number
  /** State of the jitter PRNG (runtime/random.ts `nextUnit`), so draws replay from a snapshot. */
  readonly rngState: number
  /** The last start or stop failure; kept after later successes as history. */
  readonly lastFailure: MachineFailure | null

  /** When the machine agent first reported in (`agent.started`). */
  readonly agentReportedAt: number | null
  readonly agentLastHeardAt: number | null
  /** Absolute deadline: the agent shows `down` if not heard from by then. */
  readonly agentDownAt: number | null

  /** The latest host clock reading the machine has seen (from stamped events and fired deadlines). */
  readonly observedAt: number
  /** When the lifecycle region last changed state, if the event that changed it carried a time. */
  readonly lifecycleSince: number | null
  /** When the agent region last changed state (reported, went down, stopped, came back). */
  readonly agentSince: number | null
}

/** Fields every host event may carry: the host's clock reading when it delivered the event. */
interface Stamped { readonly at?: number }

/**
 * Facts are past tense, requests imperative. The agent events and `machine.resumed`
 * must carry `at`, because the down deadline is computed from them.
 */
export type MachineEvent =
  /** The provisioner asks for an instance (optionally with fresh bootstrap data). */
  | Stamped & { readonly type: 'machine.provision', readonly bootstrapData?: BootstrapData }
  /** Provider progress while startInstance runs (MAAS ALLOCATED / DEPLOYING). */
  | Stamped & { readonly type: 'instance.allocated', readonly instanceId?: string }
  | Stamped & { readonly type: 'instance.deploying', readonly message?: string }
  /** The machine agent reported in, sent a heartbeat, or said it is shutting down. */
  | { readonly type: 'agent.started', readonly at: number }
  | { readonly type: 'agent.heartbeat', readonly at: number }
  | { readonly type: 'agent.stopped', readonly at: number }
  /** The number of units assigned to this machine changed. */
  | Stamped & { readonly type: 'machine.unitsChanged', readonly count: number }
  | Stamped & { readonly type: 'machine.destroy' }
  | Stamped & { readonly type: 'machine.forceDestroy' }
  | Stamped & { readonly type: 'machine.retryProvisioning', readonly bootstrapData?: BootstrapData }
  | Stamped & { readonly type: 'machine.retryStop' }
  /** The controller removed the dead machine from the model. */
  | Stamped & { readonly type: 'machine.removed' }
  /** Sent by the host right after restoring a persisted snapshot: re-arms timers. */
  | { readonly type: 'machine.resumed', readonly at: number }

export interface StartInstanceInput {
  readonly machineId: MachineId
  readonly constraints: MachineConstraints
  readonly bootstrapData: BootstrapData | null
  /** 1-based attempt within the current round, e.g. for rotating availability zones. */
  readonly attempt: number
}

export type StartInstanceOutput = StartedInstance

export interface StopInstanceInput {
  readonly machineId: MachineId
  readonly instanceId: string
  readonly attempt: number
}
