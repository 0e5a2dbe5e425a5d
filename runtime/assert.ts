import { AssertionFailedError } from './errors.ts'

/** Assert an invariant; the message should name the subject (`unit "web/0" committed hook twice`). */
export function assert (condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionFailedError(message)
}

export function assertSafeInteger (value: number, what: string): void {
  assert(Number.isSafeInteger(value), `${what} must be a safe integer, got ${String(value)}`)
}

export function assertNever (value: never, what: string): never {
  throw new AssertionFailedError(`${what}: unexpected ${JSON.stringify(value)}`)
}
