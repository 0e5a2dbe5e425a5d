/**
 * Seeded randomness. Pure code never calls Math.random: it receives a `Random`, or,
 * inside statecharts whose context must stay plain data, a 32-bit PRNG state that it
 * advances with `nextUint32` (so the draw sequence is part of the context).
 *
 * Named streams: `stream(name)` derives an independent generator from the parent's
 * seed and the name, so adding a consumer of one stream never shifts the draws of
 * another (the simulator relies on this for stable trace hashes).
 */
export interface Random {
  /** Uniform in [0, 1). */
  next (): number
  /** Uniform integer in [min, max] inclusive. */
  int (min: number, max: number): number
  /** An independent generator for the named consumer. */
  stream (name: string): Random
  /** The seed this generator was made from, for replay lines. */
  readonly seed: number
}

/** FNV-1a over the UTF-16 code units: a stable 32-bit hash for deriving stream seeds. */
export function hashString32 (text: string, basis = 0x811c9dc5): number {
  let hash = basis >>> 0
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash >>> 0
}

/** One step of splitmix32: returns the draw and the next state. Pure. */
export function nextUint32 (state: number): [value: number, nextState: number] {
  const next = (state + 0x9e3779b9) >>> 0
  let z = next
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
  z = (z ^ (z >>> 16)) >>> 0
  return [z, next]
}

/** A draw in [0, 1) from a PRNG state, with the next state. Pure. */
export function nextUnit (state: number): [value: number, nextState: number] {
  const [value, nextState] = nextUint32(state)
  return [value / 0x1_0000_0000, nextState]
}

/** `Random` backed by splitmix32; deterministic for a given seed. */
export class SeededRandom implements Random {
  readonly seed: number
  #state: number

  constructor (seed: number) {
    if (!Number.isInteger(seed)) throw new TypeError(`random: seed must be an integer, got ${String(seed)}`)
    this.seed = seed >>> 0
    this.#state = this.seed
  }

  next (): number {
    const [value, nextState] = nextUnit(this.#state)
    this.#state = nextState
    return value
  }

  int (min: number, max: number): number {
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max < min) {
      throw new RangeError(`random: int range must be safe integers with min <= max, got [${min}, ${max}]`)
    }
    return min + Math.floor(this.next() * (max - min + 1))
  }

  stream (name: string): Random {
    return new SeededRandom(hashString32(name, hashString32(String(this.seed))))
  }
}
