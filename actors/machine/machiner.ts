/**
 * The machiner of a machine agent (Juju's worker of the same name): it reports the
 * machine agent `started` once the agent runs, and when the model makes its machine
 * dying and the last unit has left it, it marks the machine dead (`machine-dead`) so the
 * provisioner can stop the instance, and ends — the agent then stops, its job done.
 *
 * The instance life cycle itself (provisioning, back-off, stopping instances) is the
 * machine statechart's (machine-machine.ts), run by the provisioner on the controller
 * leader with this agent's presence as its `agent.*` events; the agent side only says
 * what the agent itself knows.
 *
 * A Worker for runtime/supervisor.ts: a failed command rejects `done` (and the supervisor
 * restarts the machiner after its back-off); a refusal of who this agent is
 * (`PermissionDeniedError`) is fatal, since no restart can change the agent's identity.
 */
import type { ModelLink } from '../../runtime/model/model-link.ts'
import type { CommandResult } from '../../runtime/model/model-types.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import { CommandProposer, type ModelCommandBody } from '../../runtime/model/command-proposer.ts'
import { FatalError, type Worker } from '../../runtime/supervisor.ts'

const component = 'machiner'

export type MachinerController = ModelLink

export interface MachinerOptions {
  machineId: string
  controller: MachinerController
  /** Makes request ids unique across restarts of the agent (e.g. the presence incarnation). */
  incarnation: number
  /**
   * The agent is also a controller (cantripd --role both): its report says so, and the model
   * then keeps the machine when its last unit is removed (Juju keeps a JobManageModel machine).
   */
  hostsController?: boolean
}

/** How the machiner ended by itself: the machine is dead, or no longer in the model. */
export type MachinerOutcome = 'dead' | 'removed'

export class Machiner implements Worker {
  readonly done: Promise<void>
  /** Set once `done` resolved by itself. */
  outcome: MachinerOutcome | undefined
  readonly #o: MachinerOptions
  readonly #proposer: CommandProposer
  #unsubscribe: (() => void) | undefined
  #seen = false
  #markingDead = false
  #ended = false
  #resolve!: () => void
  #reject!: (error: unknown) => void

  constructor (options: MachinerOptions) {
    this.#o = options
    this.#proposer = new CommandProposer({
      proposer: { kind: 'machine', id: options.machineId },
      requestPrefix: `machine-${options.machineId}/${options.incarnation}`
    })
    this.done = new Promise<void>((resolve, reject) => { this.#resolve = resolve; this.#reject = reject })
  }

  /** Reports the agent started, then follows the machine's life. */
  static start (options: MachinerOptions): Machiner {
    const machiner = new Machiner(options)
    machiner.#begin()
    return machiner
  }

  async stop (): Promise<void> {
    if (this.#ended) return
    this.#end()
    this.#resolve()
  }

  #begin (): void {
    this.#unsubscribe = this.#o.controller.onChange(() => { this.#check() })
    this.#check()
  }

  #check (): void {
    if (this.#ended) return
    const machine = readerOf(this.#o.controller.model()).machine(this.#o.machineId)
    if (machine === undefined) {
      // Gone after we saw it: removed from the model (by us or by a forced removal).
      if (this.#seen) this.#finish(this.outcome ?? 'removed')
      return
    }
    if (!this.#seen) {
      // An agent may start before its machine is in the model (role both, or a fast
      // provider): it reports in once the machine appears.
      this.#seen = true
      void this.#command({
        type: 'set-machine-status', machine: this.#o.machineId, agentStatus: 'started', message: '', now: Math.floor(this.#o.controller.now()),
        ...(this.#o.hostsController === true ? { controller: true as const } : {})
      })
        .catch(error => { this.#fail(error) })
    }
    if (machine.life === 'alive' || machine.units.length > 0 || this.#markingDead) return
    this.#markingDead = true
    void this.#command({ type: 'machine-dead', machine: this.#o.machineId })
      .then(() => { this.outcome = 'dead'; this.#finish('dead') }, error => { this.#fail(error) })
  }

  async #command (body: ModelCommandBody): Promise<void> {
    const command = this.#proposer.command(body)
    let result: CommandResult
    try {
      result = await this.#o.controller.submit(command)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      if (message.includes('permission denied')) throw new FatalError(`${component} of machine ${this.#o.machineId}: the controllers refuse this agent: ${message}`)
      throw error
    }
    if (!result.ok) throw new Error(`${component} of machine ${this.#o.machineId}: ${body.type} refused: ${result.error}`)
  }

  #finish (outcome: MachinerOutcome): void {
    if (this.#ended) return
    this.outcome = outcome
    this.#end()
    this.#resolve()
  }

  #fail (error: unknown): void {
    if (this.#ended) return
    this.#end()
    this.#reject(error)
  }

  #end (): void {
    this.#ended = true
    this.#unsubscribe?.()
  }
}
