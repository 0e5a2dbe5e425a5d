/**
 * Copies to this controller every charm archive the model names that its own store lacks.
 * An upload is committed only once a majority holds the archive (replicated-charm-store.ts),
 * but a controller that joins later (enable-ha after deploys, a replacement) held none of
 * the earlier ones, and fetched each only on first use: if the controller that had them
 * died first, the archives were gone, and a unit added afterwards waited for its charm for
 * good. Juju's new controllers take the whole blob store with the database before they
 * vote; here each controller, from its start, whenever the charms its applied model names
 * change (a joining controller's model names them only once it has caught up) and every
 * limits.charmBackfillIntervalMs (a peer that had an archive may be back), asks its peers
 * for what its own store lacks, so every member holds every archive within moments of a join.
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
}

export class CharmBackfill {
  readonly #o: CharmBackfillOptions
  #timer: TimerHandle | undefined
  #running: Promise<void> | undefined
  /** The charms changed during a pass: another follows at once. */
  #again = false
  #stopped = false

  constructor (options: CharmBackfillOptions) {
    this.#o = options
  }

  /** One pass now, then one every interval. */
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

  /** Runs one pass (for tests and the start): resolves with the archives still missing. */
  async pass (): Promise<string[]> {
    const missing: string[] = []
    const hashes = [...new Set(this.#o.hashes())].slice(0, limits.charmBackfillPerPassMax)
    for (const hash of hashes) {
      if (this.#stopped) break
      if (await this.#o.held(hash)) continue
      try {
        // The store logs each copy with the peer it came from (replicated-charm-store.ts).
        if (await this.#o.fetch(hash)) continue
      } catch (error) {
        this.#o.logger?.log('warning', `cannot copy charm archive "${hash}" from a peer controller: ${error instanceof Error ? error.message : String(error)}`, { hash })
      }
      missing.push(hash)
    }
    return missing
  }

  #schedule (delayMs: number): void {
    if (this.#stopped || this.#timer !== undefined || this.#running !== undefined) return
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined
      this.#running = this.pass().then(() => {}, () => {}).then(() => {
        this.#running = undefined
        const again = this.#again
        this.#again = false
        this.#schedule(again ? 0 : this.#o.intervalMs ?? limits.charmBackfillIntervalMs)
      })
    }, delayMs)
  }
}
