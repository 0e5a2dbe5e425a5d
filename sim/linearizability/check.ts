import { assert } from '../../runtime/assert.ts'
import { historyProblems, type History, type Operation } from './history.ts'
import type { Model } from './model.ts'

/**
 * Linearizability checking in the style of Wing & Gong, with Lowe's memoisation and
 * Porcupine's per-partition search.
 *
 * The history becomes a list of call and return events in time order. The search walks
 * it from the front: at a call it tries to linearize that operation now (the model must
 * accept it from the current state), removing its call and return from the list and
 * starting again from the front; at a return whose operation is not yet linearized it has
 * run out of candidates and backtracks to the last choice. A configuration (which
 * operations are linearized, model state) that was already explored is never explored
 * again, which is what keeps the search polynomial on the histories real systems make.
 *
 * An operation that never returned has no return event: it can be linearized after its
 * call like any other, but nothing forces it to be, and the search succeeds once every
 * operation that did return is linearized.
 */

/**
 * Bounds of the checker. Named here rather than in `runtime/limits.ts`: they bound the
 * simulator's checker, which lives in this folder, and nothing in the runtime uses them.
 */
export const linearizabilityLimits = {
  /** Model steps one check may try (over all partitions) before answering 'unknown'. */
  exploredStatesMax: 5_000_000,
  /** Operations listed in a failure explanation; earlier ones are counted, not listed. */
  explanationOperationsMax: 20,
  /** Operations of the longest partial linearization listed in an explanation. */
  explanationLinearizationMax: 10
} as const

export type CheckResult =
  | { readonly ok: true }
  /** `operationIds`: the smallest failing prefix of the failing partition, in call order. */
  | { readonly ok: false, readonly explanation: string, readonly operationIds: readonly number[] }
  | { readonly ok: 'unknown', readonly reason: string }

export interface CheckOptions {
  /** Overrides `linearizabilityLimits.exploredStatesMax` for this check. */
  readonly timeBudgetOps?: number
}

export function checkLinearizable<S, I, O> (model: Model<S, I, O>, history: History<I, O>, options: CheckOptions = {}): CheckResult {
  const problems = historyProblems(history)
  assert(problems.length === 0, `linearizability: malformed history: ${problems.slice(0, 5).join('; ')}`)
  const stepsMax = options.timeBudgetOps ?? linearizabilityLimits.exploredStatesMax
  assert(Number.isSafeInteger(stepsMax) && stepsMax > 0, `linearizability: timeBudgetOps must be a positive integer, got ${String(stepsMax)}`)

  const parts = model.partition !== undefined ? model.partition(history) : [[...history]]
  // Small parts first: a cheap failure should not wait behind an expensive success.
  const order = parts.map((part, index) => ({ part, index })).sort((a, b) => a.part.length - b.part.length || a.index - b.index)
  let stepsLeft = stepsMax
  for (const { part } of order) {
    const result = search(model, part, stepsLeft, false)
    stepsLeft -= result.steps
    if (result.verdict === 'not-linearizable') return explain(model, part, stepsMax)
    if (result.verdict === 'unknown') {
      return { ok: 'unknown', reason: `linearizability: gave up after ${stepsMax} model steps (timeBudgetOps) while checking a part of ${part.length} of ${history.length} operations` }
    }
  }
  return { ok: true }
}

// ---------------------------------------------------------------------------------
// The search over one partition.

interface SearchResult<S> {
  verdict: 'linearizable' | 'not-linearizable' | 'unknown'
  steps: number
  /** With `trackDeepest`: the longest partial linearization found (operation indices) and its end state. */
  deepest: { order: number[], state: S } | undefined
}

/** The call and return events of a partition in time order, calls first at equal times. */
interface EventList {
  /** Per event: index of its operation. */
  op: Int32Array
  /** Per event: 1 for a call, 0 for a return. */
  isCall: Uint8Array
  /** Per operation: the position of its return event, or -1 if it never returned. */
  returnOf: Int32Array
  /** Per operation: the position of its call event. */
  callOf: Int32Array
}

function eventList<I, O> (ops: ReadonlyArray<Operation<I, O>>): EventList {
  const events: Array<{ time: number, isCall: boolean, op: number }> = []
  ops.forEach((o, i) => {
    events.push({ time: o.call, isCall: true, op: i })
    if (o.return !== undefined) events.push({ time: o.return, isCall: false, op: i })
  })
  // Calls before returns at equal times makes such operations concurrent (see history.ts).
  events.sort((a, b) => a.time - b.time || Number(b.isCall) - Number(a.isCall) || a.op - b.op)
  const list: EventList = {
    op: new Int32Array(events.length),
    isCall: new Uint8Array(events.length),
    returnOf: new Int32Array(ops.length).fill(-1),
    callOf: new Int32Array(ops.length)
  }
  events.forEach((e, position) => {
    list.op[position] = e.op
    list.isCall[position] = e.isCall ? 1 : 0
    if (e.isCall) list.callOf[e.op] = position
    else list.returnOf[e.op] = position
  })
  return list
}

/** Remembers explored (linearized set, state) configurations. */
function memo<S, I, O> (model: Model<S, I, O>): (linearized: string, state: S) => boolean {
  if (model.hash === undefined && model.equal !== undefined) {
    const equal = model.equal.bind(model)
    const seen = new Map<string, S[]>()
    return (linearized, state) => {
      const states = seen.get(linearized)
      if (states === undefined) { seen.set(linearized, [state]); return true }
      if (states.some(s => equal(s, state))) return false
      states.push(state)
      return true
    }
  }
  const hash = model.hash !== undefined ? model.hash.bind(model) : (state: S): string => JSON.stringify(state) ?? 'undefined'
  const seen = new Set<string>()
  return (linearized, state) => {
    const key = linearized + '\u0000' + hash(state)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  }
}

/** The bitset as a string of 16-bit code units: compact and usable as a map key. */
function bitsKey (words: Uint16Array): string {
  let key = ''
  const chunk = 4096
  for (let i = 0; i < words.length; i += chunk) key += String.fromCharCode(...words.subarray(i, i + chunk))
  return key
}

function search<S, I, O> (model: Model<S, I, O>, ops: ReadonlyArray<Operation<I, O>>, stepsMax: number, trackDeepest: boolean): SearchResult<S> {
  const events = eventList(ops)
  const count = events.op.length
  // A doubly linked list over event positions, with a sentinel head at `count` and -1 as
  // the end. Removing an operation unlinks its events; backtracking relinks them in the
  // reverse order, which restores the list exactly.
  const head = count
  const next = new Int32Array(count + 1)
  const prev = new Int32Array(count + 1)
  for (let i = 0; i < count; i++) { next[i] = i + 1 < count ? i + 1 : -1; prev[i] = i === 0 ? head : i - 1 }
  next[head] = count > 0 ? 0 : -1
  prev[head] = -1

  const unlink = (e: number): void => {
    const p = prev[e]!; const n = next[e]!
    next[p] = n
    if (n !== -1) prev[n] = p
  }
  const relink = (e: number): void => {
    const p = prev[e]!; const n = next[e]!
    next[p] = e
    if (n !== -1) prev[n] = e
  }

  let returnedLeft = 0
  for (let i = 0; i < ops.length; i++) if (events.returnOf[i] !== -1) returnedLeft++

  const words = new Uint16Array(Math.ceil(ops.length / 16))
  const seen = memo(model)
  const stackCall: number[] = []
  const stackState: S[] = []
  let state = model.init()
  let steps = 0
  let deepest: SearchResult<S>['deepest']
  let entry = next[head]!

  while (returnedLeft > 0) {
    // The first return event in the list belongs to an unlinearized operation, so the
    // scan from the front always meets one before the end while any is left.
    assert(entry !== -1, 'linearizability: event list ended with returned operations left unlinearized')
    const i = events.op[entry]!
    if (events.isCall[entry] === 1) {
      if (++steps > stepsMax) return { verdict: 'unknown', steps, deepest }
      const op = ops[i]!
      const returned = op.return !== undefined
      const result = model.step(state, op.input, returned ? op.output : undefined)
      if (result.ok) {
        words[i >> 4] = words[i >> 4]! | (1 << (i & 15))
        if (seen(bitsKey(words), result.next)) {
          stackCall.push(entry)
          stackState.push(state)
          state = result.next
          unlink(entry)
          const ret = events.returnOf[i]!
          if (ret !== -1) { unlink(ret); returnedLeft-- }
          if (trackDeepest && (deepest === undefined || stackCall.length > deepest.order.length)) {
            deepest = { order: stackCall.map(e => events.op[e]!), state }
          }
          entry = next[head]!
          continue
        }
        words[i >> 4] = words[i >> 4]! & ~(1 << (i & 15))
      }
      entry = next[entry]!
    } else {
      const call = stackCall.pop()
      if (call === undefined) return { verdict: 'not-linearizable', steps, deepest }
      state = stackState.pop()!
      const j = events.op[call]!
      words[j >> 4] = words[j >> 4]! & ~(1 << (j & 15))
      const ret = events.returnOf[j]!
      if (ret !== -1) { relink(ret); returnedLeft++ }
      relink(call)
      entry = next[call]!
    }
  }
  return { verdict: 'linearizable', steps, deepest }
}

// ---------------------------------------------------------------------------------
// Explaining a failure.

/**
 * The prefix of a partition up to and including return event `position`: operations
 * called before it, those that returned after it turned into never-returned ones.
 */
function prefixAt<I, O> (ops: ReadonlyArray<Operation<I, O>>, events: EventList, position: number): Array<Operation<I, O>> {
  const prefix: Array<Operation<I, O>> = []
  ops.forEach((o, i) => {
    if (events.callOf[i]! >= position) return
    const ret = events.returnOf[i]!
    prefix.push(ret !== -1 && ret <= position ? o : { ...o, output: undefined, return: undefined })
  })
  return prefix
}

/**
 * Finds the smallest failing prefix: the earliest return after which no linearization
 * exists. Failure is monotone in the prefix (a linearization of a longer prefix, cut at
 * the last operation that returned in the shorter one, linearizes the shorter one), so a
 * binary search over the return events finds it. The operation returning there is the
 * culprit: everything before it is linearizable, it cannot join.
 */
function explain<S, I, O> (model: Model<S, I, O>, ops: ReadonlyArray<Operation<I, O>>, stepsMax: number): CheckResult {
  const events = eventList(ops)
  const returns: number[] = []
  for (let position = 0; position < events.op.length; position++) if (events.isCall[position] === 0) returns.push(position)
  assert(returns.length > 0, 'linearizability: a part with no returned operation cannot fail')

  let lo = 0
  let hi = returns.length - 1
  let exact = true
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    const verdict = search(model, prefixAt(ops, events, returns[mid]!), stepsMax, false).verdict
    if (verdict === 'unknown') { exact = false; break }
    if (verdict === 'not-linearizable') hi = mid
    else lo = mid + 1
  }
  const cut = exact ? returns[hi]! : returns[returns.length - 1]!
  const prefix = prefixAt(ops, events, cut)
  const culpritIndex = events.op[cut]!
  const culprit = ops[culpritIndex]!
  const { deepest } = search(model, prefix, stepsMax, true)

  const line = (o: Operation<I, O>, output: O | undefined = o.output): string =>
    `#${o.id} ${o.client}: ${model.describe(o.input, output)} [${o.call}, ${o.return ?? '…'}]`
  const describeState = (s: S): string => model.describeState !== undefined ? model.describeState(s) : (JSON.stringify(s) ?? 'undefined')

  const out: string[] = []
  out.push(exact
    ? `not linearizable: once #${culprit.id} returns, no order of the operations so far respects both real time and the model (until then one does)`
    : 'not linearizable (search budget too small to find the smallest failing prefix; showing the whole part)')
  out.push(`culprit: ${line(culprit)}`)
  const shown = [...prefix].sort((a, b) => a.call - b.call || a.id - b.id)
  const hidden = Math.max(0, shown.length - linearizabilityLimits.explanationOperationsMax)
  out.push(`operations in the failing prefix, by call time ([call, return], … = did not return by then):${hidden > 0 ? ` (${hidden} earlier not shown)` : ''}`)
  for (const o of shown.slice(hidden)) {
    // Operations cut to pending in the prefix still show the reply they eventually got.
    const original = ops.find(x => x.id === o.id)!
    out.push(`  ${line(o, original.output)}${o.id === culprit.id ? '   <- cannot be linearized' : ''}`)
  }
  if (deepest !== undefined) {
    const order = deepest.order.map(i => prefix[i]!)
    const skipped = Math.max(0, order.length - linearizabilityLimits.explanationLinearizationMax)
    out.push(`longest partial linearization found (${order.length} operations${skipped > 0 ? `, last ${order.length - skipped} shown` : ''}): ${order.slice(skipped).map(o => `#${o.id} ${model.describe(o.input, o.output)}`).join(', ')}`)
    out.push(`state after it: ${describeState(deepest.state)}`)
  } else {
    out.push(`no operation can be linearized first; initial state: ${describeState(model.init())}`)
  }
  return { ok: false, explanation: out.join('\n'), operationIds: shown.map(o => o.id) }
}
