/**
 * The provider contract (DESIGN.md §7): what a cloud does for cantrip, knowing nothing of
 * units, charms or relations. It starts an instance from opaque bootstrap data and
 * constraints, stops instances, and lists the instances it holds for this controller.
 *
 * Exactly one instance per machine: every start carries an idempotency `token` (the
 * provisioner records it in the model before the first attempt), and a provider asked
 * again with a token it has seen returns the same instance instead of making another —
 * as EC2's ClientToken or a MAAS allocation by system id do. That is what lets a new
 * controller leader retry a start the old leader may have left in flight without ever
 * making two instances for one machine.
 *
 * Credentials: a provider holds its cloud credentials itself (given to it on the
 * controllers); nothing in this contract carries them, and bootstrap data must not.
 *
 * Implementations sit beside it in providers/ (`local-provider.ts`: detached cantripd
 * processes on this host; `sim-provider.ts`: a seeded MAAS-like cloud;
 * `manual-provider.ts`: existing hosts over ssh), written over the runtime contracts. One
 * compliance suite (`test/compliance/provider-compliance.ts`) runs against each.
 *
 * The provisioner (actors/provisioner) drives a Provider, so actors/ may import this one
 * file of providers/, and only its types (`import type`): the layering test allows that
 * and nothing else of providers/ to actors/.
 */
import type { AgentNetwork } from '../runtime/agent-network.ts'
import { CantripError } from '../runtime/errors.ts'

/** Juju constraints as key/value pairs (`{ mem: '4G', cores: '2' }`). */
export type ProviderConstraints = Readonly<Record<string, string>>

export interface InstanceSpec {
  /** The model's machine id (`3`); providers tag the instance with it. */
  readonly machineId: string
  /** Idempotency key: a second start with the same token answers the first instance. */
  readonly token: string
  /** Opaque to the provider: handed to the instance (runtime/bootstrap-data.ts). */
  readonly bootstrap: Uint8Array
  readonly constraints: ProviderConstraints
  /** Provider-specific placement (`ssh:user@host` for manual; a zone or node name elsewhere). */
  readonly placement?: string
  /** The manual provider's ssh key for this host (`add-machine --private-key`); its own default otherwise. */
  readonly sshKeyFile?: string
  /** Where the machine's agent listens and what it advertises (`add-machine --listen/--advertise`); the provider's default when absent. */
  readonly network?: AgentNetwork
}

/**
 * MAAS-like instance states. `allocated` and `deploying` are progress while a start runs;
 * `running` means the instance is up (its agent may not have reported yet);
 * `failed` a deployment that will not finish; `stopping` and `stopped` the way out.
 */
export type InstanceStatus = 'allocated' | 'deploying' | 'running' | 'failed' | 'stopping' | 'stopped'

export interface InstanceInfo {
  readonly instanceId: string
  readonly machineId: string
  readonly token: string
  readonly status: InstanceStatus
  readonly addresses: readonly string[]
  /** The provider's own words for the status (`deploying: curtin installing`). */
  readonly message: string
}

/** Progress a provider reports while a start runs (the machine statechart's `instance.*` facts). */
export type StartProgress =
  | { readonly type: 'allocated', readonly instanceId: string }
  | { readonly type: 'deploying', readonly message: string }

export interface StartedInstance {
  readonly instanceId: string
  readonly addresses: readonly string[]
}

export interface Provider {
  /** `local`, `sim`, `manual`: shown in status and errors. */
  readonly name: string
  /**
   * Starts (or, for a token seen before, finds) the instance for `spec.machineId` and
   * resolves once it runs. Rejects with a ProviderError; a failed deployment leaves
   * nothing behind that a later start with the same token would trip over.
   */
  startInstance (spec: InstanceSpec, onProgress?: (progress: StartProgress) => void): Promise<StartedInstance>
  /** Stops and releases the instances; ids it does not know (or already stopped) are not an error. */
  stopInstances (instanceIds: readonly string[]): Promise<void>
  /** Every instance this provider holds for this controller that is not yet `stopped`. */
  allInstances (): Promise<InstanceInfo[]>
}

/**
 * Why a provider call failed; the text shows in the machine's status. All but `invalid`
 * are retried with back-off (a quota or a full pool frees up when machines go); `invalid`
 * (constraints or placement the cloud cannot meet) waits for a person.
 */
export type ProviderFailure = 'transient' | 'deployment-failed' | 'quota' | 'no-capacity' | 'invalid'

export class ProviderError extends CantripError {
  override name = 'ProviderError'
  readonly retryable: boolean
  constructor (readonly provider: string, readonly failure: ProviderFailure, detail: string, options?: { cause?: unknown }) {
    super(`provider ${provider}: ${failure}: ${detail}`, options)
    this.retryable = failure !== 'invalid'
  }
}
