/**
 * Time reaches pure code only through this contract. It is a superset of XState's
 * `Clock` (setTimeout/clearTimeout), so the same object is passed to
 * `createActor(machine, { clock })` and actors fire delayed transitions on it.
 * The real one is `SystemClock` in agent/, the simulated one `SimClock` in sim/.
 */
export type TimerHandle = unknown

export interface Clock {
  /** Milliseconds since an arbitrary epoch; monotonic non-decreasing. */
  now (): number
  setTimeout (callback: () => void, delayMs: number): TimerHandle
  clearTimeout (handle: TimerHandle): void
}
