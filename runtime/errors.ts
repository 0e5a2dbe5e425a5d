/**
 * Expected failures are classes with a static-like `name`; callers check `err.name`.
 * Messages: lower case, subject first, values quoted, no final period.
 */
export class CantripError extends Error {
  override name = 'CantripError'
  constructor (message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** Input that does not match what a component expects: names component, expectation and what arrived. */
export class InvalidInputError extends CantripError {
  override name = 'InvalidInputError'
  constructor (component: string, expected: string, got: unknown, options?: { cause?: unknown }) {
    super(`${component}: expected ${expected}, got ${describeValue(got)}`, options)
  }
}

/** A storage operation the store could not carry out (disk error, closed store, injected fault). */
export class StorageFailedError extends CantripError {
  override name = 'StorageFailedError'
  constructor (component: string, operation: string, detail: string, options?: { cause?: unknown }) {
    super(`${component}: cannot ${operation}: ${detail}`, options)
  }
}

/** A broken invariant: the actor stops and its supervisor restarts it. */
export class AssertionFailedError extends CantripError {
  override name = 'AssertionFailedError'
}

/** A side effect the statechart needs was not provided by agent/ or sim/. */
export class NotProvidedError extends CantripError {
  override name = 'NotProvidedError'
  constructor (what: string) {
    super(`${what}: not provided; supply it with machine.provide() from agent/ or sim/`)
  }
}

/** A short, safe rendering of an offending value for error messages. */
export function describeValue (value: unknown): string {
  if (value === undefined) return 'undefined'
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? value.slice(0, 57) + '...' : value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value)
  if (Array.isArray(value)) return `an array of ${value.length}`
  if (value instanceof Uint8Array) return `${value.length} bytes`
  if (typeof value === 'object') return `an object with keys ${JSON.stringify(Object.keys(value).slice(0, 6))}`
  return typeof value
}
