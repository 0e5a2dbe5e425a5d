import { assert } from '../assert.ts'
import { applyConfigChange } from './cluster-config.ts'
import type { ClusterConfig, Entry } from './raft-types.ts'

interface IndexedConfig {
  index: number
  config: ClusterConfig
}

/**
 * The membership a node's log establishes. A configuration takes effect as soon as its
 * entry is in the log, committed or not (dissertation §4.1), so when a new leader
 * overwrites uncommitted entries a follower must fall back to the configuration before
 * them. The history keeps the committed base and the configurations of the uncommitted
 * config-change entries after it (at most a few: a leader proposes one at a time).
 */
export class ConfigHistory {
  #base: IndexedConfig
  #uncommitted: IndexedConfig[] = []

  constructor (index: number, config: ClusterConfig) {
    this.#base = { index, config }
  }

  current (): ClusterConfig {
    return (this.#uncommitted[this.#uncommitted.length - 1] ?? this.#base).config
  }

  /** Index of the newest config-change entry in the log, or of the base. */
  latestIndex (): number {
    return (this.#uncommitted[this.#uncommitted.length - 1] ?? this.#base).index
  }

  /** Entries were appended from `entries[0].index` on, replacing anything there. True if the configuration changed. */
  onAppend (entries: readonly Entry[]): boolean {
    if (entries.length === 0) return false
    const before = this.current()
    const from = entries[0]!.index
    assert(from > this.#base.index, `raft config: entries from ${from} rewrite the committed configuration at ${this.#base.index}`)
    this.#uncommitted = this.#uncommitted.filter(c => c.index < from)
    for (const entry of entries) {
      if (entry.type !== 'config-change' || entry.configChange === undefined) continue
      this.#uncommitted.push({ index: entry.index, config: applyConfigChange(this.current(), entry.configChange) })
    }
    return this.current() !== before
  }

  /** Entries up to `commit` can no longer be overwritten: fold them into the base. */
  commitTo (commit: number): void {
    while (this.#uncommitted.length > 0 && this.#uncommitted[0]!.index <= commit) {
      this.#base = this.#uncommitted[0]!
      this.#uncommitted = this.#uncommitted.slice(1)
    }
  }

  /** A RaftSnapshot replaced the log. */
  reset (index: number, config: ClusterConfig): void {
    this.#base = { index, config }
    this.#uncommitted = []
  }
}
