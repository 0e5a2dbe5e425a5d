/**
 * Raft's safety properties, checked on a simulated controller group after every step
 * and on every message a controller sends (Raft dissertation §3.6 and Figure 3.2, plus
 * the durability rules of etcd's Ready contract):
 *
 * - election safety: at most one leader per term;
 * - leader append-only: while it leads a term, a leader never overwrites or deletes an
 *   entry of its persisted log (compaction behind a RaftSnapshot aside);
 * - log matching: two persisted logs with an entry of the same index and term agree on
 *   every earlier entry both hold;
 * - leader completeness: a leader of term T (once it has persisted its first Ready) holds
 *   every entry committed in a term before T: one that a server persisted as committed
 *   while its own term was below T (the commit happened in that term or earlier). A
 *   leader still acting in an older term, paused or cut off while later terms committed
 *   more, need not hold those (Raft's property is about higher-numbered terms only);
 * - state-machine safety: every server applies the same entry at each index;
 * - the persisted term never decreases and a persisted vote never changes within a
 *   term, and both are durable (synced) before any message that depends on them leaves
 *   (a vote granted in a term counts as durable once a later term is: that server can
 *   never vote in the earlier term again);
 *   an append acknowledgement leaves only once the entries it acknowledges are durable;
 * - a leader moves its commit index only onto an entry of its own term (Figure 8);
 * - a leader has at most one uncommitted configuration change in its log;
 * - at most one controller runs the singular workers (holds the controller lease);
 * - every command a client was told had committed is in the applied log at its index.
 *
 * Violations are collected as one-line strings; the scenario fails on the first.
 */
import type { ModelReplica } from '../../actors/controller/model-replica.ts'
import { Buffer } from 'node:buffer'
import { decode } from '../../runtime/codec.ts'
import type { CommandResult } from '../../runtime/model/model-types.ts'
import { raftHardStateKey, raftLogKey, raftSnapshotKey } from '../../runtime/raft/durable-raft-storage.ts'
import type { Entry, HardState, Message, NodeId, RaftSnapshot } from '../../runtime/raft/raft-types.ts'
import type { SimStorage } from '../sim-storage.ts'

/** What the checker needs to see of the group. */
export interface CheckedGroup {
  readonly ids: readonly NodeId[]
  readonly storages: readonly SimStorage[]
  node (i: number): ModelReplica | undefined
  isPaused (i: number): boolean
}

interface LeaderView {
  term: number
  /** The last index of its persisted log. */
  last: number
  commit: number
}

type PersistedLog = ReturnType<ModelReplica['host']['persistedLog']>

/** One node's persisted log as the checker follows it from step to step. */
interface FollowedLog {
  readonly id: NodeId
  /** Its position in the group. */
  readonly seat: number
  /** The storage mirror read (a restart brings a new one). */
  readonly log: PersistedLog
  /** The storage version `terms` reflects. */
  version: number
  /** The index before the first entry (the RaftSnapshot's); `terms[0]` is its term. */
  first: number
  terms: number[]
  /** Whether the log changed since the previous step. */
  changed: boolean
  /** Entries rewritten or removed since the previous step, with the terms they had. */
  overwritten: Array<{ index: number, term: number }>
}

/** Two logs known to agree on every index up to `verifiedUpTo`. */
interface Agreement {
  readonly a: NodeId
  readonly b: NodeId
  verifiedUpTo: number
}

interface AppliedRecord {
  term: number
  data: Uint8Array
  by: NodeId
}

const component = 'raft safety'
/** More seats than any controller group has (pair keys are seat × seatsMax + seat). */
const seatsMax = 1_000

export class RaftSafetyChecker {
  readonly violations: string[] = []
  readonly #group: CheckedGroup
  readonly #leaderOfTerm = new Map<number, NodeId>()
  /** Per node, its view while it leads (for append-only and commit checks). */
  readonly #leading = new Map<NodeId, LeaderView>()
  readonly #followed = new Map<NodeId, FollowedLog>()
  readonly #logs: FollowedLog[] = []
  readonly #holderIds: NodeId[] = []
  readonly #agreement = new Map<number, Agreement>()
  /** The term each leader was last checked for completeness in (once per term it leads). */
  readonly #completenessChecked = new Map<NodeId, number>()
  /** Index → every entry some server persisted as committed: its term, who was first seen holding it, and the lowest term a holder had then. */
  readonly #committed = new Map<number, { term: number, by: NodeId, seenInTerm: number }>()
  readonly #committedUpTo = new Map<NodeId, number>()
  readonly #applied = new Map<number, AppliedRecord>()
  /** Per node, the last persisted hard state seen (by value identity, to decode once). */
  readonly #hardStates = new Map<NodeId, { bytes: Uint8Array, state: HardState }>()
  readonly #snapshotIndexCache = new WeakMap<Uint8Array, number>()
  /** Acknowledged commands: index → their request ids (a group commit puts several at one), checked against the applied log. */
  readonly #acknowledged = new Map<number, string[]>()
  #maxLeaseHolders = 0
  /** RaftSnapshots received and installed by a follower, counted from applied jumps. */
  checks = 0

  constructor (group: CheckedGroup) {
    this.#group = group
  }

  /** The most controllers seen running the singular workers at once. */
  get maxLeaseHolders (): number {
    return this.#maxLeaseHolders
  }

  get appliedIndexMax (): number {
    let max = 0
    for (const index of this.#applied.keys()) if (index > max) max = index
    return max
  }

  // -------------------------------------------------------------------------------
  // Hooks

  /** Every entry a host applies (wire to the host's onApplied). */
  onApplied (id: NodeId, entry: Entry): void {
    const first = this.#applied.get(entry.index)
    if (first === undefined) {
      this.#applied.set(entry.index, { term: entry.term, data: entry.data, by: id })
      return
    }
    if (first.term !== entry.term || !sameBytes(first.data, entry.data)) {
      this.#violation(`state-machine safety: ${id} applied ${entry.index}@${entry.term} but ${first.by} applied ${entry.index}@${first.term} with ${sameBytes(first.data, entry.data) ? 'the same' : 'other'} data`)
    }
  }

  /** A client was told `result` for the command with `requestKey` (`<proposer> <request id>`). */
  onAcknowledged (requestId: string, result: CommandResult): void {
    const at = this.#acknowledged.get(result.index)
    if (at === undefined) this.#acknowledged.set(result.index, [requestId])
    else at.push(requestId)
  }

  /** Raft messages `from` hands to its transport: their terms, votes and acks must be durable. */
  onRaftSend (from: NodeId, messages: readonly Message[]): void {
    const i = this.#group.ids.indexOf(from)
    if (i < 0) return
    const storage = this.#group.storages[i]!
    const hard = this.#durableHardState(from, storage)
    for (const m of messages) {
      // A pre-vote asks about a term not yet entered; its answer echoes it. Neither is persisted.
      if (m.type === 'pre-vote' || m.type === 'pre-vote-response') continue
      if (m.term > 0 && (hard === undefined || hard.term < m.term)) {
        this.#violation(`durability: ${from} sent ${m.type} in term ${m.term} to ${m.to} with term ${hard?.term ?? 'nothing'} synced`)
        continue
      }
      if (m.type === 'vote' && hard!.term === m.term && hard!.vote !== from) {
        this.#violation(`durability: ${from} asked for votes in term ${m.term} before its own vote was synced (synced vote "${hard!.vote}")`)
      }
      // A later term persisted in the same Ready also covers the grant: this server can
      // never vote in the older term again.
      if (m.type === 'vote-response' && m.reject !== true && hard!.term === m.term && hard!.vote !== m.to) {
        this.#violation(`durability: ${from} granted its vote in term ${m.term} to ${m.to} with ${hard!.term}/"${hard!.vote}" synced`)
      }
      if (m.type === 'append-response' && m.reject !== true && m.index !== undefined && !this.#durableHolds(storage, m.index)) {
        this.#violation(`durability: ${from} acknowledged entries up to ${m.index} to ${m.to} before syncing them`)
      }
    }
  }

  // -------------------------------------------------------------------------------
  // After every step

  step (): void {
    this.checks++
    let holders = 0
    // Reused from step to step: this runs after every simulated event.
    const holderIds = this.#holderIds
    const logs = this.#logs
    holderIds.length = 0
    logs.length = 0
    // Once per step: each read of `ids` or `storages` builds a new array from the seats.
    const ids = this.#group.ids
    const storages = this.#group.storages
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!
      this.#checkDurableHardState(id, storages[i]!)
      const node = this.#group.node(i)
      if (node === undefined) {
        this.#leading.delete(id)
        continue
      }
      const host = node.host
      const status = host.basicStatus()
      if (status.role === 'leader') {
        const other = this.#leaderOfTerm.get(status.term)
        if (other === undefined) this.#leaderOfTerm.set(status.term, id)
        else if (other !== id) this.#violation(`election safety: ${id} and ${other} both lead term ${status.term}`)
      }
      const followed = this.#follow(id, i, host.persistedLog())
      logs.push(followed)
      if (followed.changed) this.#recordCommitted(id, followed.log.hardState(), followed.first, followed.terms)
      if (host.role === 'leader' && host.term === status.term && status.role === 'leader') {
        this.#checkLeader(followed, status.term, status.commit)
      } else {
        this.#leading.delete(id)
      }
      if (node.runsSingularWorkers() && !this.#group.isPaused(i)) {
        holders++
        holderIds.push(id)
      }
    }
    if (holders > this.#maxLeaseHolders) this.#maxLeaseHolders = holders
    if (holders > 1) this.#violation(`lease: ${holderIds.join(' and ')} run the singular workers at once`)
    this.#checkLogMatching(logs)
  }

  /**
   * The terms of `id`'s persisted log, brought up to date from what changed since the
   * last step (the storage says from which index), so that a step costs what changed
   * rather than the length of the log. A restarted node (a new storage mirror) is reread.
   */
  #follow (id: NodeId, seat: number, log: PersistedLog): FollowedLog {
    const first = log.firstIndex() - 1
    const last = log.lastIndex()
    const cached = this.#followed.get(id)
    if (cached !== undefined && cached.log === log && cached.version === log.version) {
      cached.changed = false
      if (cached.overwritten.length > 0) cached.overwritten = []
      return cached
    }
    let from = cached === undefined || cached.log !== log ? 0 : log.lowestIndexChangedSince(cached.version)
    if (cached === undefined || from <= first || first < cached.first) from = first
    const followed: FollowedLog = cached !== undefined && cached.log === log
      ? cached
      : { id, seat, log, version: log.version, first, terms: [], changed: true, overwritten: [] }
    followed.overwritten = []
    // The cached entries from `from` on were rewritten or removed: keep their old terms
    // for the leader append-only check, then reread them.
    const oldLast = followed.first + followed.terms.length - 1
    for (let index = Math.max(from, followed.first); index <= oldLast; index++) {
      followed.overwritten.push({ index, term: followed.terms[index - followed.first]! })
    }
    if (from === first) {
      followed.terms = []
      followed.first = first
    } else {
      if (first > followed.first) followed.terms = followed.terms.slice(first - followed.first)
      followed.first = first
      followed.terms.length = Math.min(followed.terms.length, Math.max(0, Math.min(from, last + 1) - first))
    }
    for (let index = followed.first + followed.terms.length; index <= last; index++) followed.terms.push(log.term(index))
    followed.version = log.version
    followed.changed = true
    for (const pair of this.#agreement.values()) {
      if (pair.a === id || pair.b === id) pair.verifiedUpTo = Math.min(pair.verifiedUpTo, from - 1)
    }
    this.#followed.set(id, followed)
    return followed
  }

  /** After the liveness phase: every acknowledged command is in the applied log at its index. */
  checkAcknowledged (appliedEverywhere: number): void {
    for (const [index, requestIds] of this.#acknowledged) {
      if (index > appliedEverywhere) {
        this.#violation(`durability: acknowledged ${requestIds.join(', ')} at ${index} is not applied everywhere (applied to ${appliedEverywhere})`)
        continue
      }
      const applied = this.#applied.get(index)
      const command = applied === undefined ? undefined : decode(applied.data, component) as { requestId?: unknown, type?: unknown, commands?: unknown }
      // A leader's group commit carries several commands in one `apply-batch` entry.
      const carried = command?.type === 'apply-batch' && Array.isArray(command.commands)
        ? (command.commands as Array<{ requestId?: unknown } | null>).map(c => c?.requestId)
        : [command?.requestId]
      for (const requestId of requestIds.filter(id => !carried.includes(id))) {
        this.#violation(`durability: acknowledged ${requestId} at ${index}, but the entry applied there is ${JSON.stringify(command?.requestId)}${carried.length > 1 ? ` carrying ${JSON.stringify(carried)}` : ''}`)
      }
    }
  }

  // -------------------------------------------------------------------------------

  #checkLeader (followed: FollowedLog, term: number, commit: number): void {
    const { id, first, terms, log } = followed
    if (this.#completenessChecked.get(id) !== term) {
      this.#completenessChecked.set(id, term)
      for (const [index, committed] of this.#committed) {
        // Committed in a term this leader's own is not above: not promised to it.
        if (index <= first || committed.seenInTerm >= term) continue
        const held = terms[index - first]
        if (held !== committed.term) {
          this.#violation(`leader completeness: ${id} leads term ${term} with ${held === undefined ? 'no entry' : `term ${held}`} at ${index}, committed there in term ${committed.term} (seen on ${committed.by})`)
        }
      }
    }
    const last = first + terms.length - 1
    const previous = this.#leading.get(id)
    if (previous !== undefined && previous.term === term) {
      if (last < previous.last) this.#violation(`leader append-only: ${id} (term ${term}) log shrank from ${previous.last} to ${last}`)
      for (const { index, term: before } of followed.overwritten) {
        if (index <= previous.last && terms[index - first] !== before) {
          this.#violation(`leader append-only: ${id} (term ${term}) rewrote entry ${index}`)
          break
        }
      }
      if (commit > previous.commit && commit > first && commit <= last && terms[commit - first] !== term) {
        this.#violation(`commit rule: ${id} (term ${term}) committed ${commit} whose entry is of term ${String(terms[commit - first])}`)
      }
    }
    const hard = log.hardState()
    if (followed.changed && hard.commit < last) {
      const tail = log.entries(Math.max(hard.commit + 1, log.firstIndex()), last + 1, Number.MAX_SAFE_INTEGER)
      const pending = tail.filter(entry => entry.type === 'config-change').length
      if (pending > 1) this.#violation(`membership: ${id} (term ${term}) has ${pending} uncommitted configuration changes`)
    }
    // A leader's commit may run ahead of its own disk: with its write deferred until its
    // appends are out (cantripd's deferLeaderWrite), two followers' acknowledgements commit
    // an entry the leader is still writing (Raft thesis 10.2.1). Its commit rule is checked
    // once the entry is on the leader's disk, so the commit seen is held at what it has.
    this.#leading.set(id, { term, last, commit: Math.min(commit, last) })
  }

  #recordCommitted (id: NodeId, hardState: HardState, first: number, terms: number[]): void {
    const commit = hardState.commit
    const from = Math.max(this.#committedUpTo.get(id) ?? 0, first) + 1
    for (let index = from; index <= commit && index - first < terms.length; index++) {
      const term = terms[index - first]!
      const known = this.#committed.get(index)
      if (known === undefined) this.#committed.set(index, { term, by: id, seenInTerm: hardState.term })
      else if (known.term !== term) this.#violation(`committed entry changed: ${id} holds ${index}@${term} as committed, ${known.by} held ${index}@${known.term}`)
      else if (hardState.term < known.seenInTerm) known.seenInTerm = hardState.term
    }
    if (commit > (this.#committedUpTo.get(id) ?? 0)) this.#committedUpTo.set(id, commit)
  }

  /**
   * Log matching between every two logs: below the highest index where both hold the
   * same term, they agree everywhere. A pair remembers how far it was verified, which
   * stays true until either log changes at or below it, so each step checks only what is
   * new.
   */
  #checkLogMatching (logs: readonly FollowedLog[]): void {
    for (let a = 0; a < logs.length; a++) {
      for (let b = a + 1; b < logs.length; b++) {
        const x = logs[a]!
        const y = logs[b]!
        // Keyed by seat numbers, not a string built each step: this runs after every event.
        const pairKey = x.seat * seatsMax + y.seat
        let pair = this.#agreement.get(pairKey)
        if (pair === undefined) {
          pair = { a: x.id, b: y.id, verifiedUpTo: -1 }
          this.#agreement.set(pairKey, pair)
        }
        if (!x.changed && !y.changed && pair.verifiedUpTo >= 0) continue
        const lo = Math.max(x.first, y.first, pair.verifiedUpTo + 1)
        const hi = Math.min(x.first + x.terms.length, y.first + y.terms.length) - 1
        let match = -1
        for (let index = hi; index >= lo; index--) {
          if (x.terms[index - x.first] === y.terms[index - y.first]) { match = index; break }
        }
        let agreed = match
        for (let index = lo; index < match; index++) {
          if (x.terms[index - x.first] !== y.terms[index - y.first]) {
            this.#violation(`log matching: ${x.id} and ${y.id} agree at ${match} but differ at ${index}`)
            agreed = -1
            break
          }
        }
        if (agreed >= 0) pair.verifiedUpTo = agreed
        else pair.verifiedUpTo = Math.max(pair.verifiedUpTo, Math.max(x.first, y.first) - 1)
      }
    }
  }

  #checkDurableHardState (id: NodeId, storage: SimStorage): void {
    const previous = this.#hardStates.get(id)
    const bytes = storage.durableGet(raftHardStateKey)
    if (bytes === undefined || bytes === previous?.bytes) return
    const state = decode(bytes, component) as HardState
    if (previous !== undefined) {
      if (state.term < previous.state.term) this.#violation(`term: ${id} persisted term ${state.term} after ${previous.state.term}`)
      if (state.term === previous.state.term && previous.state.vote !== '' && state.vote !== previous.state.vote) {
        this.#violation(`vote: ${id} persisted a vote for "${state.vote}" in term ${state.term} after voting for "${previous.state.vote}"`)
      }
    }
    this.#hardStates.set(id, { bytes, state })
  }

  #durableHardState (id: NodeId, storage: SimStorage): HardState | undefined {
    this.#checkDurableHardState(id, storage)
    return this.#hardStates.get(id)?.state
  }

  #durableHolds (storage: SimStorage, index: number): boolean {
    if (storage.durableGet(raftLogKey(index)) !== undefined) return true
    const bytes = storage.durableGet(raftSnapshotKey)
    if (bytes === undefined) return false
    let snapshotIndex = this.#snapshotIndexCache.get(bytes)
    if (snapshotIndex === undefined) {
      snapshotIndex = (decode(bytes, component) as RaftSnapshot).metadata.index
      this.#snapshotIndexCache.set(bytes, snapshotIndex)
    }
    return snapshotIndex >= index
  }

  #violation (what: string): void {
    if (this.violations.length < 20) this.violations.push(what)
  }
}

/** Every entry applied on a second controller is compared: natively, not a byte at a time. */
function sameBytes (a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false
  return Buffer.compare(a, b) === 0
}
