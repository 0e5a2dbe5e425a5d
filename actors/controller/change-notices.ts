/**
 * Change notices (DESIGN.md §5): the leading controller tells the model's agents, by
 * gossip, that the desired state moved to a new revision. A notice says only *that*
 * something changed and up to which revision. Machine agents learn of changes from their
 * view watches (machine-watches.ts) and listen to notices only while their watch is down
 * (actors/machine/controller-client.ts), when a notice makes them fetch; a controller
 * that loses its leader ends the watches it holds (watch-leader-guard.ts) rather than
 * leave its agents to notices.
 * Gossip is a hint: a lost notice is made good by the next one or by the agent's
 * periodic catch-up.
 *
 * Notices are coalesced: at most one per interval (`noticeIntervalMs`, longer with many
 * machine agents), carrying the latest revision, so a burst of commits costs one message
 * and one fetch per agent.
 *
 * A notice is never sent at once, but `noticeDelayMs` after the change (or at the
 * interval's end, if later). The watches carry each change to every agent whose watch is
 * up, as soon as its controller applied it; a notice matters only to an agent whose watch
 * is down, and that agent also watches again every limits.machineWatchRetryMs. Sent at
 * once, the notice raced the watch answers it duplicates for the same CPU: the leader
 * signed and sent it inside its apply, before it answered the proposer or looked at its
 * held watches, and every agent verified it and forwarded it to its mesh peers while its
 * watch answer was on the way (issue 28: the 50-agent notice tail on 2 cores is the queue
 * of that work, not a timer).
 */
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import { decodeFields, encode } from '../../runtime/codec.ts'
import { limits } from '../../runtime/limits.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'
import type { TopicMessage, Transport, ValidationResult } from '../../runtime/transport.ts'

const component = 'change notices'

export function changeTopic (modelUuid: string): string {
  return `cantrip/changes/${modelUuid}`
}

export interface ChangeNotice {
  v: 1
  revision: number
}

/** The notice in a message, or undefined if it is not one (wrong shape, version or size). */
export function parseChangeNotice (data: Uint8Array): ChangeNotice | undefined {
  if (data.byteLength > 64) return undefined
  const value = decodeFields(data, component)
  if (value === undefined) return undefined
  const { v, revision } = value
  if (v !== 1 || !Number.isSafeInteger(revision) || (revision as number) < 0 || Object.keys(value).length !== 2) return undefined
  return { v: 1, revision: revision as number }
}

/** Receivers accept notices only from controllers: anyone else is rejected (and penalised). */
export function changeNoticeValidator (controllers: () => ReadonlySet<NodeId>): (message: TopicMessage) => ValidationResult {
  return message => controllers().has(message.from) && parseChangeNotice(message.data) !== undefined ? 'accept' : 'reject'
}

export class ChangeNotifier {
  readonly #transport: Transport
  readonly #clock: Clock
  readonly #topic: string
  readonly #intervalMs: number
  readonly #delayMs: number
  readonly #machines: () => number
  #pending: number | undefined
  #timer: TimerHandle | undefined
  /** When the last notice went out (clock ms); none yet: -Infinity. */
  #lastPublishedAt = -Infinity
  #published = 0
  #stopped = false

  constructor (options: { transport: Transport, clock: Clock, modelUuid: string, noticeIntervalMs: number, noticeDelayMs?: number, machines?: () => number }) {
    this.#transport = options.transport
    this.#clock = options.clock
    this.#topic = changeTopic(options.modelUuid)
    this.#intervalMs = options.noticeIntervalMs
    this.#delayMs = options.noticeDelayMs ?? limits.changeNoticeDelayMs
    this.#machines = options.machines ?? (() => 0)
  }

  /** The spacing of notices: the base interval, or more with many machine agents fetching on each. */
  get intervalMs (): number {
    const scaled = this.#machines() * limits.changeNoticeIntervalPerMachineMs
    return Math.max(this.#intervalMs, Math.min(scaled, limits.changeNoticeIntervalMaxMs))
  }

  get published (): number {
    return this.#published
  }

  /** The model reached `revision` here while leading: announce it (delayed and coalesced). */
  changed (revision: number): void {
    if (this.#stopped) return
    this.#pending = Math.max(this.#pending ?? 0, revision)
    if (this.#timer !== undefined) return
    const wait = Math.max(this.#delayMs, this.#lastPublishedAt + this.intervalMs - this.#clock.now())
    this.#timer = this.#clock.setTimeout(() => { this.#flush() }, wait)
  }

  stop (): void {
    this.#stopped = true
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #flush (): void {
    this.#timer = undefined
    const revision = this.#pending
    this.#pending = undefined
    if (revision === undefined || this.#stopped) return
    this.#published++
    this.#lastPublishedAt = this.#clock.now()
    this.#transport.publish(this.#topic, encode({ v: 1, revision } satisfies ChangeNotice, component)).catch(() => {
      // Gossip is a hint; agents catch up on their own.
    })
  }
}
