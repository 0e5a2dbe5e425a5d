import { createHash, type Hash } from 'node:crypto'
import { SeededRandom, type Random } from '../runtime/random.ts'
import { SimClock } from './sim-clock.ts'

/**
 * One simulated run: one seed, one clock, one trace. The seed yields named PRNG streams
 * (network, disk, clock, workload, faults) so that a new consumer of one stream never
 * shifts the draws of another. Everything that happens is written to the trace, whose
 * hash is the run's fingerprint: the same seed and the same code give the same hash.
 */
export type StreamName = 'network' | 'disk' | 'clock' | 'workload' | 'faults'

export interface SimulationOptions {
  seed: number
  /** Keep trace lines in memory (for reports and debugging); the hash is always kept. */
  keepTrace?: boolean
  /** The command that re-runs this simulation, printed on failure. */
  replay?: string
}

/** Trace lines kept in memory at most; beyond it only the hash grows. */
const traceLinesKeptMax = 200_000

export class Simulation {
  readonly seed: number
  readonly clock: SimClock
  readonly #root: SeededRandom
  readonly #streams = new Map<string, Random>()
  readonly #hash: Hash = createHash('sha256')
  readonly #keepTrace: boolean
  readonly lines: string[] = []
  #traceCount = 0
  readonly replay: string

  constructor (options: SimulationOptions) {
    this.seed = options.seed >>> 0
    this.clock = new SimClock()
    this.#root = new SeededRandom(this.seed)
    this.#keepTrace = options.keepTrace ?? false
    this.replay = options.replay ?? `CANTRIP_SEED=${this.seed} npm test`
  }

  /** The named stream; the same name always returns the same generator. */
  random (name: StreamName | string): Random {
    let stream = this.#streams.get(name)
    if (stream === undefined) {
      stream = this.#root.stream(name)
      this.#streams.set(name, stream)
    }
    return stream
  }

  /** Record one thing that happened, stamped with simulated time. */
  trace (line: string): void {
    const stamped = `${this.clock.now()} ${line}`
    // One update of the same bytes as the line and its newline fed apart: half the calls
    // into the hash, whose digest does not change.
    this.#hash.update(`${stamped}\n`)
    this.#traceCount++
    if (this.#keepTrace && this.lines.length < traceLinesKeptMax) this.lines.push(stamped)
  }

  get traceCount (): number { return this.#traceCount }

  /** The fingerprint of everything traced so far (does not end the trace). */
  traceHash (): string {
    return this.#hash.copy().digest('hex').slice(0, 16)
  }

  /** A failure message with what failed, the seed and the line that replays it. */
  failure (kind: 'safety' | 'liveness' | 'crash', what: string): string {
    return `sim: ${kind} failure: ${what} (seed=${this.seed}); replay: ${this.replay}`
  }
}
