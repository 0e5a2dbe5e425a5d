/**
 * Copies to this controller every charm archive the model names that its own store lacks.
 * An upload is committed only once a majority holds the archive (replicated-charm-store.ts),
 * but a controller that joins later (enable-ha after deploys, a replacement) held none of
 * the earlier ones, and fetched each only on first use: if the controller that had them
 * died first, the archives were gone, and a unit added afterwards waited for its charm for
 * good. Juju's new controllers take the whole blob store with the database before they
 * vote; here each controller, from its start, whenever the charms its applied model names
 * change (a joining controller's model names them only once it has caught up) and, while
 * one is still missing, every limits.charmBackfillIntervalMs (a peer that had it may be
 * back), asks its peers for what its own store lacks, so every member holds every archive
 * within moments of a join. An archive found held is not looked up again: a settled
 * controller does no store reads until the model names a new charm.
 */
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import { limits } from '../../runtime/limits.ts'
import type { Logger } from '../../runtime/logger.ts'

export interface CharmBackfillOptions {
  clock: Clock
  /** The archives the applied model names (charms' hashes). */
  hashes: () => Iterable<string>
  /** Whether this controller's own store holds the archive. */
  held: (hash: string) => Promise<boolean>
  /** Fetches the archive from the peers into this controller's store; false when none had it. */
  fetch: (hash: string) => Promise<boolean>
  logger?: Logger
  intervalMs?: number
  /** What the store keeps, for the log line of a failed copy (default "charm archive"). */
  content?: string
}

export class CharmBackfill {
  readonly #o: CharmBackfillOptions
  #timer: TimerHandle | undefined
  #running: Promise<void> | undefined
  /** The charms changed during a pass, or it left some unexamined: another follows at once. */
  #again = false
  /** Archives the model names that this store holds: not looked up again. */
  readonly #known = new Set<string>()
  #stopped = false

  constructor (options: CharmBackfillOptions) {
    this.#o = options
  }

  /** One pass now, then one every interval while an archive is missing, and one on every change. */
  start (): void {
    this.#schedule(0)
  }

  /** The model's charms changed: a pass now (after the running one, if any). */
  changed (): void {
    if (this.#stopped) return
    if (this.#running !== undefined) {
      this.#again = true
      return
    }
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#schedule(0)
  }

  stop (): void {
    this.#stopped = true
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /**
   * Runs one pass (for tests and the start): resolves with the archives still missing.
   * Looks up at most limits.charmBackfillPerPassMax archives not yet known held; the rest
   * wait for the pass that follows at once.
   */
  async pass (): Promise<string[]> {
    const named = new Set(this.#o.hashes())
    for (const hash of this.#known) if (!named.has(hash)) this.#known.delete(hash)
    const missing: string[] = []
    let looked = 0
    for (const hash of named) {
      if (this.#stopped) break
      if (this.#known.has(hash)) continue
      if (looked++ >= limits.charmBackfillPerPassMax) {
        this.#again = true
        break
      }
      if (await this.#copied(hash)) this.#known.add(hash)
      else missing.push(hash)
    }
    return missing
  }

  /** Whether the store holds `hash`, now or after a copy from a peer. */
  async #copied (hash: string): Promise<boolean> {
    if (await this.#o.held(hash)) return true
    try {
      // The store logs each copy with the peer it came from (replicated-charm-store.ts).
      return await this.#o.fetch(hash)
    } catch (error) {
      this.#o.logger?.log('warning', `cannot copy ${this.#o.content ?? 'charm archive'} "${hash}" from a peer controller: ${error instanceof Error ? error.message : String(error)}`, { hash })
      return false
    }
  }

  #schedule (delayMs: number): void {
    if (this.#stopped || this.#timer !== undefined || this.#running !== undefined) return
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined
      this.#running = this.pass().then(missing => missing.length, () => 1).then(missing => {
        this.#running = undefined
        const again = this.#again
        this.#again = false
        if (again) this.#schedule(0)
        else if (missing > 0) this.#schedule(this.#o.intervalMs ?? limits.charmBackfillIntervalMs)
      })
    }, delayMs)
  }
}
