/**
 * The known name nearest to a mistyped one, for "did you mean": the smallest edit
 * distance, ties broken by name, and only when the distance is no more than the name's
 * length plus one (the rule of Juju's orderPotentialMatches, cmd/juju/waitfor/errors.go),
 * tightened to half the name's length so an unrelated word suggests nothing.
 */
export function closestName (wanted: string, names: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const name of [...names].sort()) {
    const distance = editDistance(wanted, name)
    if (distance < bestDistance) { best = name; bestDistance = distance }
  }
  if (best === undefined || bestDistance > Math.max(2, Math.floor(best.length / 2))) return undefined
  return best
}

/** Levenshtein distance with two rows; names are short, so this is cheap. */
export function editDistance (a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution))
    }
    previous = current
  }
  return previous[b.length]!
}
