/**
 * A provider that fails on purpose, around any other: the first `n` calls of each step
 * fail with the ProviderError a real cloud would give, then calls pass through. Steps:
 * `list` (allInstances: a flaky API), `allocate` (a start refused before anything
 * exists: quota), `deploy` (the instance was made but its deployment failed: it is
 * released and the start rejects, as MAAS's FAILED_DEPLOYMENT), `stop` (stopInstances
 * refused). Used by tests and by `cantripd --provider-config` to show that every step's
 * failure is retried and explained in status.
 */
import { ProviderError, type InstanceInfo, type InstanceSpec, type Provider, type StartProgress, type StartedInstance } from './provider-contract.ts'

export type FaultStep = 'list' | 'allocate' | 'deploy' | 'stop'
export const faultSteps: readonly FaultStep[] = ['list', 'allocate', 'deploy', 'stop']

export class FaultInjectingProvider implements Provider {
  readonly #inner: Provider
  readonly #remaining: Map<FaultStep, number>
  /** Failures injected so far, by step. */
  readonly injected: Record<FaultStep, number> = { list: 0, allocate: 0, deploy: 0, stop: 0 }

  constructor (inner: Provider, failures: Partial<Record<FaultStep, number>>) {
    this.#inner = inner
    this.#remaining = new Map(faultSteps.map(step => [step, failures[step] ?? 0]))
  }

  get name (): string {
    return this.#inner.name
  }

  async startInstance (spec: InstanceSpec, onProgress?: (progress: StartProgress) => void): Promise<StartedInstance> {
    if (this.#take('allocate')) throw new ProviderError(this.name, 'quota', `injected: no instance quota left for machine ${spec.machineId}`)
    const started = await this.#inner.startInstance(spec, onProgress)
    if (this.#take('deploy')) {
      await this.#inner.stopInstances([started.instanceId])
      throw new ProviderError(this.name, 'deployment-failed', `injected: the deployment of ${started.instanceId} failed; released`)
    }
    return started
  }

  async stopInstances (instanceIds: readonly string[]): Promise<void> {
    if (instanceIds.length > 0 && this.#take('stop')) throw new ProviderError(this.name, 'transient', `injected: cannot stop ${instanceIds.join(', ')} now`)
    await this.#inner.stopInstances(instanceIds)
  }

  async allInstances (): Promise<InstanceInfo[]> {
    if (this.#take('list')) throw new ProviderError(this.name, 'transient', 'injected: the instance list is unavailable')
    return await this.#inner.allInstances()
  }

  #take (step: FaultStep): boolean {
    const left = this.#remaining.get(step) ?? 0
    if (left <= 0) return false
    this.#remaining.set(step, left - 1)
    this.injected[step]++
    return true
  }
}
