import type { Deferral } from '../deferral.ts'
import { limits } from '../limits.ts'
import type { Entry, RaftRole, Ready } from './raft-types.ts'

/**
 * When RaftHost applies a Ready's committed entries.
 *
 * While the Ready is written: the committed entries below the first one it writes are on
 * this node's disk from earlier Readies and committed, so durable on a majority, and their
 * answers need not wait for the disk (etcd applies in parallel with its WAL write too; a
 * leader with more than one group in flight, or a follower sent a commit and the next
 * append together, has both in one Ready). The rest, and a Ready that changes the role,
 * the term or restores a RaftSnapshot, wait for the write.
 *
 * Deferred, when the host is given `defer` (cantripd: setImmediate): a follower's Ready that
 * must sync carries its acknowledgement of the leader's append, which is all a write waits
 * for here. Applied in the Ready, the entries the same append committed (the previous
 * write, commit-hold.ts) ran in the main thread ahead of it: the model's apply took longer
 * than the fsync it overlapped (~20 % of a follower's busy samples against ~10 % for the
 * LevelDB batch, issue 28), and after the write it would still run before the
 * acknowledgement, which reaches its socket only through many microtasks. Deferred, they
 * apply once those have run, or before anything else applies here, whichever is first, so
 * entries still apply in log order; at most limits.raftDeferredApplyEntriesMax wait.
 * Without `defer` every Ready applies in it (the simulator defers as cantripd does, with a
 * zero-delay step of its scheduler).
 */
export class ApplyTiming {
  readonly #defer: Deferral | undefined
  readonly #apply: (entries: readonly Entry[]) => void
  #waiting: Entry[] = []
  #scheduled = false

  /** `apply` applies entries in order (skipping those applied already) and serves what waited on them. */
  constructor (defer: Deferral | undefined, apply: (entries: readonly Entry[]) => void) {
    this.#defer = defer
    this.#apply = apply
  }

  /** Entries waiting for their deferred apply. */
  get waiting (): number {
    return this.#waiting.length
  }

  /** What `ready` may apply while it is written, `role` and `term` being the host's before it. */
  whileWritten (ready: Ready, role: RaftRole, term: number): readonly Entry[] {
    if (ready.softState !== undefined || ready.snapshot !== undefined || (ready.hardState !== undefined && ready.hardState.term !== term)) return []
    if (this.#defers(ready, role)) return []
    const firstWritten = ready.entries[0]?.index ?? Infinity
    const durable = ready.committedEntries.filter(entry => entry.index < firstWritten)
    if (durable.length > 0) this.flush()
    return durable
  }

  /** Applies `ready`'s committed entries once it is written and its messages sent: now, or deferred. */
  afterWritten (ready: Ready, role: RaftRole): void {
    if (ready.committedEntries.length === 0) return
    if (!this.#defers(ready, role) || this.#waiting.length + ready.committedEntries.length > limits.raftDeferredApplyEntriesMax) {
      this.flush()
      this.#apply(ready.committedEntries)
      return
    }
    for (const entry of ready.committedEntries) this.#waiting.push(entry)
    if (this.#scheduled) return
    this.#scheduled = true
    this.#defer!(() => {
      this.#scheduled = false
      this.flush()
    })
  }

  /** Applies what waits, at once. */
  flush (): void {
    if (this.#waiting.length === 0) return
    const entries = this.#waiting
    this.#waiting = []
    this.#apply(entries)
  }

  #defers (ready: Ready, role: RaftRole): boolean {
    return this.#defer !== undefined && ready.mustSync && role !== 'leader' && ready.softState === undefined && ready.snapshot === undefined
  }
}
