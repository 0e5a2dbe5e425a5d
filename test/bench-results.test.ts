/**
 * A bench/results/ file's shape and the printed table, on synthetic figures (no timing is
 * asserted: the benches themselves run under `npm run bench`, never in the suite):
 * checkResults accepts a complete object, names each missing or malformed key, allows
 * null only beside a reason; formatTable shows every pair with its anchor, the ratio and
 * the goals met or missed.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { checkResults, requiredPaths } from '../bench/results-schema.ts'
import { formatTable, tableRows } from '../bench/results-table.ts'

const latency = (opsPerSec: number, p50Ms: number, p99Ms: number): Record<string, number> => ({ opsPerSec, p50Ms, p99Ms })

function complete (): Record<string, unknown> {
  return {
    writes: {
      cantrip: { seq: latency(100, 8, 20), c16: latency(800, 18, 60), c64: latency(3_000, 20, 50) },
      etcd: { seq: latency(500, 1.7, 6), c16: latency(1_800, 8, 27), c64: latency(2_400, 21, 85) }
    },
    failover: {
      cantrip: { p50Ms: 900, p90Ms: 1_300, maxMs: 1_500, trials: 15, unrecovered: 0, electionTimeoutMs: 600 },
      etcd: { p50Ms: 1_100, p90Ms: 1_200, maxMs: 1_400, trials: 15, unrecovered: 0, electionTimeoutMs: 600 }
    },
    propagation: {
      cantrip: { n10: { p50Ms: 40, p99Ms: 90 }, n50: { p50Ms: 60, p99Ms: 700 } },
      etcdWatch: { n10: { p50Ms: 2, p99Ms: 12 }, n50: { p50Ms: 5, p99Ms: 800 } },
      serf: { n10: { p50Ms: 180, p99Ms: 400 }, n50: { p50Ms: 280, p99Ms: 520 } }
    },
    detection: { cantrip: { n50: { ms: 10_500 } }, serf: { n50: { ms: 9_100 } } },
    floors: { fsyncPerSec: 5_000, levelBatchRecPerSec: 60_000, spawnMs: 2 },
    hookTool: { medianMs: 2.5 },
    hookOverheadMs: 1.2,
    deploy100: { seconds: 40 },
    sim: {
      n10: { simToWall: 2, convergeWallS: 5, peakRssMb: 150 },
      n100: { simToWall: 1.5, convergeWallS: 20, peakRssMb: 300 },
      n1000: { simToWall: null, convergeWallS: null, reason: 'not finished within 180 s wall (killed)' },
      n10000: { simToWall: 0.1, convergeWallS: 400, peakRssMb: 4_000 }
    },
    memory: { unitActorBytes: 40_000, agentRssBytes: 90_000_000, serfAgentRssBytes: 15_000_000 },
    versions: {
      coldStart: { nodeMs: 40, versionMs: 250, helpMs: 400, statusMs: 700, cpu: { nodeMs: 30, versionOverNodeMs: 120, helpOverNodeMs: 150, statusOverNodeMs: 450 } },
      idleMachineAgentRssBytes: 70_000_000,
      startingMachineAgentRssMaxBytes: 81_000_000,
      shipped: { bytes: 4_200_000, needsCompiler: false },
      upgrade: { seconds: null, reason: 'not every machine on 0.1.1 within 300 s' }
    },
    load: { start: [1.5, 1.2, 1.0], end: [2.0, 1.5, 1.1], benches: { writes: { start: [1.5, 1.2, 1.0], end: [3.25, 1.5, 1.1] } } }
  }
}

test('a complete results object passes, null allowed only beside a reason', () => {
  assert.equal(checkResults(complete()), [])
  assert.ok(requiredPaths.includes('writes.etcd.c64.p99Ms'))
  assert.ok(requiredPaths.includes('sim.n1000.convergeWallS'))
  assert.ok(requiredPaths.includes('propagation.etcdWatch.n50.p99Ms'))
  assert.ok(requiredPaths.includes('sim.n10000.convergeWallS'))
  assert.is(requiredPaths.length, 18 + 10 + 12 + 2 + 3 + 3 + 8 + 2 + 7 + 2)
})

test('each missing or malformed figure is named, one line each', () => {
  const r = complete()
  delete (r['failover'] as Record<string, unknown>)['etcd']
  ;(r['writes'] as { cantrip: { c64: Record<string, unknown> } }).cantrip.c64['p99Ms'] = 'fast'
  ;(r['floors'] as Record<string, unknown>)['spawnMs'] = Number.NaN
  ;(r['propagation'] as { serf: { n50: Record<string, unknown> } }).serf.n50['p50Ms'] = null
  ;(r['load'] as Record<string, unknown>)['end'] = [1]
  const problems = checkResults(r)
  assert.equal(problems, [
    'bench results: expected writes.cantrip.c64.p99Ms to be a finite number (or null with a reason), got "fast"',
    ...['p50Ms', 'p90Ms', 'maxMs', 'trials', 'unrecovered'].map(f => `bench results: expected failover.etcd.${f} to be a finite number (or null with a reason), got nothing`),
    'bench results: expected propagation.serf.n50.p50Ms to be a finite number (or null with a reason), got null',
    'bench results: expected floors.spawnMs to be a finite number (or null with a reason), got null',
    'bench results: expected load.end to be three load averages, got [1]'
  ])
  assert.equal(checkResults(undefined).length, requiredPaths.length)
})

test('the table shows every pair with the anchor, the ratio and the goals', () => {
  const text = formatTable(complete())
  const rows = tableRows(complete())
  for (const load of ['sequential', '16 clients', '64 clients']) {
    for (const figure of ['ops/s', 'p50', 'p99']) assert.ok(rows.some(r => r.measure === `writes ${load}: ${figure}` && r.anchorName === 'etcd' && r.ratio.endsWith('×')), `${load} ${figure}`)
  }
  const row = (measure: string): typeof rows[number] => {
    const found = rows.find(r => r.measure === measure)
    assert.ok(found, measure)
    return found!
  }
  assert.is(row('writes 64 clients: ops/s').ratio, '1.25×')
  assert.is(row('writes 64 clients: ops/s').goal, '≥ etcd: met')
  assert.is(row('writes 64 clients: p99').goal, '≤ etcd: met')
  assert.is(row('writes sequential: ops/s').goal, '≥ etcd: MISSED')
  // The warm sequential case (bench/writes.ts seqWarm) is shown only when a file has it, beside etcd's, without a goal of its own.
  assert.not.ok(rows.some(r => r.measure.startsWith('writes sequential, warm')), 'no warm row without seqWarm figures')
  const warm = complete()
  const writes = warm['writes'] as Record<string, Record<string, unknown>>
  writes['cantrip']!['seqWarm'] = latency(300, 3, 9)
  writes['etcd']!['seqWarm'] = latency(500, 1.7, 6)
  const warmRow = tableRows(warm).find(r => r.measure === 'writes sequential, warm (after the 64 clients): ops/s')
  assert.ok(warmRow, 'the warm sequential row')
  assert.is(warmRow!.ratio, '0.6×')
  assert.is(warmRow!.goal, '')
  assert.is(checkResults(warm).length, 0)
  // Failover is held to etcd's median and p90 over the same number of kills.
  assert.is(row('leader failover (kill -9 ×15), 600 ms election timeout both: p50').ratio, '0.818×')
  assert.is(row('leader failover (kill -9 ×15), 600 ms election timeout both: p50').goal, '≤ etcd: met')
  assert.is(row('leader failover (kill -9 ×15), 600 ms election timeout both: p90').goal, '≤ etcd: MISSED')
  assert.is(row('leader failover (kill -9 ×15), 600 ms election timeout both: max').goal, '')
  assert.is(row('leader failover (kill -9 ×15), 600 ms election timeout both: not recovered within 30 s').cantrip, '0')
  assert.is(row('change notice, 10 agents: p99 vs serf').anchorName, 'serf')
  assert.is(row('change notice, 50 agents: p99 vs serf').goal, '≤ serf: MISSED')
  assert.is(row('change notice, 50 agents: p99 vs etcd watch').goal, '≤ etcd watch: met')
  assert.is(row('change notice, 50 agents: p50 vs etcd watch').ratio, '12×')
  // The second clock, from the writer's send, for both systems; shown without a goal, n/a where a file lacks it.
  assert.is(row('change notice, 50 agents, from the send: p99 vs etcd watch').goal, '')
  assert.is(row('change notice, 50 agents, from the send: p99 vs etcd watch').cantrip, 'n/a')
  const sent = complete()
  const propagation = sent['propagation'] as Record<string, Record<string, Record<string, unknown>>>
  propagation['cantrip']!['n50']!['fromSend'] = latency(0, 20, 40)
  propagation['etcdWatch']!['n50']!['fromSend'] = latency(0, 8, 16)
  const sentRow = tableRows(sent).find(r => r.measure === 'change notice, 50 agents, from the send: p99 vs etcd watch')
  assert.is(sentRow?.ratio, '2.5×')
  assert.is(row('failure detection, 50 agents').ratio, '1.15×')
  assert.is(row('hook-tool call median vs bare spawn').goal, '< 5 ms: met')
  assert.is(row('memory per unit actor').goal, '< 50 KB: met')
  assert.is(row('idle agent RSS').ratio, '6×')
  assert.is(row('cantrip version, cold start (median)').goal, '≤ node + 300 ms: met')
  assert.is(row('cantrip status, cold start (median)').goal, '≤ node + 600 ms: MISSED')
  assert.is(row('cantrip --help, cold start (median)').anchorName, 'node -e 0')
  assert.is(row('cantrip status, CPU over node (median)').goal, '≤ node + 600 ms: met')
  assert.is(row('cantrip version, CPU over node (median)').cantrip, '+120 ms')
  assert.is(row('idle machine agent RSS (no units; peak while starting)').cantrip, '70 MB (81 MB)')
  assert.is(row('idle machine agent RSS (no units; peak while starting)').goal, '< 80 MB: met')
  assert.is(row('bytes shipped to a new SSH host').goal, '< 15 MB, no compiler: met')
  assert.is(row('upgrade-model across 10 machines').cantrip, 'n/a')
  assert.is(row('simulator, 1,000 agents: sim/wall, wall to converge, peak RSS').goal, '< 30 s (n/a); not finished within 180 s wall (killed)')
  assert.is(row('simulator, 100 agents: sim/wall, wall to converge, peak RSS').cantrip, '1.5×, 20 s, 300 MB')
  assert.is(row('simulator, 10,000 agents: sim/wall, wall to converge, peak RSS').goal, 'measured: met')
  assert.match(text, 'load average at start 1.50 1.20 1.00, at end 2.00 1.50 1.10')
  assert.match(text, '1-minute load around each bench: writes 1.5 → 3.3')
  assert.match(text, /\| writes 64 clients: ops\/s +\| 3,000\/s +\| 2,400\/s \(etcd\) +\| 1\.25× +\| ≥ etcd: met +\|/)
})

test('missing figures print as n/a, never as zero', () => {
  const rows = tableRows({})
  assert.ok(rows.length > 20)
  assert.ok(rows.every(r => !/\b0(\/s| ms| B)/.test(r.cantrip)))
  assert.is(rows.find(r => r.measure === 'writes 64 clients: ops/s')!.goal, '≥ etcd (n/a)')
  assert.is(rows.find(r => r.measure === 'leader failover (kill -9): p50')!.ratio, 'n/a')
  assert.is(rows.find(r => r.measure === 'change notice, 50 agents: p99 vs etcd watch')!.goal, '≤ etcd watch (n/a)')
})

test.run()
