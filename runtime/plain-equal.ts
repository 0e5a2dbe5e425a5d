/**
 * Structural equality of plain data (what crosses the wire or sits in the model: objects,
 * arrays, strings, numbers, booleans, null, undefined and byte arrays). Used to drop a
 * recomputed value that did not change before it costs anything downstream.
 */
export function plainEqual (a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => plainEqual(item, b[i]))
  if (a instanceof Uint8Array) return b instanceof Uint8Array && a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i])
  if (Array.isArray(b) || b instanceof Uint8Array) return false
  const aKeys = Object.keys(a)
  if (aKeys.length !== Object.keys(b).length) return false
  for (const key of aKeys) {
    if (!Object.hasOwn(b, key) || !plainEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false
  }
  return true
}
