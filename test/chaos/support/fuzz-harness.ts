/**
 * The fuzz loop every decoder suite shares: fast-check draws inputs (random and mutated,
 * see fuzz-inputs.ts), each input runs against a time bound, and the outcome is either
 * accepted or a rejection of a declared kind with a one-line message. Anything else (an
 * undeclared error type, a multi-line message, a promise that does not settle in time)
 * is a crash or a hang: the property fails and fast-check shrinks it to a reproducer,
 * which then belongs in the suite as an explicit case.
 */
import fc from 'fast-check'

/** What one input came to: accepted, or refused with the name of the kind of refusal. */
export type Verdict = { accepted: true } | { accepted: false, kind: string }

export const accepted: Verdict = { accepted: true }
export function rejected (kind: string): Verdict {
  return { accepted: false, kind }
}

/** How long one input may take before it counts as a hang (generous: the machine is shared). */
export const fuzzInputMsMax = 2_000

export interface FuzzTally {
  inputs: number
  accepted: number
  rejected: Record<string, number>
  crashes: number
  hangs: number
  slowestMs: number
}

/** A failure of the decoder under test, not a refusal: fails the property. */
export class FuzzCrash extends Error {
  override name = 'FuzzCrash'
}

/**
 * The refusal kind of `error` when it is one of the `declared` classes and its message is one
 * line that says what was expected; throws FuzzCrash otherwise.
 */
export function declaredRejection (error: unknown, declared: ReadonlyArray<abstract new (...args: never[]) => Error>, options: { expectedGot?: boolean } = {}): Verdict {
  if (!(error instanceof Error) || !declared.some(type => error instanceof type)) {
    throw new FuzzCrash(`undeclared failure ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`, { cause: error })
  }
  if (error.message.length === 0 || error.message.includes('\n')) throw new FuzzCrash(`${error.name} without a one-line message: ${JSON.stringify(error.message)}`)
  if (options.expectedGot !== false && !/^[^\n]+: (?:[^\n]*: )?expected [^\n]*, got /.test(error.message)) {
    throw new FuzzCrash(`${error.name} message lacks "component: expected …, got …": ${error.message}`)
  }
  return rejected(error.name)
}

/** Runs `run` over `count` inputs drawn from `arbitrary`; fails (with fast-check's shrunk counterexample) on a crash or a hang. */
export async function fuzz<T> (arbitrary: fc.Arbitrary<T>, count: number, run: (input: T) => Verdict | Promise<Verdict>, seed = 12): Promise<FuzzTally> {
  const tally: FuzzTally = { inputs: 0, accepted: 0, rejected: {}, crashes: 0, hangs: 0, slowestMs: 0 }
  await fc.assert(fc.asyncProperty(arbitrary, async input => {
    tally.inputs++
    const started = performance.now()
    let verdict: Verdict
    try {
      verdict = await bounded(Promise.resolve().then(() => run(input)))
    } catch (error) {
      if (error instanceof FuzzHang) tally.hangs++
      else tally.crashes++
      throw error
    }
    const ms = performance.now() - started
    tally.slowestMs = Math.max(tally.slowestMs, ms)
    // A synchronous decoder cannot be interrupted: it is a hang when it overruns the bound.
    if (ms > fuzzInputMsMax) {
      tally.hangs++
      throw new FuzzHang(`took ${Math.round(ms)} ms`)
    }
    if (verdict.accepted) tally.accepted++
    else tally.rejected[verdict.kind] = (tally.rejected[verdict.kind] ?? 0) + 1
  }), { numRuns: count, seed, includeErrorInReport: true })
  tally.slowestMs = Math.round(tally.slowestMs * 10) / 10
  return tally
}

class FuzzHang extends Error {
  override name = 'FuzzHang'
}

async function bounded<T> (work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new FuzzHang(`no outcome within ${fuzzInputMsMax} ms`)) }, fuzzInputMsMax)
  })
  try {
    return await Promise.race([work, limit])
  } finally {
    clearTimeout(timer)
  }
}

/** The tally as reportFigures fields, prefixed with the decoder's name. */
export function tallyFigures (name: string, tally: FuzzTally): Record<string, number | string> {
  const rejections = Object.entries(tally.rejected).map(([kind, n]) => `${kind}:${n}`).join(',')
  return {
    [`${name}.inputs`]: tally.inputs,
    [`${name}.accepted`]: tally.accepted,
    [`${name}.rejected`]: rejections === '' ? 0 : rejections,
    [`${name}.crashes`]: tally.crashes,
    [`${name}.hangs`]: tally.hangs,
    [`${name}.slowestMs`]: tally.slowestMs
  }
}
