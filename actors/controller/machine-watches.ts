/**
 * Machine view watches: what a watch on etcd, or a Juju API watcher's `Next`, is to their
 * clients. A machine agent names the view it holds (`since`, the revision of its last
 * whole or changed view) and the revision it has reached (`revision`); the controller
 * answers at once if its own view of that machine differs, and otherwise holds the
 * request until a commit it applies changes that view, answering with the difference
 * (machine-view-cache.ts). The agent then watches again (actors/machine/view-watch.ts),
 * so every change reaches it one message after this controller applied it, with no
 * gossip notice and no read through the leader in between.
 *
 * Any controller serves watches from the state it has applied, leader or follower: a
 * view is a pure function of the committed model at a revision, so a follower's is as
 * true as the leader's, only possibly older. Never older than the agent's, though: a
 * watch naming a revision this controller has not reached waits for it, and is refused
 * when the hold runs out first, so an agent that moves to another controller never goes
 * back in revision. A commit the machine does not see is not sent at all; a held watch
 * is answered `unchanged` (with this controller's revision) only when its hold runs out.
 *
 * Changes are coalesced, never queued: the answer is always the difference between the
 * view the agent names and the view now, so what waits for a subscriber is one delta,
 * however many commits went by. A view this controller no longer keeps (never sent from
 * here, or forgotten past limits.machineViewsCachedMax) is answered whole.
 *
 * A watch that asks for pushes, on a transport that carries them (IncomingRequest.push),
 * is not answered by a change but sent it on the same request, and stays held naming the
 * view sent (the request's stream is ordered, so that is the view the agent now holds):
 * one message per change, as etcd's watch stream, instead of an answer and a new watch.
 * Its hold still ends it (`unchanged`, or a refusal when behind), which is how the agent
 * keeps proving it listens; a push that cannot be sent answers it instead.
 */
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import type { Deferral } from '../../runtime/deferral.ts'
import { limits } from '../../runtime/limits.ts'
import type { ModelContext } from '../../runtime/model/model-types.ts'
import type { MachineModelReply } from './api-requests.ts'
import { MachineViewCache } from './machine-view-cache.ts'

const component = 'controller api'

interface Held {
  readonly machine: string
  /** The view the agent holds, and the revision it reached: moved on by each change pushed. */
  since: number | undefined
  revision: number
  readonly resolve: (reply: MachineModelReply) => void
  /** Sends a change on the held request, without answering it (false: could not; see watch()). */
  readonly push: PushChange | undefined
  timer: TimerHandle | undefined
  /** Order of arrival: a check answers in it, as a look at every held watch in turn did (the simulator's trajectories depend on it). */
  readonly seq: number
}

export interface MachineWatchesOptions {
  clock: Clock
  /** The model as this controller has applied it (not a linearizable read). */
  model: () => ModelContext
  holdMs?: number
  heldMax?: number
  /**
   * Runs the check of the held watches after an applied batch, once the code running now
   * and its microtasks are done (cantripd: setImmediate, the simulator a zero-delay step;
   * as RaftHostOptions.deferApply). Unset, the clock's zero-delay timer. Node
   * runs a zero-delay timer after at least 1 ms and only in the loop's timers phase: on a
   * real controller that was 1-2 ms between applying a commit and pushing it, at every
   * controller, on every notice (issue 28).
   */
  defer?: Deferral
  /**
   * Timing a change's way to the agents (bench/notice-stages.ts): `watch-applied` as this
   * controller applies a commit, `watch-check` when the held watches are looked at after
   * an applied batch, `watch-answered` per watch answered with a change; `detail` is the
   * model's revision. Unset, one comparison per step.
   */
  onStage?: (stage: MachineWatchStage, detail: number) => void
}

/** Sends one change of a view ahead of the watch's answer (IncomingRequest.push); false when it was not sent. */
export type PushChange = (reply: Extract<MachineModelReply, { ok: true }>) => boolean

/** The steps `onStage` reports (see MachineWatchesOptions.onStage). */
export type MachineWatchStage = 'watch-applied' | 'watch-check' | 'watch-answered'

export class MachineWatches {
  /** The last view sent to each machine, shared with `machine-model` fetches. */
  readonly cache = new MachineViewCache()
  readonly #o: MachineWatchesOptions
  /** Machine → its agent's held watch (one per machine: a new one answers the old). */
  readonly #held = new Map<string, Held>()
  #flush: TimerHandle | undefined
  /** A check is scheduled (by the clock's timer, `#flush`, or by `defer`). */
  #scheduled = false
  /** The model of the last check: every watch held since is unchanged at it, or in `#look`. */
  #checked: ModelContext | undefined
  /** Machines whose held watch the next check looks at whatever changed (waiting for a revision, or its kept view replaced). */
  readonly #look = new Set<string>()
  #arrived = 0
  #stopped = false
  /** Why watches are refused for now (this controller has lost its leader: watch-leader-guard.ts), or undefined. */
  #refusal: string | undefined
  /** Watches answered with a change (whole or delta), for tests and the bench. */
  answered = 0

  constructor (options: MachineWatchesOptions) {
    this.#o = options
    // A fetch replaced, or the bound forgot, the view a held watch names: answered whole at the next check, as before.
    this.cache.onReplaced = machine => { if (this.#held.has(machine)) this.#look.add(machine) }
  }

  get held (): number {
    return this.#held.size
  }

  /**
   * The answer to `machine`'s watch: now if its view moved on, else after a change or the
   * hold. With `push`, a change while held is pushed and the watch stays held, naming the
   * view pushed, until its hold ends (answered then as without push: the agent watches
   * again, which also proves it still listens); a push that cannot be sent (the caller
   * gone, or not reading: limits.transportRequestPushesUnwrittenMax) answers the watch with
   * that change instead, as without push.
   */
  async watch (machine: string, since: number | undefined, revision: number, push?: PushChange): Promise<MachineModelReply> {
    if (this.#stopped) return { ok: false, error: `${component}: cannot watch machine ${JSON.stringify(machine)}: this controller is stopping` }
    if (this.#refusal !== undefined) return { ok: false, error: `${component}: cannot watch machine ${JSON.stringify(machine)}: ${this.#refusal}` }
    this.#release(machine, `${component}: watch of machine ${JSON.stringify(machine)} replaced by a newer one`)
    const heldMax = this.#o.heldMax ?? limits.machineWatchesHeldMax
    if (this.#held.size >= heldMax) {
      return { ok: false, error: `${component}: cannot watch machine ${JSON.stringify(machine)}: ${this.#held.size} watches held, the maximum is ${heldMax}` }
    }
    return await new Promise<MachineModelReply>(resolve => {
      const held: Held = { machine, since, revision, resolve, push, timer: undefined, seq: ++this.#arrived }
      const now = this.#answer(held, false)
      if (now !== undefined) {
        resolve(now)
        return
      }
      held.timer = this.#o.clock.setTimeout(() => { this.#expire(held) }, this.#o.holdMs ?? limits.machineWatchHoldMs)
      this.#held.set(machine, held)
    })
  }

  /** This controller applied a commit: look at the held watches once the batch is applied. */
  applied (): void {
    this.#o.onStage?.('watch-applied', this.#o.model().revision)
    if (this.#stopped || this.#scheduled || this.#held.size === 0) return
    this.#scheduled = true
    const check = (): void => {
      this.#scheduled = false
      this.#flush = undefined
      // A deferred check cannot be cancelled: stop() answered every watch already.
      if (!this.#stopped) this.#check()
    }
    if (this.#o.defer !== undefined) this.#o.defer(check)
    else this.#flush = this.#o.clock.setTimeout(check, 0)
  }

  /**
   * With a reason: answers every held watch with a refusal, and refuses new ones, until
   * called again without one (watch-leader-guard.ts: a controller without a leader may
   * be falling behind, and its agents would not know).
   */
  refuse (reason: string | undefined): void {
    this.#refusal = reason
    if (reason === undefined) return
    for (const machine of [...this.#held.keys()]) this.#release(machine, `${component}: cannot watch machine ${JSON.stringify(machine)}: ${reason}`)
  }

  /** Answers every held watch with a refusal, so their agents watch elsewhere. */
  stop (): void {
    this.#stopped = true
    if (this.#flush !== undefined) this.#o.clock.clearTimeout(this.#flush)
    for (const machine of [...this.#held.keys()]) this.#release(machine, `${component}: cannot watch machine ${JSON.stringify(machine)}: this controller is stopping`)
  }

  /**
   * Answers the held watches a commit concerns. Looking at each one after every commit
   * cost O(machines) per commit, O(machines²) per deploy; the keys the commits touched
   * since the last check (tables share what they did not) name the few views they may
   * have changed. Every watch still held after a check is unchanged at that check's
   * model, or waits to be looked at (`#look`), so the difference from that model covers
   * all of them, also those that came in since.
   */
  #check (): void {
    const model = this.#o.model()
    this.#o.onStage?.('watch-check', model.revision)
    const last = this.#checked
    this.#checked = model
    const affected = last === undefined ? 'all' : this.cache.affected(last, model)
    const concerned: Held[] = []
    if (affected === 'all') concerned.push(...this.#held.values())
    else {
      for (const machine of new Set([...affected, ...this.#look])) {
        const held = this.#held.get(machine)
        if (held !== undefined) concerned.push(held)
      }
      concerned.sort((a, b) => a.seq - b.seq)
    }
    this.#look.clear()
    const deltas = new SharedDeltas()
    for (const held of concerned) {
      if (this.#held.get(held.machine) !== held) continue
      const reply = this.#answer(held, false)
      if (reply === undefined) continue
      if (reply.ok && held.push?.(deltas.shared(reply)) === true) {
        // The agent now holds the view pushed (the stream is ordered): the next change is from it.
        held.since = held.revision = 'changed' in reply ? reply.changed.revision : 'model' in reply ? reply.model.revision : held.revision
        continue
      }
      this.#settle(held, reply)
    }
  }

  #expire (held: Held): void {
    held.timer = undefined
    if (this.#held.get(held.machine) !== held) return
    this.#settle(held, this.#answer(held, true) ?? { ok: false, error: `${component}: watch of machine ${JSON.stringify(held.machine)}: nothing to answer` })
  }

  /**
   * What to tell `held` now: a change of its view, or at the end of its hold `unchanged`
   * (or, when this controller is still behind the agent, a refusal); undefined: keep it.
   */
  #answer (held: Held, final: boolean): MachineModelReply | undefined {
    const model = this.#o.model()
    if (model.revision < held.revision) {
      // Waiting for this controller to catch up, not for a change of the view: look again next time.
      if (!final) this.#look.add(held.machine)
      return final ? { ok: false, error: `${component}: cannot watch machine ${JSON.stringify(held.machine)}: this controller is at revision ${model.revision}, behind the agent's ${held.revision}` } : undefined
    }
    const reply = this.cache.answer(model, held.machine, held.since)
    if ('unchanged' in reply) return final ? reply : undefined
    this.answered++
    this.#o.onStage?.('watch-answered', model.revision)
    return reply
  }

  #settle (held: Held, reply: MachineModelReply): void {
    if (held.timer !== undefined) this.#o.clock.clearTimeout(held.timer)
    held.timer = undefined
    if (this.#held.get(held.machine) === held) this.#held.delete(held.machine)
    held.resolve(reply)
  }

  #release (machine: string, error: string): void {
    const held = this.#held.get(machine)
    if (held !== undefined) this.#settle(held, { ok: false, error })
  }
}

type OkReply = Extract<MachineModelReply, { ok: true }>

/**
 * One object for the deltas of one look that say the same: from the same view (`since`)
 * to the same revision and term, with the same parts, each the same object. A part views
 * take whole from the model (its counters, config, uuid) is one object in every view, so
 * a commit every machine sees only through such a part, as an added machine (the model's
 * counters), gives every agent the same delta: its push encodes it once
 * (api-model-reads.ts), where it was encoded again for each agent. A delta of anything a
 * view builds for its own machine (its tables) is its own object and stays its own.
 */
class SharedDeltas {
  /** `since revision term part,part,…` → the deltas seen with that shape (a few: one per distinct content). */
  readonly #seen = new Map<string, Array<Extract<OkReply, { changed: unknown }>>>()

  shared (reply: OkReply): OkReply {
    if (!('changed' in reply)) return reply
    const changed = reply.changed as Record<string, unknown>
    const parts = Object.keys(changed)
    const key = `${reply.since} ${reply.changed.revision} ${reply.changed.term} ${parts.join(',')}`
    const same = this.#seen.get(key)
    const found = same?.find(other => parts.every(part => (other.changed as Record<string, unknown>)[part] === changed[part]))
    if (found !== undefined) return found
    if (same === undefined) this.#seen.set(key, [reply])
    // Bounded by the look's own watches (at most limits.machineWatchesHeldMax), each kept once.
    else same.push(reply)
    return reply
  }
}
