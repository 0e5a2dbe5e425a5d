/**
 * Runs a simulated clock in small steps, letting promise callbacks run between them,
 * until a promise settles: for tests that drive simulated providers by hand.
 */
import * as assert from 'uvu/assert'

export interface SteppedClock { advance: (ms: number) => void }

/** Lets promise callbacks, and what they queue, run before time moves again. */
export const flush = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

export async function settle<T> (clock: SteppedClock, promise: Promise<T>, stepMs: number, budgetMs = 60_000): Promise<T> {
  let done = false
  void promise.then(() => { done = true }, () => { done = true })
  await flush()
  for (let spent = 0; !done; spent += stepMs) {
    if (spent > budgetMs) assert.unreachable(`not settled within ${budgetMs} simulated ms`)
    clock.advance(stepMs)
    await flush()
  }
  return await promise
}
