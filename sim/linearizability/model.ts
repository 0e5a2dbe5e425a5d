import type { Operation } from './history.ts'

/**
 * The sequential specification a history is checked against: what one operation does
 * to the state when operations run one at a time.
 *
 * `step` receives `output === undefined` for an operation that never returned. It must
 * then accept (the reply is unknown, so any reply would do) and move to the state the
 * operation would have produced. Models here are deterministic, so that state is unique.
 * Outputs should therefore never be `undefined` themselves; wrap them in an object.
 *
 * States are values: `step` must not mutate the state it is given, because the search
 * backtracks to earlier states.
 */
export interface Model<S, I, O> {
  init (): S
  step (state: S, input: I, output: O | undefined): { ok: boolean, next: S }
  /**
   * Splits a history into independent sub-histories (for a key-value store, one per key)
   * that are checked separately: a history is linearizable exactly when every part is,
   * and the parts are far cheaper to search than the whole. Operations that can never
   * constrain anything may be left out.
   */
  partition? (operations: ReadonlyArray<Operation<I, O>>): Array<Array<Operation<I, O>>>
  /** A string equal for equal states: the memo key. Preferred over `equal`. */
  hash? (state: S): string
  /** State equality, used for memoisation when there is no `hash`. */
  equal? (a: S, b: S): boolean
  /** One line for an operation in explanations; `output` is undefined if it never returned. */
  describe (input: I, output: O | undefined): string
  /** One line for a state in explanations. */
  describeState? (state: S): string
}

// ---------------------------------------------------------------------------------
// A key-value store: what cantrip's replicated stores promise their clients.

export type KvInput =
  | { readonly op: 'put', readonly key: string, readonly value: string }
  | { readonly op: 'get', readonly key: string }
  /** Sets `value` only if the key currently holds `expect` (undefined: only if absent). */
  | { readonly op: 'cas', readonly key: string, readonly expect: string | undefined, readonly value: string }
  /** Concatenates `value` onto the current value (absent counts as ''). */
  | { readonly op: 'append', readonly key: string, readonly value: string }

export type KvOutput =
  | { readonly op: 'put' }
  | { readonly op: 'get', readonly value: string | undefined }
  | { readonly op: 'cas', readonly swapped: boolean }
  | { readonly op: 'append' }

/** The whole store; after partitioning by key each part only ever holds one key. */
export type KvState = ReadonlyMap<string, string>

/** Builders for inputs and outputs, so histories read like the calls they record. */
export const kv = {
  put: (key: string, value: string): KvInput => ({ op: 'put', key, value }),
  get: (key: string): KvInput => ({ op: 'get', key }),
  cas: (key: string, expect: string | undefined, value: string): KvInput => ({ op: 'cas', key, expect, value }),
  append: (key: string, value: string): KvInput => ({ op: 'append', key, value }),
  ok: (op: 'put' | 'append'): KvOutput => ({ op }),
  value: (value: string | undefined): KvOutput => ({ op: 'get', value }),
  swapped: (swapped: boolean): KvOutput => ({ op: 'cas', swapped })
} as const

function withValue (state: KvState, key: string, value: string): KvState {
  const next = new Map(state)
  next.set(key, value)
  return next
}

function quote (value: string | undefined): string {
  return value === undefined ? 'undefined' : JSON.stringify(value)
}

/** The register per key that `put`, `get`, `cas` and `append` act on; partitions by key. */
export const kvModel: Model<KvState, KvInput, KvOutput> = {
  init: () => new Map(),

  step (state, input, output) {
    if (output !== undefined && output.op !== input.op) return { ok: false, next: state }
    const current = state.get(input.key)
    switch (input.op) {
      case 'put':
        return { ok: true, next: withValue(state, input.key, input.value) }
      case 'append':
        return { ok: true, next: withValue(state, input.key, (current ?? '') + input.value) }
      case 'get':
        return { ok: output === undefined || (output.op === 'get' && output.value === current), next: state }
      case 'cas': {
        const swaps = current === input.expect
        const ok = output === undefined || (output.op === 'cas' && output.swapped === swaps)
        return { ok, next: swaps ? withValue(state, input.key, input.value) : state }
      }
    }
  },

  partition (operations) {
    const byKey = new Map<string, Array<Operation<KvInput, KvOutput>>>()
    for (const op of operations) {
      // A read that never returned changes nothing and was observed by no one.
      if (op.input.op === 'get' && op.return === undefined) continue
      let part = byKey.get(op.input.key)
      if (part === undefined) byKey.set(op.input.key, part = [])
      part.push(op)
    }
    return [...byKey.values()]
  },

  hash (state) {
    if (state.size === 0) return ''
    if (state.size === 1) {
      const [key, value] = state.entries().next().value as [string, string]
      return JSON.stringify([key, value])
    }
    return JSON.stringify([...state.entries()].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
  },

  equal (a, b) {
    if (a.size !== b.size) return false
    for (const [key, value] of a) if (b.get(key) !== value) return false
    return true
  },

  describe (input, output) {
    const call = input.op === 'get'
      ? `get(${quote(input.key)})`
      : input.op === 'cas'
        ? `cas(${quote(input.key)}, ${quote(input.expect)}, ${quote(input.value)})`
        : `${input.op}(${quote(input.key)}, ${quote(input.value)})`
    if (output === undefined) return `${call} → ? (never returned)`
    switch (output.op) {
      case 'get': return `${call} → ${quote(output.value)}`
      case 'cas': return `${call} → ${output.swapped ? 'swapped' : 'not swapped'}`
      default: return `${call} → ok`
    }
  },

  describeState (state) {
    if (state.size === 0) return 'empty'
    return [...state.entries()].map(([key, value]) => `${quote(key)}=${quote(value)}`).join(', ')
  }
}
