import { readFileSync } from 'node:fs'

/**
 * `node --import tsx bench/profile-summary.ts FILE.cpuprofile… [top] [--inclusive]`: the
 * functions with the most self time in a V8 CPU profile (what `--cpu-prof` writes), or
 * with `--inclusive` the most time with their callees (each function counted once per
 * sample, however deep it recurses), with their share of the samples, to say what limits
 * a bench without opening a profiler UI. Self time finds the hot loop; inclusive time
 * finds whose work it is (the simulator's invariant checks, a controller's apply, …).
 */
interface ProfileNode { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }
interface Profile { nodes: ProfileNode[], samples: number[] }

function frameName (frame: ProfileNode['callFrame'] | undefined, withLine = true): string {
  if (frame === undefined) return '?'
  const where = frame.url.replace(/^.*node_modules\//, '~/').replace(/^file:\/\/.*?\/wt-[^/]+\//, '')
  return `${frame.functionName || '(anonymous)'} ${where}${withLine ? `:${frame.lineNumber + 1}` : ''}`
}

function top (counts: Map<string, number>, samples: number, n: number): Array<{ name: string, share: number }> {
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, c]) => ({ name, share: Number((c / samples * 100).toFixed(1)) }))
}

export function selfTimeTop (profile: Profile, n = 25): Array<{ name: string, share: number }> {
  const byId = new Map(profile.nodes.map(node => [node.id, node]))
  const counts = new Map<string, number>()
  for (const id of profile.samples) {
    const name = frameName(byId.get(id)?.callFrame)
    counts.set(name, (counts.get(name) ?? 0) + 1)
  }
  return top(counts, profile.samples.length, n)
}

/**
 * Time with callees. Functions are named without their line: tsx's transpiled modules put
 * every function of a file on line 1, so the line would not tell two apart anyway.
 */
export function inclusiveTimeTop (profile: Profile, n = 25): Array<{ name: string, share: number }> {
  const byId = new Map(profile.nodes.map(node => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const counts = new Map<string, number>()
  const seen = new Set<string>()
  for (const sample of profile.samples) {
    seen.clear()
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const name = frameName(byId.get(id)?.callFrame, false)
      if (seen.has(name)) continue
      seen.add(name)
      counts.set(name, (counts.get(name) ?? 0) + 1)
    }
  }
  return top(counts, profile.samples.length, n)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const inclusive = args.includes('--inclusive')
  // A shell glob names every profile a run wrote (one per thread): each is summarised.
  const files = args.filter(arg => arg.endsWith('.cpuprofile'))
  const count = Number(args.find(arg => /^\d+$/.test(arg)) ?? 25)
  for (const file of files) {
    if (files.length > 1) console.log(file)
    const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
    for (const row of (inclusive ? inclusiveTimeTop : selfTimeTop)(profile, count)) console.log(`${String(row.share).padStart(5)} %  ${row.name}`)
  }
}
