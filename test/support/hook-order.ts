import * as assert from 'uvu/assert'

/**
 * A small language for "the hook orders Juju allows": a sequence of steps, where a step
 * is one hook, a set of blocks that may come in any order, or a choice between
 * alternatives. Matching backtracks, so a pattern accepts every allowed order and
 * nothing else.
 */
export type HookPattern =
  | string
  | { anyOrder: HookPattern[][] }
  | { oneOf: HookPattern[][] }

export function anyOrder (...blocks: Array<HookPattern | HookPattern[]>): HookPattern {
  return { anyOrder: blocks.map(block => Array.isArray(block) ? block : [block]) }
}

export function oneOf (...alternatives: Array<HookPattern | HookPattern[]>): HookPattern {
  return { oneOf: alternatives.map(alt => Array.isArray(alt) ? alt : [alt]) }
}

/** Every position in `actual` where matching `pattern` from `start` can end. */
function ends (actual: readonly string[], start: number, pattern: readonly HookPattern[]): number[] {
  if (pattern.length === 0) return [start]
  const head = pattern[0]!
  const rest = pattern.slice(1)
  const afterHead: number[] = []
  if (typeof head === 'string') {
    if (actual[start] === head) afterHead.push(start + 1)
  } else if ('oneOf' in head) {
    for (const alternative of head.oneOf) afterHead.push(...ends(actual, start, alternative))
  } else {
    afterHead.push(...permutationEnds(actual, start, head.anyOrder))
  }
  const results = new Set<number>()
  for (const position of afterHead) for (const end of ends(actual, position, rest)) results.add(end)
  return [...results]
}

function permutationEnds (actual: readonly string[], start: number, blocks: readonly HookPattern[][]): number[] {
  if (blocks.length === 0) return [start]
  const results = new Set<number>()
  blocks.forEach((block, index) => {
    const others = blocks.filter((_, i) => i !== index)
    for (const position of ends(actual, start, block)) {
      for (const end of permutationEnds(actual, position, others)) results.add(end)
    }
  })
  return [...results]
}

export function hooksMatch (actual: readonly string[], pattern: readonly HookPattern[]): boolean {
  return ends(actual, 0, pattern).includes(actual.length)
}

export function expectHooks (actual: readonly string[], pattern: readonly HookPattern[], subject = 'hooks'): void {
  if (hooksMatch(actual, pattern)) return
  assert.unreachable(`${subject} did not match the allowed orders\n  actual:  ${JSON.stringify(actual)}\n  allowed: ${JSON.stringify(pattern)}`)
}

/** The hooks Juju runs on first deploy before relations (§2.1, `startupHooks`). */
export function startupHooks (leader: boolean, created: string[] = []): HookPattern[] {
  return [
    'install',
    ...(created.length > 0 ? [anyOrder(...created)] : []),
    leader ? 'leader-elected' : 'leader-settings-changed',
    'config-changed',
    'start'
  ]
}
