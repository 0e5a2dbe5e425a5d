/**
 * A small world for exercising transports on their own: a SimClock, a SimNetwork on a
 * seeded "network" stream, and N started peers. `wait` drives the clock the way the
 * network needs: one timer at a time with promise callbacks run in between, so an
 * async request handler answers at the simulated time it was called, not at the end
 * of a long `advance`. The transport compliance suite runs on it, and so can any test
 * or scenario that needs only the network.
 */
import { assert } from '../runtime/assert.ts'
import { limits } from '../runtime/limits.ts'
import { SeededRandom } from '../runtime/random.ts'
import type { PeerId } from '../runtime/transport.ts'
import { SimClock } from './sim-clock.ts'
import { SimNetwork, type LatencyDistribution, type SimTransport } from './sim-network.ts'

export interface SimNetworkWorldOptions {
  seed: number
  /** Peer ids to start, or how many to start as `peer-0`, `peer-1`, ... */
  peers: PeerId[] | number
  latency?: LatencyDistribution
  onEvent?: (text: string) => void
  /** The clock to run on; a new one starting at 0 when not given. */
  clock?: SimClock
}

/** Lets promise callbacks, and whatever they queue, run before time moves again. */
const settleMicrotasks = (): Promise<void> => new Promise(resolve => setImmediate(resolve))

export class SimNetworkWorld {
  readonly clock: SimClock
  readonly network: SimNetwork
  readonly transports: SimTransport[]

  constructor (options: SimNetworkWorldOptions) {
    this.clock = options.clock ?? new SimClock()
    const network = new SimNetwork({
      clock: this.clock,
      random: new SeededRandom(options.seed).stream('network'),
      ...(options.latency === undefined ? {} : { latency: options.latency }),
      ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent })
    })
    this.network = network
    const ids = typeof options.peers === 'number'
      ? Array.from({ length: options.peers }, (_, i) => `peer-${i}`)
      : options.peers
    this.transports = ids.map(id => network.transport(id))
  }

  /** Lets `ms` of simulated time pass, one timer at a time, settling promises after each. */
  async wait (ms: number): Promise<void> {
    assert(Number.isFinite(ms) && ms >= 0, `sim-network-world: wait needs a finite ms >= 0, got ${String(ms)}`)
    const until = this.clock.now() + ms
    await settleMicrotasks()
    for (let fired = 0; ; fired++) {
      const due = this.clock.nextDueAt()
      if (due === undefined || due > until) break
      // The same bound as one SimClock.advance: a wait is an advance taken in steps.
      assert(fired < limits.simClockTimersPerAdvanceMax,
        `sim-network-world: more than ${limits.simClockTimersPerAdvanceMax} timers in one wait at ${this.clock.now()} ms; a timer loop keeps rescheduling itself`)
      this.clock.runNext()
      await settleMicrotasks()
    }
    this.clock.advanceTo(until)
    await settleMicrotasks()
  }

  /** Stops every running peer (their waiting requests reject). */
  async close (): Promise<void> {
    for (const id of this.network.peers()) this.network.crash(id)
    await settleMicrotasks()
  }
}
