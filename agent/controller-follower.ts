/**
 * A machine agent following the controller group's membership, a round every
 * limits.controllerFollowPeriodMs: it asks the controllers it knows, in turn until one
 * answers, for every voter with its addresses; remembers them in `<data dir>/controllers.json`
 * (known-controllers-file.ts) for its next start; and dials each new one, adding it to the
 * list its machine role asks (shared, so requests reach it at once).
 *
 * A voter the answering controller names without an address (it became a voter before
 * that controller's mesh learned where it listens) is not learned this round: a peer id
 * alone cannot be dialled, and remembering it as a member let a test count three
 * controllers in the file while only the original one was reachable — once that one died,
 * the agent could neither learn the others' addresses nor, restarted, find them (issue 25,
 * cli-ha-rejoin's CI failure). A round that met such a voter is followed by another
 * after limits.controllerFollowRetryMs (a bounded number in a row), so the agent learns
 * where the new members listen as soon as its informant does, not a whole period later.
 * Juju's agents do the same: the API address updater keeps only servers left with an
 * address (juju/juju internal/worker/apiaddressupdater/apiaddressupdater.go, getAddresses).
 */
import { controllerApiProtocol } from '../actors/controller/controller-api.ts'
import { requestApi } from '../actors/controller/api-requests.ts'
import type { ControllersReply } from '../actors/controller/api-controllers.ts'
import { modelProtocol } from '../actors/controller/model-scope.ts'
import { dialableControllers, mergeControllers } from '../runtime/known-controllers.ts'
import { limits } from '../runtime/limits.ts'
import type { Logger } from '../runtime/logger.ts'
import type { Transport } from '../runtime/transport.ts'
import type { KnownControllersFile } from './known-controllers-file.ts'

/** The most controllers a group has (enable-ha's limit): a longer list from a controller is cut here. */
export const followedControllersMax = 7
/** Per request or dial while following the controllers. */
export const followTimeoutMs = 3_000

export interface ControllerFollowerOptions {
  /** The mesh: requests to controllers, and dials of the new ones' addresses. */
  mesh: Pick<Transport, 'request'> & { dial: (address: string, options: { timeoutMs?: number }) => Promise<unknown> }
  model: string
  /** The controllers the machine role asks; grows as new voters answer a dial. */
  controllers: string[]
  known: KnownControllersFile
  logger: Logger
}

export class ControllerFollower {
  readonly #o: ControllerFollowerOptions
  #following = false
  /** Rounds in a row that met a voter named without an address. */
  #retries = 0
  #timer: ReturnType<typeof setTimeout> | undefined
  #stopped = false

  constructor (options: ControllerFollowerOptions) {
    this.#o = options
  }

  /** The wait before the next round: short while new voters' addresses are still unknown (bounded), the period otherwise. */
  get nextDelayMs (): number {
    return this.#retries > 0 && this.#retries <= limits.controllerFollowRetriesMax ? limits.controllerFollowRetryMs : limits.controllerFollowPeriodMs
  }

  /** Rounds from now on, each after the last one ends. */
  start (): void {
    if (this.#stopped || this.#timer !== undefined) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      void this.round().finally(() => { this.start() })
    }, this.nextDelayMs)
  }

  stop (): void {
    this.#stopped = true
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** One round; one already under way makes this one a no-op. */
  async round (): Promise<void> {
    if (this.#following) return
    this.#following = true
    try {
      const unaddressed = await this.#round()
      // Saturates past the maximum: a voter that stays unknown is asked after at the period, until a round knows every voter.
      this.#retries = unaddressed ? Math.min(this.#retries + 1, limits.controllerFollowRetriesMax + 1) : 0
    } finally {
      this.#following = false
    }
  }

  /** Whether the answer named a voter without an address (its informant has not met it yet). */
  async #round (): Promise<boolean> {
    const { mesh, model, controllers, known, logger } = this.#o
    for (const controller of [...controllers]) {
      let reply: ControllersReply
      try {
        // Asked of its own model's group: the controllers know this agent there.
        reply = await requestApi(mesh, controller, modelProtocol(controllerApiProtocol, model), { op: 'controllers' }, { component: 'cantripd', timeoutMs: followTimeoutMs })
      } catch {
        continue
      }
      if (!reply.ok) continue
      const offered = dialableControllers(reply.controllers).slice(0, followedControllersMax)
      const unaddressed = offered.length < Math.min(reply.controllers.length, followedControllersMax)
      // Remembered at once (the newest membership first), so a restart finds this group
      // even when none of the controllers the agent started with is left.
      known.remember(mergeControllers(offered, known.remembered))
      for (const { peerId, addresses } of offered) {
        if (controllers.includes(peerId) || controllers.length >= followedControllersMax) continue
        try {
          await mesh.dial(addresses[0]!, { timeoutMs: followTimeoutMs })
          controllers.push(peerId)
          logger.log('info', `learned controller ${peerId} from the group's membership`)
        } catch {
          // Not reachable yet: the next round tries again.
        }
      }
      return unaddressed
    }
    return false
  }
}
