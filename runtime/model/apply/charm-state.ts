import { limits } from '../../limits.ts'
import { isPlainRecord } from '../charm-summary.ts'
import type { ModelCommand } from '../model-types.ts'
import { sortedRecord, defineOwn } from './fields.ts'
import { q, textFieldLengthMax, refuse } from './refusal.ts'

/**
 * A unit's charm state (`state-set`, `state-delete`): checks and the merged result.
 */

interface CharmStateRequest {
  readonly set: Readonly<Record<string, string>>
  readonly delete: readonly string[]
}

function charmStateKey (c: ModelCommand, key: unknown): string {
  if (typeof key !== 'string' || key === '' || key.length > textFieldLengthMax) refuse(c, `charm state key ${q(key)} must be 1 to ${textFieldLengthMax} characters`)
  return key
}

export function charmStateChanges (c: ModelCommand, value: unknown): CharmStateRequest | undefined {
  if (value === undefined) return undefined
  if (!isPlainRecord(value)) refuse(c, 'charm state changes must be a map with "set" and "delete"')
  const set = value.set ?? {}
  if (!isPlainRecord(set)) refuse(c, 'charm state "set" must be a map of strings')
  const entries = Object.entries(set)
  if (entries.length > limits.modelCharmStateKeysMax) refuse(c, `charm state "set" has more than ${limits.modelCharmStateKeysMax} keys`)
  for (const [key, entry] of entries) {
    charmStateKey(c, key)
    if (typeof entry !== 'string') refuse(c, `charm state value of ${q(key)} must be a string`)
  }
  const deleted = value.delete ?? []
  if (!Array.isArray(deleted) || deleted.length > limits.modelCharmStateKeysMax) {
    refuse(c, `charm state "delete" must be a list of at most ${limits.modelCharmStateKeysMax} keys`)
  }
  for (const key of deleted as unknown[]) {
    if (Object.hasOwn(set, charmStateKey(c, key))) refuse(c, `charm state key ${q(key)} is both set and deleted`)
  }
  return { set: set as Record<string, string>, delete: deleted as string[] }
}

/** Bytes of `text` as UTF-8 (a lone surrogate counts as the 3-byte replacement character). */
function utf8Length (text: string): number {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) {
      bytes += 1
    } else if (code < 0x800) {
      bytes += 2
    } else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      i++
    } else {
      bytes += 3
    }
  }
  return bytes
}

/** The unit's charm state after the changes (an empty value deletes, as `state-set k=` does); undefined when nothing changes. */
export function nextCharmState (c: ModelCommand, current: Readonly<Record<string, string>>, changes: CharmStateRequest): Record<string, string> | undefined {
  const next: Record<string, string> = {}
  for (const key of Object.keys(current)) defineOwn(next, key, current[key]!)
  let changed = false
  for (const key of changes.delete) {
    if (Object.hasOwn(next, key)) { delete next[key]; changed = true }
  }
  for (const [key, value] of Object.entries(changes.set)) {
    if (value === '') {
      if (Object.hasOwn(next, key)) { delete next[key]; changed = true }
    } else if (!Object.hasOwn(next, key) || next[key] !== value) {
      defineOwn(next, key, value)
      changed = true
    }
  }
  if (!changed) return undefined
  const entries = Object.entries(next)
  if (entries.length > limits.modelCharmStateKeysMax) refuse(c, `charm state would have more than ${limits.modelCharmStateKeysMax} keys`)
  let bytes = 0
  for (const [key, value] of entries) bytes += utf8Length(key) + utf8Length(value)
  if (bytes > limits.modelCharmStateBytesMax) refuse(c, `charm state would exceed ${limits.modelCharmStateBytesMax} bytes`)
  return sortedRecord(next)
}
