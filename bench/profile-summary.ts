import { readFileSync } from 'node:fs'

/**
 * `node --import tsx bench/profile-summary.ts FILE.cpuprofile [top]`: the functions with
 * the most self time in a V8 CPU profile (what `--cpu-prof` writes), with their share of
 * the samples, to say what limits a bench without opening a profiler UI.
 */
interface ProfileNode { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }
interface Profile { nodes: ProfileNode[], samples: number[] }

export function selfTimeTop (profile: Profile, top = 25): Array<{ name: string, share: number }> {
  const byId = new Map(profile.nodes.map(n => [n.id, n]))
  const counts = new Map<string, number>()
  for (const id of profile.samples) {
    const frame = byId.get(id)?.callFrame
    const name = frame === undefined ? '?' : `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*node_modules\//, '~/').replace(/^file:\/\/.*?\/wt-[^/]+\//, '')}:${frame.lineNumber + 1}`
    counts.set(name, (counts.get(name) ?? 0) + 1)
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, n]) => ({ name, share: Number((n / profile.samples.length * 100).toFixed(1)) }))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const profile = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Profile
  for (const row of selfTimeTop(profile, Number(process.argv[3] ?? 25))) console.log(`${String(row.share).padStart(5)} %  ${row.name}`)
}
