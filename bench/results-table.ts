import { lookup } from './results-schema.ts'

/**
 * The table `npm run bench` prints: every cantrip figure beside its anchor measured in the
 * same run, the ratio cantrip / anchor, and the goal it is held to (met or not), from one
 * bench/results/ file alone (pure: the same object gives the same text).
 */
export interface Row { measure: string, cantrip: string, anchor: string, anchorName: string, ratio: string, goal: string }

const num = (results: unknown, path: string): number | null => {
  const { value } = lookup(results, path)
  return typeof value === 'number' && Number.isFinite(value) ? value : null
}
const show = (value: number | null, unit: string): string => {
  if (value === null) return 'n/a'
  // Bytes read best in KB or MB.
  if (unit === ' B' && value >= 1e6) return `${Number((value / 1e6).toPrecision(3))} MB`
  if (unit === ' B' && value >= 1e3) return `${Number((value / 1024).toPrecision(3))} KB`
  return `${value >= 100 ? Math.round(value).toLocaleString('en') : Number(value.toPrecision(3))}${unit}`
}
const ratio = (a: number | null, b: number | null): string => a === null || b === null || b === 0 ? 'n/a' : `${Number((a / b).toPrecision(3))}×`
const verdict = (ok: boolean | null, text: string): string => ok === null ? `${text} (n/a)` : `${text}: ${ok ? 'met' : 'MISSED'}`

/** The goal `cantrip ≥ anchor` (more is better) or `cantrip ≤ anchor` (less is better), met or not. */
const versus = (r: unknown, cPath: string, aPath: string, atLeast: boolean, text: string): string => {
  const c = num(r, cPath)
  const a = num(r, aPath)
  return verdict(c === null || a === null ? null : atLeast ? c >= a : c <= a, text)
}

export function tableRows (r: unknown): Row[] {
  const rows: Row[] = []
  const pair = (measure: string, cPath: string, aPath: string, anchorName: string, unit: string, goal = ''): void => {
    const c = num(r, cPath)
    const a = num(r, aPath)
    rows.push({ measure, cantrip: show(c, unit), anchor: show(a, unit), anchorName, ratio: ratio(c, a), goal })
  }
  // Issue 28's goals: sequential and 64-client throughput at least etcd's, the 64-client p99 at most etcd's.
  for (const load of ['seq', 'c16', 'c64', 'seqWarm'] as const) {
    // seqWarm (bench/writes.ts): the sequential case again once the 64-client one has warmed V8; optional in older files.
    if (load === 'seqWarm' && num(r, 'writes.cantrip.seqWarm.opsPerSec') === null && num(r, 'writes.etcd.seqWarm.opsPerSec') === null) continue
    const label = load === 'seq' ? 'sequential' : load === 'seqWarm' ? 'sequential, warm (after the 64 clients)' : `${load.slice(1)} clients`
    const at = (f: string): [string, string] => [`writes.cantrip.${load}.${f}`, `writes.etcd.${load}.${f}`]
    pair(`writes ${label}: ops/s`, ...at('opsPerSec'), 'etcd', '/s', load === 'c16' || load === 'seqWarm' ? '' : versus(r, ...at('opsPerSec'), true, '≥ etcd'))
    pair(`writes ${label}: p50`, ...at('p50Ms'), 'etcd', ' ms')
    pair(`writes ${label}: p99`, ...at('p99Ms'), 'etcd', ' ms', load === 'c64' ? versus(r, ...at('p99Ms'), false, '≤ etcd') : '')
    pair(`writes ${label}: server CPU per write`, ...at('serverCpuMsPerWrite'), 'etcd', ' ms')
  }
  const election = num(r, 'failover.etcd.electionTimeoutMs')
  const trials = num(r, 'failover.cantrip.trials')
  const failover = `leader failover (kill -9${trials === null ? '' : ` ×${trials}`})${election === null ? '' : `, ${election} ms election timeout both`}`
  for (const [q, goal] of [['p50Ms', 'p50'], ['p90Ms', 'p90'], ['maxMs', 'max']] as const) {
    const at = (store: string): string => `failover.${store}.${q}`
    pair(`${failover}: ${goal}`, at('cantrip'), at('etcd'), 'etcd', ' ms', q === 'maxMs' ? '' : versus(r, at('cantrip'), at('etcd'), false, '≤ etcd'))
  }
  pair(`${failover}: not recovered within 30 s`, 'failover.cantrip.unrecovered', 'failover.etcd.unrecovered', 'etcd', '')
  for (const n of ['n10', 'n50'] as const) {
    const agents = n.slice(1)
    for (const [anchor, name] of [['etcdWatch', 'etcd watch'], ['serf', 'serf']] as const) {
      const p99 = `propagation.cantrip.${n}.p99Ms`
      pair(`change notice, ${agents} agents: p50 vs ${name}`, `propagation.cantrip.${n}.p50Ms`, `propagation.${anchor}.${n}.p50Ms`, name, ' ms')
      pair(`change notice, ${agents} agents: p99 vs ${name}`, p99, `propagation.${anchor}.${n}.p99Ms`, name, ' ms', n === 'n50' ? versus(r, p99, `propagation.${anchor}.${n}.p99Ms`, false, `≤ ${name}`) : '')
    }
    // The second clock, from the writer's send (etcd's watchers often see a put before its answer returns): shown, not a goal.
    for (const q of ['p50Ms', 'p99Ms'] as const) {
      pair(`change notice, ${agents} agents, from the send: ${q.slice(0, 3)} vs etcd watch`, `propagation.cantrip.${n}.fromSend.${q}`, `propagation.etcdWatch.${n}.fromSend.${q}`, 'etcd watch', ' ms')
    }
  }
  pair('failure detection, 50 agents', 'detection.cantrip.n50.ms', 'detection.serf.n50.ms', 'serf', ' ms')
  const tool = num(r, 'hookTool.medianMs')
  pair('hook-tool call median vs bare spawn', 'hookTool.medianMs', 'floors.spawnMs', 'spawn', ' ms', verdict(tool === null ? null : tool < 5, '< 5 ms'))
  pair('hook runner overhead vs bare spawn', 'hookOverheadMs', 'floors.spawnMs', 'spawn', ' ms')
  pair('replicated writes/s vs LevelDB sync batches (records/s)', 'writes.cantrip.c64.opsPerSec', 'floors.levelBatchRecPerSec', 'LevelDB', '/s')
  pair('sequential writes/s vs fsync/s', 'writes.cantrip.seq.opsPerSec', 'floors.fsyncPerSec', 'fsync', '/s')
  pair('idle agent RSS', 'memory.agentRssBytes', 'memory.serfAgentRssBytes', 'serf', ' B')
  const unit = num(r, 'memory.unitActorBytes')
  rows.push({ measure: 'memory per unit actor', cantrip: show(unit, ' B'), anchor: '', anchorName: '', ratio: '', goal: verdict(unit === null ? null : unit < 50 * 1024, '< 50 KB') })
  const over = (path: string, limitMs: number, measure: string): void => {
    const c = num(r, `versions.coldStart.${path}Ms`)
    const n = num(r, 'versions.coldStart.nodeMs')
    rows.push({ measure, cantrip: show(c, ' ms'), anchor: show(n, ' ms'), anchorName: 'node -e 0', ratio: ratio(c, n), goal: verdict(c === null || n === null ? null : c - n <= limitMs, `≤ node + ${limitMs} ms`) })
  }
  // The same in CPU time (user + system), which a loaded machine does not stretch.
  const overCpu = (path: string, limitMs: number, measure: string): void => {
    const c = num(r, `versions.coldStart.cpu.${path}OverNodeMs`)
    rows.push({ measure, cantrip: c === null ? 'n/a' : `+${show(c, ' ms')}`, anchor: show(num(r, 'versions.coldStart.cpu.nodeMs'), ' ms'), anchorName: 'node -e 0', ratio: '', goal: verdict(c === null ? null : c <= limitMs, `≤ node + ${limitMs} ms`) })
  }
  over('version', 300, 'cantrip version, cold start (median)')
  overCpu('version', 300, 'cantrip version, CPU over node (median)')
  over('status', 600, 'cantrip status, cold start (median)')
  overCpu('status', 600, 'cantrip status, CPU over node (median)')
  over('help', 300, 'cantrip --help, cold start (median)')
  overCpu('help', 300, 'cantrip --help, CPU over node (median)')
  const idle = num(r, 'versions.idleMachineAgentRssBytes')
  rows.push({ measure: 'idle machine agent RSS (no units; peak while starting)', cantrip: `${show(idle, ' B')} (${show(num(r, 'versions.startingMachineAgentRssMaxBytes'), ' B')})`, anchor: show(num(r, 'memory.serfAgentRssBytes'), ' B'), anchorName: 'serf', ratio: ratio(idle, num(r, 'memory.serfAgentRssBytes')), goal: verdict(idle === null ? null : idle < 80e6, '< 80 MB') })
  const shippedBytes = num(r, 'versions.shipped.bytes')
  const compiler = lookup(r, 'versions.shipped.needsCompiler').value
  rows.push({ measure: 'bytes shipped to a new SSH host', cantrip: show(shippedBytes, ' B'), anchor: '', anchorName: '', ratio: '', goal: verdict(shippedBytes === null ? null : shippedBytes < 15e6 && compiler === false, '< 15 MB, no compiler') })
  rows.push({ measure: 'upgrade-model across 10 machines', cantrip: show(num(r, 'versions.upgrade.seconds'), ' s'), anchor: '', anchorName: '', ratio: '', goal: '' })
  rows.push({ measure: 'deploy 100 units on 10 machines', cantrip: show(num(r, 'deploy100.seconds'), ' s'), anchor: '', anchorName: '', ratio: '', goal: '' })
  for (const n of ['n10', 'n100', 'n1000', 'n10000'] as const) {
    const reason = lookup(r, `sim.${n}.reason`).value
    const wall = num(r, `sim.${n}.convergeWallS`)
    const rss = num(r, `sim.${n}.peakRssMb`)
    const goal = n === 'n1000' ? verdict(wall === null ? null : wall < 30, '< 30 s') : n === 'n10000' ? verdict(wall !== null, 'measured') : ''
    rows.push({
      measure: `simulator, ${Number(n.slice(1)).toLocaleString('en')} agents: sim/wall, wall to converge, peak RSS`,
      cantrip: `${show(num(r, `sim.${n}.simToWall`), '×')}, ${show(wall, ' s')}, ${show(rss === null ? null : rss * 1e6, ' B')}`,
      anchor: '',
      anchorName: '',
      ratio: '',
      goal: typeof reason === 'string' ? `${goal === '' ? '' : goal + '; '}${reason}` : goal
    })
  }
  return rows
}

const loadOne = (value: unknown): string => Array.isArray(value) && typeof value[0] === 'number' ? value[0].toFixed(1) : 'n/a'

export function formatTable (results: unknown): string {
  const header: Row = { measure: 'measure', cantrip: 'cantrip', anchor: 'anchor', anchorName: '', ratio: 'ratio', goal: 'goal' }
  const rows = tableRows(results).map(row => ({ ...row, anchor: row.anchorName === '' ? row.anchor : `${row.anchor} (${row.anchorName})` }))
  const all = [header, ...rows]
  const keys = ['measure', 'cantrip', 'anchor', 'ratio', 'goal'] as const
  const width = Object.fromEntries(keys.map(k => [k, Math.max(...all.map(row => row[k].length))])) as Record<typeof keys[number], number>
  const line = (row: Row): string => `| ${keys.map(k => row[k].padEnd(width[k])).join(' | ')} |`
  const load = (at: string): string => {
    const value = lookup(results, `load.${at}`).value
    return Array.isArray(value) ? value.map(v => Number(v).toFixed(2)).join(' ') : 'n/a'
  }
  const benches = lookup(results, 'load.benches').value
  const perBench = typeof benches === 'object' && benches !== null
    ? Object.entries(benches as Record<string, { start?: unknown, end?: unknown }>).map(([name, l]) => `${name} ${loadOne(l.start)} → ${loadOne(l.end)}`).join(', ')
    : ''
  return [
    line(header), `|${keys.map(k => '-'.repeat(width[k] + 2)).join('|')}|`, ...rows.map(line), '',
    `load average at start ${load('start')}, at end ${load('end')}`,
    ...(perBench === '' ? [] : [`1-minute load around each bench: ${perBench}`])
  ].join('\n')
}
