import { hashString32 } from '../random.ts'
import type { ConfigValue } from './model-types.ts'

/**
 * Deterministic text and hashes of flat records, for the hashes the uniter compares
 * (juju-semantics §1.3): equal configurations give equal hashes on every controller and
 * after every replay, whatever order the keys were written in. Flat on purpose: nothing
 * here recurses over data that came from the network.
 */
export function canonicalFlat (record: Readonly<Record<string, ConfigValue>>): string {
  return '{' + Object.keys(record).sort().map(key => JSON.stringify(key) + ':' + JSON.stringify(record[key])).join(',') + '}'
}

/** 64 bits as 16 hex digits: two FNV-1a passes with different bases (not cryptographic). */
export function hashText (text: string): string {
  const a = hashString32(text)
  const b = hashString32(text, 0x01000193 ^ 0x5bd1e995)
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0')
}

export function configHashOf (effective: Readonly<Record<string, ConfigValue>>): string {
  return hashText('config:' + canonicalFlat(effective))
}

export function trustHashOf (trust: boolean): string {
  return trust ? hashText('trust:true') : ''
}

export function addressesHashOf (addresses: readonly string[]): string {
  return hashText('addresses:' + addresses.join(','))
}
