import type { FaultEvent } from './scenario-types.ts'

/**
 * Shrinking a failing fault schedule to a small one that still fails: delta debugging
 * (Zeller's ddmin) over the list — try the empty list, then halves, quarters, … and
 * their complements, keeping any part that still fails — which ends 1-minimal (removing
 * any one event makes it pass) when it runs to completion; then each remaining event is
 * simplified where it can be (a shorter `for`, fewer failing writes or hook runs), one
 * step at a time while the run still fails. Every run costs a whole simulation, so the
 * number of runs is capped, and a list already tried is never run twice.
 */

/** Runs one shrink may make by default: enough for ddmin over ~40 events plus simplification. */
export const shrinkRunsMax = 300
/** A `for` is not halved below this: shorter faults rarely matter and the steps add runs. */
const forMsFloor = 100

export interface ShrinkOptions<T> {
  /** At most this many calls of `stillFails` (default shrinkRunsMax). */
  maxRuns?: number
  /** Simpler variants of one item, most aggressive first; none when it cannot be simplified. */
  simplify?: (item: T) => T[]
  /** Told of each run and whether it still failed (progress). */
  onRun?: (items: readonly T[], fails: boolean, run: number) => void
}

export interface ShrinkResult<T> {
  items: T[]
  /** Runs made (calls of stillFails). */
  runs: number
  /** True when the run cap stopped the search before it was done (the result still fails, but may not be minimal). */
  exhausted: boolean
}

class RunsExhausted extends Error {}

export async function shrinkList<T> (
  items: readonly T[], stillFails: (items: T[]) => Promise<boolean>, options: ShrinkOptions<T> = {}
): Promise<ShrinkResult<T>> {
  const maxRuns = options.maxRuns ?? shrinkRunsMax
  const tried = new Map<string, boolean>()
  let runs = 0
  const fails = async (candidate: T[]): Promise<boolean> => {
    const key = JSON.stringify(candidate)
    const known = tried.get(key)
    if (known !== undefined) return known
    if (runs >= maxRuns) throw new RunsExhausted()
    runs++
    const result = await stillFails(candidate)
    tried.set(key, result)
    options.onRun?.(candidate, result, runs)
    return result
  }
  let current = [...items]
  try {
    current = await ddmin(current, fails)
    if (options.simplify !== undefined) current = await simplifyEach(current, options.simplify, fails)
    return { items: current, runs, exhausted: false }
  } catch (error) {
    // `current` is only ever replaced by a list that failed, so it is a valid answer here.
    if (error instanceof RunsExhausted) return { items: current, runs, exhausted: true }
    throw error
  }

  async function ddmin (list: T[], test: (l: T[]) => Promise<boolean>): Promise<T[]> {
    if (list.length === 0 || await test([])) return []
    let n = 2
    while (list.length >= 2) {
      const chunks = split(list, n)
      let reduced = false
      for (const chunk of chunks) {
        if (await test(chunk)) { list = chunk; current = list; n = 2; reduced = true; break }
      }
      if (!reduced && n > 2) {
        for (let i = 0; i < chunks.length; i++) {
          const complement = chunks.filter((_, j) => j !== i).flat()
          if (await test(complement)) { list = complement; current = list; n = Math.max(n - 1, 2); reduced = true; break }
        }
      }
      if (reduced) continue
      if (n >= list.length) break
      n = Math.min(n * 2, list.length)
    }
    // A single event left: the empty list was tried first, so it is needed.
    return list
  }

  async function simplifyEach (list: T[], simplify: (item: T) => T[], test: (l: T[]) => Promise<boolean>): Promise<T[]> {
    for (let i = 0; i < list.length; i++) {
      let progress = true
      while (progress) {
        progress = false
        for (const variant of simplify(list[i]!)) {
          const candidate = list.map((item, j) => j === i ? variant : item)
          if (await test(candidate)) { list = candidate; current = list; progress = true; break }
        }
      }
    }
    return list
  }
}

/** `list` in `n` nearly equal consecutive parts (no empty ones). */
function split<T> (list: readonly T[], n: number): T[][] {
  const parts: T[][] = []
  let start = 0
  for (let i = 0; i < n; i++) {
    const end = start + Math.floor((list.length - start) / (n - i))
    if (end > start) parts.push(list.slice(start, end))
    start = end
  }
  return parts
}

/** Simpler versions of one fault event: half its `for`, one failing write or hook run, a narrower delay. */
export function simplifyFault (event: FaultEvent): FaultEvent[] {
  const out: FaultEvent[] = []
  if ('forMs' in event && event.forMs !== undefined && event.forMs >= 2 * forMsFloor) {
    out.push({ ...event, forMs: Math.floor(event.forMs / 2) } as FaultEvent)
  }
  if (event.kind === 'disk-error' && event.writes > 1) out.push({ ...event, writes: 1 }, { ...event, writes: Math.floor(event.writes / 2) })
  if (event.kind === 'hook-fail' && event.times > 1) out.push({ ...event, times: 1 }, { ...event, times: event.times - 1 })
  if (event.kind === 'delay' && event.maxMs > event.minMs + 1) out.push({ ...event, maxMs: event.minMs + Math.floor((event.maxMs - event.minMs) / 2) })
  return out.filter(variant => JSON.stringify(variant) !== JSON.stringify(event))
}

/** A failing fault schedule shrunk with the fault simplifications. */
export async function shrinkFaults (
  faults: readonly FaultEvent[], stillFails: (faults: FaultEvent[]) => Promise<boolean>, options: Omit<ShrinkOptions<FaultEvent>, 'simplify'> = {}
): Promise<ShrinkResult<FaultEvent>> {
  return await shrinkList(faults, stillFails, { ...options, simplify: simplifyFault })
}
