import { assertSafeInteger } from '../assert.ts'

/** `value + 1`, asserted to be a safe integer: Raft's terms and indexes only ever count up. */
export function nextInteger (value: number, what: string): number {
  const next = value + 1
  assertSafeInteger(next, what)
  return next
}
