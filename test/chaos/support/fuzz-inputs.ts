/**
 * Input generators for the fuzz suites: random bytes, random msgpack values (well-formed
 * encodings of the wrong shape), valid messages with their bytes mutated (flipped,
 * overwritten, cut, spliced), and valid messages with their fields mutated (replaced,
 * dropped, added) — the last two reach past the first check into the deeper ones.
 */
import fc from 'fast-check'
import { Packr } from 'msgpackr'

const packr = new Packr({ useRecords: false })

/** Encodes without the codec's own checks, so a fuzz input can be anything msgpack holds. */
export function pack (value: unknown): Uint8Array {
  return new Uint8Array(packr.pack(value))
}

/** Scalars that break naive checks: edges of integers, NaN, odd strings. */
const edgeScalars = fc.constantFrom<unknown>(
  0, -1, 1, 2 ** 31, 2 ** 32, 2 ** 53, -(2 ** 53), Number.MAX_SAFE_INTEGER, NaN, Infinity, -Infinity, 0.5, -0,
  '', ' ', '\n', '\u0000', '__proto__', 'constructor', 'x'.repeat(300), 'ok', 'v', true, false, null, undefined
)

/** A random msgpack-able value: maps, lists, bytes, strings, numbers, nested a few levels. */
export const msgpackValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>(tie => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    edgeScalars,
    fc.string({ maxLength: 40 }),
    fc.integer(),
    fc.double(),
    fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n - 1n }),
    fc.uint8Array({ maxLength: 64 }),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('v', 'ok', 'op', 'data', 'kind', 'type', '__proto__')), tie('value'), { maxKeys: 6 })
  )
})).value

/** Bytes of a random value that may not be packable; falls back to its repr. */
function packOrEmpty (value: unknown): Uint8Array {
  try {
    return pack(value)
  } catch {
    return new Uint8Array(0)
  }
}

type Mutation = (bytes: Uint8Array) => Uint8Array

const byteMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })).map(([at, bit]): Mutation => bytes => {
    if (bytes.length === 0) return bytes
    const copy = bytes.slice()
    copy[at % copy.length]! ^= 1 << bit
    return copy
  }),
  fc.tuple(fc.nat(), fc.constantFrom(0x00, 0xff, 0x7f, 0x80, 0xc1, 0xc4, 0xc7, 0xd4, 0xd9, 0xdb, 0xdc, 0xdd, 0xde, 0xdf)).map(([at, value]): Mutation => bytes => {
    if (bytes.length === 0) return Uint8Array.of(value)
    const copy = bytes.slice()
    copy[at % copy.length] = value
    return copy
  }),
  fc.nat().map((at): Mutation => bytes => bytes.slice(0, bytes.length === 0 ? 0 : at % bytes.length)),
  fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 16 })).map(([at, extra]): Mutation => bytes => {
    const cut = bytes.length === 0 ? 0 : at % (bytes.length + 1)
    return Uint8Array.from([...bytes.subarray(0, cut), ...extra, ...bytes.subarray(cut)])
  }),
  fc.tuple(fc.nat(), fc.nat()).map(([from, to]): Mutation => bytes => {
    if (bytes.length === 0) return bytes
    const a = from % bytes.length
    const b = a + (to % (bytes.length - a))
    return Uint8Array.from([...bytes, ...bytes.subarray(a, b + 1)])
  })
)

/** A valid encoding with one to four byte mutations. */
export function mutatedBytes (seeds: readonly Uint8Array[]): fc.Arbitrary<Uint8Array> {
  return fc.tuple(fc.constantFrom(...seeds), fc.array(byteMutation, { minLength: 1, maxLength: 4 }))
    .map(([seed, mutations]) => mutations.reduce((bytes, mutate) => mutate(bytes), seed))
}

type FieldMutation = (value: Record<string, unknown>) => Record<string, unknown>

/** A valid object with a field replaced, dropped or added (at the top or one level down). */
export function mutatedObject (seeds: ReadonlyArray<Record<string, unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const mutation: fc.Arbitrary<FieldMutation> = fc.oneof(
    fc.tuple(fc.nat(), msgpackValue).map(([which, replacement]): FieldMutation => value => {
      const keys = Object.keys(value)
      if (keys.length === 0) return value
      return { ...value, [keys[which % keys.length]!]: replacement }
    }),
    fc.nat().map((which): FieldMutation => value => {
      const keys = Object.keys(value)
      const copy = { ...value }
      if (keys.length > 0) delete copy[keys[which % keys.length]!]
      return copy
    }),
    fc.tuple(fc.string({ maxLength: 10 }), msgpackValue).map(([key, extra]): FieldMutation => value => ({ ...value, [key]: extra })),
    fc.tuple(fc.nat(), fc.nat(), msgpackValue).map(([which, inner, replacement]): FieldMutation => value => {
      const keys = Object.keys(value).filter(key => typeof value[key] === 'object' && value[key] !== null && !(value[key] instanceof Uint8Array))
      if (keys.length === 0) return value
      const key = keys[which % keys.length]!
      const nested = value[key]
      if (Array.isArray(nested)) {
        if (nested.length === 0) return { ...value, [key]: [replacement] }
        const copy = [...nested]
        const at = inner % copy.length
        copy[at] = typeof copy[at] === 'object' && copy[at] !== null && !Array.isArray(copy[at]) ? { ...copy[at] as object, [Object.keys(copy[at] as object)[inner % Math.max(1, Object.keys(copy[at] as object).length)] ?? 'x']: replacement } : replacement
        return { ...value, [key]: copy }
      }
      const nestedKeys = Object.keys(nested as object)
      return { ...value, [key]: { ...nested as object, [nestedKeys[inner % Math.max(1, nestedKeys.length)] ?? 'x']: replacement } }
    })
  )
  return fc.tuple(fc.constantFrom(...seeds), fc.array(mutation, { minLength: 1, maxLength: 3 }))
    .map(([seed, mutations]) => mutations.reduce((value, mutate) => mutate(value), seed))
}

/**
 * Every kind of byte input for a msgpack decoder whose valid messages are `seeds`:
 * random bytes, random values, mutated bytes and mutated fields, in equal shares.
 */
export function wireInputs (seeds: ReadonlyArray<Record<string, unknown>>): fc.Arbitrary<Uint8Array> {
  const seedBytes = seeds.map(pack)
  return fc.oneof(
    fc.uint8Array({ maxLength: 256 }),
    msgpackValue.map(packOrEmpty),
    mutatedBytes(seedBytes),
    mutatedObject(seeds).map(packOrEmpty)
  )
}
