/**
 * The keys a whole `npm run bench` promises in its bench/results/ file (issues 11, 28), and a pure check of
 * an object against them. A figure is a finite number, or null where the object holding
 * it says why in `reason` (a point that did not finish, a failover that did not recover):
 * a missing figure is never silently a zero.
 */
const stores = ['cantrip', 'etcd'] as const
const loads = ['seq', 'c16', 'c64'] as const
const gossip = ['cantrip', 'serf'] as const
/** Change notices: cantrip's, the etcd watch anchor's and serf's user event. */
const notices = ['cantrip', 'etcdWatch', 'serf'] as const

export const requiredPaths: readonly string[] = [
  ...stores.flatMap(s => loads.flatMap(l => ['opsPerSec', 'p50Ms', 'p99Ms'].map(f => `writes.${s}.${l}.${f}`))),
  // Failover is a distribution over several kills (bench/failover-trials.ts), not one sample.
  ...stores.flatMap(s => ['p50Ms', 'p90Ms', 'maxMs', 'trials', 'unrecovered'].map(f => `failover.${s}.${f}`)),
  ...notices.flatMap(g => ['n10', 'n50'].flatMap(n => ['p50Ms', 'p99Ms'].map(f => `propagation.${g}.${n}.${f}`))),
  ...gossip.map(g => `detection.${g}.n50.ms`),
  'floors.fsyncPerSec', 'floors.levelBatchRecPerSec', 'floors.spawnMs',
  'hookTool.medianMs', 'hookOverheadMs', 'deploy100.seconds',
  ...['n10', 'n100', 'n1000', 'n10000'].flatMap(n => ['simToWall', 'convergeWallS'].map(f => `sim.${n}.${f}`)),
  'memory.unitActorBytes', 'memory.agentRssBytes',
  ...['nodeMs', 'versionMs', 'helpMs', 'statusMs'].map(f => `versions.coldStart.${f}`),
  'versions.idleMachineAgentRssBytes', 'versions.shipped.bytes', 'versions.upgrade.seconds',
  'load.start', 'load.end'
]

/** The value at a dotted path, and the object holding it. */
export function lookup (results: unknown, path: string): { found: boolean, value: unknown, parent: unknown } {
  let parent: unknown
  let value: unknown = results
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return { found: false, value: undefined, parent }
    parent = value
    value = (value as Record<string, unknown>)[key]
  }
  return { found: true, value, parent }
}

/** One line per problem (`bench results: expected …, got …`); empty when `results` holds every key. */
export function checkResults (results: unknown): string[] {
  const problems: string[] = []
  for (const path of requiredPaths) {
    const { found, value, parent } = lookup(results, path)
    const expected = path.startsWith('load.') ? 'three load averages' : 'a finite number (or null with a reason)'
    if (!found) { problems.push(`bench results: expected ${path} to be ${expected}, got nothing`); continue }
    if (path.startsWith('load.')) {
      if (!Array.isArray(value) || value.length !== 3 || !value.every(v => typeof v === 'number' && Number.isFinite(v))) problems.push(`bench results: expected ${path} to be ${expected}, got ${JSON.stringify(value)}`)
      continue
    }
    if (typeof value === 'number' && Number.isFinite(value)) continue
    const reason = typeof parent === 'object' && parent !== null ? (parent as Record<string, unknown>)['reason'] : undefined
    if (value === null && typeof reason === 'string' && reason !== '') continue
    problems.push(`bench results: expected ${path} to be ${expected}, got ${JSON.stringify(value)}`)
  }
  return problems
}
