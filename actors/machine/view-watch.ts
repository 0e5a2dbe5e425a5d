/**
 * A machine agent's watch of its view (the controller's side: actors/controller/
 * machine-watches.ts): one request at a time held at one controller, which answers when a
 * commit it applied changes what this machine sees; each answer is taken and the next
 * watch sent at once, naming the view now held, so nothing that changes between two
 * watches is missed. This is a Juju API watcher's loop (apiserver/watcher.go: each
 * `Next` call blocks until its state watcher has a change) over the mesh's request
 * channels, which keep one libp2p stream per controller for all of it.
 *
 * Where the transport carries pushes, the watch asks for them (`push`), and the
 * controller sends each change on the held request as it happens, as etcd's watch
 * stream does: one message per change, where an answer and a new watch were two, each
 * with its own encoding, Noise seal, socket write and wake-up at both ends (issue 28: 50
 * agents on 2 cores, where the per-change CPU is the notice tail). The answer then comes
 * when the hold ends, and the next watch follows it as before. A pushed change that the
 * agent cannot take (its view moved by a fetch meanwhile: `stale`) or that shows its
 * controller behind ends the watch at once; the request left held is replaced by the
 * next watch at that controller, or answered at its hold, and its pushes are ignored.
 *
 * Agents spread over the controllers (each starts at one chosen by its machine id) and
 * move to the next when theirs fails, refuses (a controller without a leader ends its
 * watches: actors/controller/watch-leader-guard.ts), or answers below a revision the agent
 * already knows of (from a fetch, or a change notice heard while the watch was down). The
 * controller never answers below the revision the agent names, so moving never takes an
 * agent back in time.
 */
import type { Clock } from '../../runtime/clock.ts'
import { limits } from '../../runtime/limits.ts'
import { hashString32 } from '../../runtime/random.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'
import type { Transport } from '../../runtime/transport.ts'
import { decodeApiReply, requestApi, type MachineModelReply } from '../controller/api-requests.ts'
import { controllerApiProtocol } from '../controller/controller-api.ts'

const component = 'controller client'

/**
 * What the agent made of an answer: its view moved on, stayed, was answered for a view it
 * no longer holds (another answer moved it meanwhile), or the answer was of no use.
 */
export type WatchOutcome = 'moved' | 'same' | 'stale' | 'useless'

export interface ViewWatchOptions {
  transport: Pick<Transport, 'request'>
  clock: Clock
  machine: string
  controllers: readonly NodeId[]
  /** The revision of the view held (its content) and the revision reached. */
  position: () => { since: number, revision: number }
  accept: (reply: Extract<MachineModelReply, { ok: true }>) => WatchOutcome
  /**
   * Whether the agent knows of a revision beyond `revision`, the one the controller
   * holding the watch answered with (from change notices, or a fetch that went further).
   */
  behind: (revision: number) => boolean
  /** Called when the watch becomes healthy (answered) or stops being so (failed, refused, stopped). */
  onHealthChange?: (healthy: boolean) => void
  requestTimeoutMs: number
  holdMs?: number
}

export class ViewWatch {
  readonly #o: ViewWatchOptions
  #index: number
  #stopped = false
  #running = false
  /** Whether the last watch was answered (the agent can rely on it for changes). */
  #healthy = false
  /** The revision the last answer brought. */
  #answered = 0
  /** Answers and pushes taken, and failed or refused watches. */
  readonly counters = { answers: 0, failures: 0 }
  /** The watch whose pushes are taken: a push of an earlier one is ignored. */
  #generation = 0

  constructor (options: ViewWatchOptions) {
    this.#o = options
    this.#index = firstControllerIndex(options.machine, options.controllers.length)
  }

  get healthy (): boolean {
    return this.#healthy && !this.#stopped
  }

  start (): void {
    if (this.#running || this.#stopped || this.#o.controllers.length === 0) return
    this.#running = true
    void this.#run().finally(() => { this.#running = false })
  }

  stop (): void {
    this.#stopped = true
    this.#setHealthy(false)
  }

  #setHealthy (healthy: boolean): void {
    if (this.#healthy === healthy) return
    this.#healthy = healthy
    this.#o.onHealthChange?.(healthy)
  }

  async #run (): Promise<void> {
    while (!this.#stopped) {
      const outcome = await this.#once()
      if (this.#stopped) return
      if (outcome === 'same' && !this.#o.behind(this.#answered)) continue
      if (outcome === 'moved' || outcome === 'stale') continue
      // Failed, refused, of no use, or held by a controller that missed what notices announced.
      this.#index++
      if (outcome !== 'same') {
        this.#setHealthy(false)
        this.counters.failures++
        await new Promise<void>(resolve => { this.#o.clock.setTimeout(resolve, limits.machineWatchRetryMs) })
      }
    }
  }

  async #once (): Promise<WatchOutcome> {
    const target = this.#o.controllers[this.#index % this.#o.controllers.length]!
    const { since, revision } = this.#o.position()
    const holdMs = this.#o.holdMs ?? limits.machineWatchHoldMs
    const generation = ++this.#generation
    let end: (outcome: WatchOutcome) => void = () => {}
    const ended = new Promise<WatchOutcome>(resolve => { end = resolve })
    const onPush = (bytes: Uint8Array): void => {
      if (generation !== this.#generation || this.#stopped) return
      let reply: MachineModelReply
      try {
        reply = decodeApiReply('machine-watch', bytes, component)
      } catch {
        end('useless')
        return
      }
      const outcome = this.#take(reply)
      // Taken, or older than the view held from a controller that is not behind: keep listening.
      if (outcome === 'moved' || (outcome === 'same' && !this.#o.behind(this.#answered))) return
      end(outcome)
    }
    const answered = requestApi(this.#o.transport, target, controllerApiProtocol, { op: 'machine-watch', machine: this.#o.machine, since, revision, push: true }, { component, timeoutMs: holdMs + this.#o.requestTimeoutMs, onPush })
      .then(reply => generation === this.#generation ? this.#take(reply) : 'useless', () => 'useless' as const)
    const outcome = await Promise.race([answered, ended])
    // Pushes still arriving for this request (left held when a push ended it) are not ours to take.
    if (generation === this.#generation) this.#generation++
    return outcome
  }

  /** Takes an answer or a pushed change into the view. */
  #take (reply: MachineModelReply): WatchOutcome {
    if (!reply.ok || this.#stopped) return 'useless'
    this.counters.answers++
    this.#answered = replyRevision(reply)
    this.#setHealthy(true)
    return this.#o.accept(reply)
  }
}

/** The revision an answer brings the view to. */
export function replyRevision (reply: Extract<MachineModelReply, { ok: true }>): number {
  if ('unchanged' in reply) return reply.revision
  return 'changed' in reply ? reply.changed.revision : reply.model.revision
}

/**
 * The controller a machine's agent fetches from and watches first: its id's hash over the
 * controllers, so that many agents starting at once spread their first dials and reads.
 */
export function firstControllerIndex (machine: string, controllers: number): number {
  return controllers === 0 ? 0 : hashString32(machine) % controllers
}
