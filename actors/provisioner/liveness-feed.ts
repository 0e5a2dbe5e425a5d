/**
 * The controller's presence, fed to the provisioner's machine actors: each machine whose
 * agent this controller has heard since the last round gets one `agent.heartbeat` with
 * the time it was heard, every limits.provisionerLivenessFeedIntervalMs. A healthy agent's
 * down deadline (actors/machine/machine-machine.ts) is thus pushed on while presence hears
 * it, and one that falls silent shows `down` after the machine's own timeout, counted from
 * when it was last heard — not from when the feed noticed.
 *
 * Presence delivers a heartbeat per agent per second; the machine actors need far fewer,
 * so the feed samples the table instead of forwarding every gossip message: the cost is
 * one event per machine per interval, whatever the presence timings.
 *
 * A new leader has a presence table of its own (every controller hears every agent), so
 * its machine actors start from what it heard (`startedAt`), never from the old leader's.
 */
import type { ActorRefFrom } from 'xstate'
import { assert } from '../../runtime/assert.ts'
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import type { machineMachine } from '../machine/machine-machine.ts'

/** What this controller's presence knows of a machine's agent. */
export interface AgentHeard {
  /** When a heartbeat of the agent was last accepted, on this controller's clock. */
  lastHeardAt: number
  /** Believed alive (alive or suspect): not failed and not left. */
  alive: boolean
}

/** The machine's agent as this controller hears it; undefined when it has never heard of it. */
export type AgentLiveness = (machine: string) => AgentHeard | undefined

type MachineActor = ActorRefFrom<typeof machineMachine>

export interface LivenessFeedOptions {
  clock: Clock
  heard: AgentLiveness
  /** The machine actors the provisioner tracks now, by machine id. */
  machines: () => Iterable<readonly [string, MachineActor]>
  /** Between rounds: limits.provisionerLivenessFeedIntervalMs unless a test shortens it. */
  intervalMs: number
}

export class LivenessFeed {
  readonly #o: LivenessFeedOptions
  /** The heard time last sent to each machine, so an agent not heard again is not fed again. */
  readonly #fed = new Map<string, number>()
  #timer: TimerHandle | undefined
  #stopped = false
  /** Heartbeats sent, for tests and the inspector. */
  sent = 0

  constructor (options: LivenessFeedOptions) {
    assert(Number.isSafeInteger(options.intervalMs) && options.intervalMs > 0,
      `liveness feed: intervalMs must be a positive integer, got ${String(options.intervalMs)}`)
    this.#o = options
  }

  start (): void {
    this.#schedule()
  }

  stop (): void {
    this.#stopped = true
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /**
   * When a machine's agent counts as having reported in, for `agent.started`: when it was
   * last heard if that is known (so a new leader does not give an agent it has not heard
   * for a while a fresh timeout), else now (a controller that knows nothing yet gives the
   * agent the whole timeout to be heard).
   */
  startedAt (machine: string, now: number): number {
    const heard = this.#o.heard(machine)
    return heard === undefined ? now : Math.min(now, heard.lastHeardAt)
  }

  /** One round: a heartbeat for each machine whose agent was heard alive since the last one. */
  feed (): void {
    const seen = new Set<string>()
    for (const [id, actor] of this.#o.machines()) {
      seen.add(id)
      const heard = this.#o.heard(id)
      if (heard === undefined || !heard.alive || actor.getSnapshot().status !== 'active') continue
      if (heard.lastHeardAt <= (this.#fed.get(id) ?? Number.NEGATIVE_INFINITY)) continue
      this.#fed.set(id, heard.lastHeardAt)
      this.sent++
      actor.send({ type: 'agent.heartbeat', at: heard.lastHeardAt })
    }
    // Machines no longer tracked are forgotten, so the map stays as large as the model.
    for (const id of [...this.#fed.keys()]) if (!seen.has(id)) this.#fed.delete(id)
  }

  #schedule (): void {
    if (this.#stopped) return
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined
      if (this.#stopped) return
      this.feed()
      this.#schedule()
    }, this.#o.intervalMs)
  }
}
