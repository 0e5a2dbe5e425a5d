/**
 * The membership table of presence (DESIGN.md §5): what one agent believes about every
 * other member of its model, driven only by the events handed to it, so the same events
 * give the same table and the same changes. It never reads a clock; `at` and `now` come
 * from the caller.
 *
 * SWIM-lite, as memberlist does it but with local suspicion only:
 * - Silence makes a member `suspect` after `suspectAfterMs` and `failed` after
 *   `suspectAfterMs + failedAfterMs`, both counted from the last heartbeat heard.
 * - Only the member itself clears a suspicion: a heartbeat with a higher incarnation
 *   than the table holds. A heartbeat at the same incarnation still counts as being
 *   heard (a suspect that keeps talking never fails), but does not make it alive; the
 *   agent tells a suspected member about the claim (the digest) and it refutes.
 * - `left` (a graceful leave) and `failed` are ended only by a higher incarnation, so a
 *   late heartbeat of the old incarnation never resurrects a member.
 * Suspicion is not gossiped on: each observer decides by its own timeouts, so one bad
 * link does not turn into a model-wide suspicion.
 */
import { assert } from '../assert.ts'
import { limits } from '../limits.ts'

export type MemberRole = 'controller' | 'machine'
export type MemberState = 'alive' | 'suspect' | 'failed' | 'left'

export interface Member {
  readonly id: string
  readonly role: MemberRole
  /** The member's own counter; only the member raises it, to refute or to rejoin. */
  readonly incarnation: number
  readonly state: MemberState
  /** When a heartbeat (or the leave) of this member was last accepted. */
  readonly lastHeardAt: number
  /** Which peer heard it then: the observer that owns this table. */
  readonly heardBy: string
  /** When the member entered its current state, as this observer saw it. */
  readonly since: number
}

/** One state change; `from` is undefined when the member was new to the table. */
export interface MemberChange {
  readonly id: string
  readonly role: MemberRole
  readonly from: MemberState | undefined
  readonly to: MemberState
  readonly incarnation: number
  readonly at: number
}

export interface MembershipTimings {
  suspectAfterMs: number
  failedAfterMs: number
  /** Failed and left members are dropped this long after entering that state. */
  reapAfterMs: number
}

export interface MembershipOptions extends Partial<MembershipTimings> {
  /** The observer: recorded as `heardBy`, and never a member of its own table. */
  self: string
  membersMax?: number
}

/** What the table did with events it could not apply, since it was created. */
export interface MembershipCounters {
  /** Heartbeats or leaves of an older incarnation (or a same-incarnation heartbeat of a failed or left member). */
  stale: number
  /** New members refused because the table held membersMax. */
  refused: number
  /** Failed and left members forgotten after reapAfterMs. */
  reaped: number
}

export const defaultMembershipTimings: Readonly<MembershipTimings> = {
  suspectAfterMs: limits.presenceSuspectAfterMsDefault,
  failedAfterMs: limits.presenceFailedAfterMsDefault,
  reapAfterMs: limits.presenceReapAfterMsDefault
}

function checkDuration (value: number, what: string): number {
  assert(Number.isSafeInteger(value) && value > 0, `membership: ${what} must be a positive integer of ms, got ${String(value)}`)
  return value
}

function checkTime (value: number, what: string): void {
  assert(Number.isFinite(value), `membership: ${what} must be a finite time, got ${String(value)}`)
}

function checkIncarnation (value: number): void {
  assert(Number.isSafeInteger(value) && value >= 0, `membership: incarnation must be a non-negative safe integer, got ${String(value)}`)
}

export class Membership {
  readonly self: string
  readonly timings: Readonly<MembershipTimings>
  readonly membersMax: number
  readonly #members = new Map<string, Member>()
  readonly #counters: MembershipCounters = { stale: 0, refused: 0, reaped: 0 }

  constructor (options: MembershipOptions) {
    assert(typeof options?.self === 'string' && options.self.length > 0, 'membership: no "self"; pass the observer\'s peer id')
    this.self = options.self
    this.timings = {
      suspectAfterMs: checkDuration(options.suspectAfterMs ?? defaultMembershipTimings.suspectAfterMs, 'suspectAfterMs'),
      failedAfterMs: checkDuration(options.failedAfterMs ?? defaultMembershipTimings.failedAfterMs, 'failedAfterMs'),
      reapAfterMs: checkDuration(options.reapAfterMs ?? defaultMembershipTimings.reapAfterMs, 'reapAfterMs')
    }
    this.membersMax = options.membersMax ?? limits.presenceMembersMax
    assert(Number.isSafeInteger(this.membersMax) && this.membersMax > 0 && this.membersMax <= limits.presenceMembersMax,
      `membership: membersMax must be an integer in 1..${limits.presenceMembersMax}, got ${String(this.membersMax)}`)
  }

  get (id: string): Member | undefined {
    return this.#members.get(id)
  }

  /** Every member, sorted by id so views do not depend on arrival order. */
  members (): Member[] {
    return [...this.#members.values()].sort((a, b) => compareIds(a.id, b.id))
  }

  get size (): number {
    return this.#members.size
  }

  counters (): MembershipCounters {
    return { ...this.#counters }
  }

  /** A heartbeat of `id` at `incarnation` was heard at `at`. */
  heartbeat (id: string, role: MemberRole, incarnation: number, at: number): MemberChange[] {
    checkIncarnation(incarnation)
    checkTime(at, 'a heartbeat time')
    if (id === this.self) return []
    const current = this.#members.get(id)
    if (current === undefined) return this.#admit(id, role, incarnation, 'alive', at)
    const heard = { ...current, role, incarnation, lastHeardAt: Math.max(current.lastHeardAt, at), heardBy: this.self }
    if (incarnation > current.incarnation) {
      if (current.state === 'alive') return this.#set(heard, current)
      return this.#set({ ...heard, state: 'alive', since: at }, current)
    }
    if (incarnation === current.incarnation && (current.state === 'alive' || current.state === 'suspect')) {
      // Heard, so not failing; but a suspicion stays until the member refutes it.
      return this.#set(heard, current)
    }
    this.#counters.stale++
    return []
  }

  /** A member heard of for the first time, unless the table is full (then refused and counted). */
  #admit (id: string, role: MemberRole, incarnation: number, state: 'alive' | 'left', at: number): MemberChange[] {
    if (this.#members.size >= this.membersMax) {
      this.#counters.refused++
      return []
    }
    return this.#set({ id, role, incarnation, state, lastHeardAt: at, heardBy: this.self, since: at }, undefined)
  }

  /** `id` said it leaves, at `incarnation`; unknown members are recorded as left too, so late heartbeats cannot add them. */
  leave (id: string, role: MemberRole, incarnation: number, at: number): MemberChange[] {
    checkIncarnation(incarnation)
    checkTime(at, 'a leave time')
    if (id === this.self) return []
    const current = this.#members.get(id)
    if (current === undefined) return this.#admit(id, role, incarnation, 'left', at)
    if (incarnation < current.incarnation || current.state === 'left') {
      this.#counters.stale++
      return []
    }
    return this.#set({ ...current, role, incarnation, state: 'left', lastHeardAt: Math.max(current.lastHeardAt, at), heardBy: this.self, since: at }, current)
  }

  /**
   * Time passed: silence turns alive into suspect and suspect into failed (both, in that
   * order, after a long gap), and old failed and left members are forgotten. Changes
   * come in order of member id.
   */
  tick (now: number): MemberChange[] {
    checkTime(now, 'a tick time')
    const { suspectAfterMs, failedAfterMs, reapAfterMs } = this.timings
    const changes: MemberChange[] = []
    for (const id of [...this.#members.keys()].sort(compareIds)) {
      let member = this.#members.get(id)!
      const silentMs = now - member.lastHeardAt
      if (member.state === 'alive' && silentMs >= suspectAfterMs) {
        changes.push(...this.#set({ ...member, state: 'suspect', since: now }, member))
        member = this.#members.get(id)!
      }
      if (member.state === 'suspect' && silentMs >= suspectAfterMs + failedAfterMs) {
        changes.push(...this.#set({ ...member, state: 'failed', since: now }, member))
        member = this.#members.get(id)!
      }
      if ((member.state === 'failed' || member.state === 'left') && now - member.since >= reapAfterMs) {
        this.#members.delete(id)
        this.#counters.reaped++
      }
    }
    return changes
  }

  #set (next: Member, previous: Member | undefined): MemberChange[] {
    this.#members.set(next.id, next)
    if (previous !== undefined && previous.state === next.state) return []
    return [{ id: next.id, role: next.role, from: previous?.state, to: next.state, incarnation: next.incarnation, at: next.since }]
  }
}

/** Code-unit order, the same on every host (localeCompare is not). */
export function compareIds (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

export type UnitAgentStatus = 'alive' | 'lost'

export interface UnitAgentPresence {
  status: UnitAgentStatus
  /** When the machine agent entered the state that decided this; undefined when never heard of. */
  since: number | undefined
  /** When the machine agent was last heard, and by which peer; undefined when never heard of. */
  lastHeardAt: number | undefined
  heardBy: string | undefined
}

/**
 * A unit's agent runs inside its machine agent, so it is `lost` when the machine agent
 * has not been heard from within the timeout (failed), has left, or was never heard of
 * at all; a suspect machine is still within the timeout.
 */
export function unitAgentPresence (machineMember: Member | undefined): UnitAgentPresence {
  if (machineMember === undefined) return { status: 'lost', since: undefined, lastHeardAt: undefined, heardBy: undefined }
  const lost = machineMember.state === 'failed' || machineMember.state === 'left'
  return {
    status: lost ? 'lost' : 'alive',
    since: machineMember.since,
    lastHeardAt: machineMember.lastHeardAt,
    heardBy: machineMember.heardBy
  }
}
