/**
 * The admin's watch of the whole model (`model-watch`): what a Juju API watcher's `Next`
 * is to its client, and what the CLI's `status --watch`, `wait-for` and `run --wait`
 * wait on. The caller names the revision it has read (`since`); the controller answers
 * once the model it has applied is past it — at once if it already is — or, when its
 * hold runs out first, with its own revision (not past `since`: nothing changed here).
 * The answer carries only the revision: the caller then reads the model as it always
 * does (linearizably), so a watch needs no gossip and no copy of the model per watcher.
 *
 * Any controller serves it from what it applied, leader or follower; a follower behind
 * the caller's read simply answers later, never with a revision the caller has not
 * reached. Held watches are few (one per waiting command) and bounded by
 * limits.modelWatchesHeldMax; past it a watch is refused and the CLI falls back on its
 * periodic re-reads.
 */
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import { limits } from '../../runtime/limits.ts'
import type { ModelWatchReply } from './api-requests.ts'

const component = 'controller api'

interface Held {
  readonly since: number
  readonly resolve: (reply: ModelWatchReply) => void
  readonly timer: TimerHandle
}

export interface ModelWatchesOptions {
  clock: Clock
  /** The model's revision as this controller has applied it. */
  revision: () => number
  holdMs?: number
  heldMax?: number
}

export class ModelWatches {
  readonly #o: ModelWatchesOptions
  readonly #held = new Set<Held>()
  #stopped = false
  /** Why watches are refused for now (this controller has lost its leader: watch-leader-guard.ts), or undefined. */
  #refusal: string | undefined

  constructor (options: ModelWatchesOptions) {
    this.#o = options
  }

  get held (): number {
    return this.#held.size
  }

  /** Answers once the applied revision is past `since`, or with the current one when the hold runs out. */
  async watch (since: number): Promise<ModelWatchReply> {
    if (this.#stopped) return { ok: false, error: `${component}: cannot watch the model: this controller is stopping` }
    if (this.#refusal !== undefined) return { ok: false, error: `${component}: cannot watch the model: ${this.#refusal}` }
    const revision = this.#o.revision()
    if (revision > since) return { ok: true, revision }
    const heldMax = this.#o.heldMax ?? limits.modelWatchesHeldMax
    if (this.#held.size >= heldMax) return { ok: false, error: `${component}: cannot watch the model: ${this.#held.size} watches held, the maximum is ${heldMax}` }
    return await new Promise<ModelWatchReply>(resolve => {
      const held: Held = {
        since,
        resolve,
        timer: this.#o.clock.setTimeout(() => { this.#settle(held, { ok: true, revision: this.#o.revision() }) }, this.#o.holdMs ?? limits.modelWatchHoldMs)
      }
      this.#held.add(held)
    })
  }

  /** This controller applied a commit: answers every watch it moved past. */
  applied (): void {
    if (this.#held.size === 0) return
    const revision = this.#o.revision()
    for (const held of [...this.#held]) if (revision > held.since) this.#settle(held, { ok: true, revision })
  }

  /**
   * With a reason: answers every held watch with a refusal and refuses new ones, until
   * called again without one (watch-leader-guard.ts: a controller without a leader may be
   * falling behind, and a CLI waiting on it would wait out the whole hold for nothing).
   */
  refuse (reason: string | undefined): void {
    this.#refusal = reason
    if (reason === undefined) return
    for (const held of [...this.#held]) this.#settle(held, { ok: false, error: `${component}: cannot watch the model: ${reason}` })
  }

  /** Answers every held watch with a refusal, so their callers watch elsewhere. */
  stop (): void {
    this.#stopped = true
    for (const held of [...this.#held]) this.#settle(held, { ok: false, error: `${component}: cannot watch the model: this controller is stopping` })
  }

  #settle (held: Held, reply: ModelWatchReply): void {
    if (!this.#held.delete(held)) return
    this.#o.clock.clearTimeout(held.timer)
    held.resolve(reply)
  }
}
