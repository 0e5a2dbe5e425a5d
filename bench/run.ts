import { execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os'
import { measureCantripPropagation } from './cantrip-propagation.ts'
import { measureEtcdWatch } from './etcd-watch.ts'
import { measureDeploy100 } from './deploy-100.ts'
import { measureFloors } from './floors.ts'
import { measureHookRunnerOverhead } from './hook-runner-overhead.ts'
import { measureHookToolCall } from './hook-tool-call.ts'
import { measureIdleCpu } from './idle-cpu.ts'
import { describeResponsiveness, measureViewerResponsiveness } from './inspect-viewer.ts'
import { measureMesh, measureUnitActorMemory } from './mesh-agents.ts'
import { checkResults, requiredPaths } from './results-schema.ts'
import { formatTable } from './results-table.ts'
import { measureSerf } from './serf-mesh.ts'
import { measureSimPoint } from './sim-points.ts'
import { measureSimSpeed } from './sim-speed.ts'
import { measureCantripWrites, measureEtcdWrites } from './writes.ts'
import { measureVersions } from './versions.ts'

/**
 * `npm run bench [-- name…]`: cantrip beside its anchors in one run (issues 11, 28): etcd
 * for desired-state writes and failover (at cantrip's election timeout), an etcd watch and
 * serf for change notices, serf for failure detection, the disk and process spawn for the
 * floors; then scale (deploy of 100 units, the simulator at 10/100/1,000/10,000 agents)
 * and memory. Installs etcd and serf from Debian first (scripts/ensure-bench-tools.sh).
 * Every run writes a new file, bench/results/<UTC time>[-<benches>].json, meant to be
 * committed: the date, the commit, the machine, the load averages before and after the
 * run and around each bench, and every figure beside its anchor; BENCHMARKS.md cites the
 * file behind each figure. The table of pairs with ratios and goals is printed at the end.
 * A bench that fails records null figures with the reason and the run goes on. Named
 * benches: floors, tools, runner, writes, watch, serf, propagation, memory, deploy100,
 * versions, simscale (the default set), and sim, inspect, idle, mesh (extra, run only when named).
 */
const resultsDir = new URL('./results/', import.meta.url)

/**
 * The simulator points simscale measures: 10, 100, 1,000 and 10,000 agents, or the list in
 * CANTRIP_BENCH_SIM_POINTS (e.g. `10,100,1000`: the 10,000 point takes ~40 min of a quiet
 * 2-core machine). Anything but positive integers is refused with one line.
 */
function simScalePoints (): number[] {
  const text = process.env['CANTRIP_BENCH_SIM_POINTS']
  if (text === undefined || text === '') return [10, 100, 1_000, 10_000]
  const points = text.split(',').map(Number)
  if (points.some(n => !Number.isSafeInteger(n) || n <= 0)) throw new Error(`bench: CANTRIP_BENCH_SIM_POINTS: expected agent counts separated by commas (e.g. 10,100,1000), got ${JSON.stringify(text)}`)
  return points
}
type Results = Record<string, unknown>

const say = (line: string): void => { process.stdout.write(line + '\n') }

/** The commit measured, with `-dirty` when the tree has changes git would commit. */
function commit (): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== ''
    return dirty ? `${head}-dirty` : head
  } catch {
    return 'unknown'
  }
}

/** bench/results/2026-11-27T03-40-12Z.json for a whole run; a partial run's file names its benches. */
function resultsFile (startedAt: Date, names: readonly string[]): URL {
  const stamp = startedAt.toISOString().slice(0, 19).replaceAll(':', '-') + 'Z'
  return new URL(`${stamp}${names.length === 0 ? '' : '-' + names.join('-')}.json`, resultsDir)
}

/** Sets `value` at a dotted path, creating the objects on the way. */
function put (results: Results, path: string, value: unknown): void {
  const keys = path.split('.')
  let at = results
  for (const key of keys.slice(0, -1)) {
    if (typeof at[key] !== 'object' || at[key] === null) at[key] = {}
    at = at[key] as Results
  }
  at[keys.at(-1)!] = value
}

/** A bench that failed: every required figure under `prefixes` becomes null, with the reason beside it. */
function markFailed (results: Results, prefixes: readonly string[], reason: string): void {
  for (const path of requiredPaths.filter(p => prefixes.some(prefix => p.startsWith(prefix)))) {
    put(results, path, null)
    put(results, `${path.split('.').slice(0, -1).join('.')}.reason`, reason)
  }
}

interface Bench { run: (results: Results) => Promise<void>, owns: readonly string[], extra?: boolean }

const benches: Record<string, Bench> = {
  floors: {
    owns: ['floors.'],
    async run (results) {
      say('bench: floors: fsync rate, LevelDB sync batches, process spawn…')
      const f = await measureFloors()
      results['floors'] = f
      say(`  ${f.fsyncPerSec} fsync/s; LevelDB ${f.levelBatchRecPerSec} records/s in sync batches of 100; /bin/true spawn median ${f.spawnMs} ms`)
    }
  },
  tools: {
    owns: ['hookTool.'],
    async run (results) {
      say('bench: hook-tool call latency (C client over the unit socket) vs a bare spawn…')
      const tools = await measureHookToolCall()
      results['hookToolCall'] = tools
      results['hookTool'] = { ...tools.spawned.client, spawnFloorMedianMs: tools.spawned.spawnFloor.medianMs, inBashLoopMeanMs: tools.inBashLoop.clientMeanMs }
      say(`  median ${tools.spawned.client.medianMs} ms (p99 ${tools.spawned.client.p99Ms}); bare spawn ${tools.spawned.spawnFloor.medianMs} ms`)
    }
  },
  runner: {
    owns: ['hookOverheadMs'],
    async run (results) {
      say('bench: hook runner overhead around a trivial hook…')
      const runner = await measureHookRunnerOverhead()
      results['hookRunnerOverhead'] = runner
      results['hookOverheadMs'] = runner.overheadMs
      say(`  median: bare spawn ${runner.bare.medianMs} ms, hook runner ${runner.hookRunner.medianMs} ms (+${runner.overheadMs} ms)`)
    }
  },
  writes: {
    owns: ['writes.', 'failover.'],
    async run (results) {
      for (const [store, measure] of [['etcd', measureEtcdWrites], ['cantrip', measureCantripWrites]] as const) {
        say(`bench: desired-state writes, 3-member ${store} on loopback: sequential, 16 and 64 clients, failover after kill -9…`)
        try {
          const w = await measure()
          if (w.writes === null) throw new Error(`bench writes: expected the ${store} write loads measured, got none`)
          put(results, `writes.${store}`, { ...w.writes, ...(w.retriedWrites === undefined ? {} : { retriedWrites: w.retriedWrites }) })
          if (w.failover === null) throw new Error(`bench writes: expected the ${store} kill -9 failover measured, got none`)
          put(results, `failover.${store}`, {
            ...w.failover,
            ...(w.probeReplies === undefined ? {} : { probeReplies: w.probeReplies }),
            ...(w.silentFailover === null ? {} : { silent: w.silentFailover })
          })
          const f = w.failover
          const s = w.silentFailover
          const loads = w.writes
          say(`  ${(['seq', 'c16', 'c64', 'seqWarm'] as const).map(l => `${l} ${loads[l].opsPerSec}/s p50 ${loads[l].p50Ms} p99 ${loads[l].p99Ms} ms, ${loads[l].serverCpuMsPerWrite} CPU-ms/write`).join('; ')}`)
          say(`  failover over ${f.trials} kills: p50 ${f.p50Ms ?? 'n/a'} p90 ${f.p90Ms ?? 'n/a'} max ${f.maxMs ?? 'n/a'} ms, ${f.unrecovered} not recovered; medians from the kill: pre-candidate ${f.parts.preCandidateMs ?? 'n/a'}, candidate ${f.parts.candidateMs ?? 'n/a'}, leader ${f.parts.leaderMs ?? 'n/a'} ms, then ${f.parts.afterLeaderMs ?? 'n/a'} ms to the first committed probe`)
          if (s !== null) say(`  failover over ${s.trials} SIGSTOPs (nothing closes): p50 ${s.p50Ms ?? 'n/a'} p90 ${s.p90Ms ?? 'n/a'} max ${s.maxMs ?? 'n/a'} ms, ${s.unrecovered} not recovered; medians from the stop: pre-candidate ${s.parts.preCandidateMs ?? 'n/a'}, leader ${s.parts.leaderMs ?? 'n/a'} ms`)
        } catch (error) {
          markFailed(results, [`writes.${store}.`, `failover.${store}.`], message(error))
          say(`  ${store} failed: ${message(error)}`)
        }
      }
    }
  },
  watch: {
    owns: ['propagation.etcdWatch.'],
    async run (results) {
      for (const watchers of [10, 50]) {
        say(`bench: etcd watch, one put seen by ${watchers} etcdctl watchers…`)
        try {
          const w = await measureEtcdWatch(watchers, 10)
          put(results, `propagation.etcdWatch.n${watchers}`, { ...w.propagation, fromSend: w.fromSend })
          say(`  p50 ${w.propagation.p50Ms} ms, p99 ${w.propagation.p99Ms} ms (from the put's send: p50 ${w.fromSend.p50Ms}, p99 ${w.fromSend.p99Ms} ms)`)
        } catch (error) {
          markFailed(results, [`propagation.etcdWatch.n${watchers}.`], message(error))
          say(`  failed: ${message(error)}`)
        }
      }
    }
  },
  serf: {
    owns: ['propagation.serf.', 'detection.serf.'],
    async run (results) {
      for (const agents of [10, 50]) {
        say(`bench: serf, a user event to ${agents} agents${agents === 50 ? ', then kill -9 of one' : ''}…`)
        try {
          const s = await measureSerf(agents, 10, { detect: agents === 50 })
          put(results, `propagation.serf.n${agents}`, s.propagation)
          if (agents === 10) put(results, 'memory.serfAgentRssBytes', s.agentRssBytes)
          if (s.detection !== undefined) put(results, 'detection.serf.n50', { ms: s.detection.firstMs, allSurvivorsMs: s.detection.allMs, ...(s.detection.firstMs === null ? { reason: 'no member-failed within 60 s' } : {}) })
          say(`  p50 ${s.propagation.p50Ms} ms, p99 ${s.propagation.p99Ms} ms${s.detection === undefined ? '' : `; member-failed at agent 0 after ${s.detection.firstMs ?? 'n/a'} ms, at all survivors ${s.detection.allMs ?? 'n/a'} ms`}`)
        } catch (error) {
          markFailed(results, [`propagation.serf.n${agents}.`, ...(agents === 50 ? ['detection.serf.'] : [])], message(error))
          say(`  failed: ${message(error)}`)
        }
      }
    }
  },
  propagation: {
    owns: ['propagation.cantrip.', 'detection.cantrip.', 'memory.agentRssBytes'],
    async run (results) {
      for (const agents of [10, 50]) {
        say(`bench: cantrip, 3 controllers + ${agents} machine agents: change notices${agents === 50 ? ', then kill -9 of one agent' : ''}…`)
        try {
          // Traced (bench/notice-stages.ts): each recorded run says which hop holds the tail.
          const p = await measureCantripPropagation(agents, 10, { detect: agents === 50, trace: true })
          put(results, `propagation.cantrip.n${agents}`, { ...p.propagation, fromSend: p.fromSend, change: p.change, missed: p.missed, startSeconds: p.startSeconds, agentStart: p.agentStart, cpuPerChange: p.cpuPerChange, ...(p.stages === undefined ? {} : { stages: p.stages }) })
          if (agents === 10) { put(results, 'memory.agentRssBytes', p.agentRssBytes); put(results, 'memory.controllerRssBytes', p.controllerRssBytes) }
          if (p.detection !== undefined) put(results, 'detection.cantrip.n50', { ms: p.detection.failedMs, suspectMs: p.detection.suspectMs, ...(p.detection.failedMs === null ? { reason: 'not failed in the leader\'s presence table within 60 s' } : {}) })
          say(`  p50 ${p.propagation.p50Ms} ms, p99 ${p.propagation.p99Ms} ms (from the command's send: p50 ${p.fromSend.p50Ms}, p99 ${p.fromSend.p99Ms} ms; ${p.missed} missed); idle agent RSS ${Math.round(p.agentRssBytes / 1e6)} MB${p.detection === undefined ? '' : `; failed at the leader after ${p.detection.failedMs ?? 'n/a'} ms (suspect ${p.detection.suspectMs ?? 'n/a'} ms)`}`)
        } catch (error) {
          markFailed(results, [`propagation.cantrip.n${agents}.`, ...(agents === 50 ? ['detection.cantrip.'] : ['memory.agentRssBytes'])], message(error))
          say(`  failed: ${message(error)}`)
        }
      }
    }
  },
  memory: {
    owns: ['memory.unitActorBytes'],
    async run (results) {
      say('bench: heap per unit actor (200 units in the simulator\'s unit world)…')
      const m = await measureUnitActorMemory(200)
      put(results, 'memory.unitActorBytes', m.perUnitBytes)
      say(`  ${m.perUnitBytes} bytes per unit actor${(globalThis as { gc?: unknown }).gc === undefined ? ' (no --expose-gc: noisy)' : ''}`)
    }
  },
  deploy100: {
    owns: ['deploy100.'],
    async run (results) {
      say('bench: deploy-to-active, 100 units of a trivial charm on 10 machines of the local provider…')
      const d = await measureDeploy100()
      results['deploy100'] = d
      say(`  ${d.seconds} s from add-machine + deploy to all ${d.units} active`)
    }
  },
  versions: {
    owns: ['versions.'],
    async run (results) {
      say('bench: the built client and agent: cold starts beside node -e 0, idle machine agent RSS, bytes shipped to an SSH host, upgrade-model across 10 machines…')
      const v = await measureVersions()
      results['versions'] = v
      const c = v.coldStart
      say(`  wall: node -e 0 ${c.nodeMs} ms; version +${c.versionOverNodeMs} ms, --help +${c.helpOverNodeMs} ms, status +${c.statusOverNodeMs} ms (medians of ${c.runs})`)
      say(`  CPU: node -e 0 ${c.cpu.nodeMs} ms; version +${c.cpu.versionOverNodeMs} ms, --help +${c.cpu.helpOverNodeMs} ms, status +${c.cpu.statusOverNodeMs} ms`)
      say(`  idle machine agent ${Math.round(v.idleMachineAgentRssBytes / 1e6)} MB RSS (${Math.round(v.startingMachineAgentRssMaxBytes / 1e6)} MB at most while starting); ${Math.round(v.shipped.bytes / 1e5) / 10} MB shipped to an SSH host (${v.shipped.needsCompiler ? 'needs' : 'no'} C compiler); upgrade-model across ${v.upgrade.machines} machines ${v.upgrade.seconds ?? `n/a (${v.upgrade.reason ?? ''})`} s`)
    }
  },
  simscale: {
    owns: ['sim.'],
    async run (results) {
      for (const agents of simScalePoints()) {
        say(`bench: the whole system on the simulator, 3 controllers and ${agents} machine agents × 5 units…`)
        const p = await measureSimPoint(agents)
        put(results, `sim.n${agents}`, { simToWall: p.simToWall, convergeWallS: p.convergeWallS, peakRssMb: p.point?.peakRssMb ?? null, ...(p.reason === undefined ? {} : { reason: p.reason }), ...(p.point === undefined ? {} : { point: p.point }) })
        say(`  ${p.finished ? `converged in ${p.convergeWallS} s wall, ${p.simToWall}× real time, peak RSS ${p.point?.peakRssMb ?? 'n/a'} MB` : `not finished: ${p.reason}`}`)
      }
    }
  },
  sim: {
    owns: [],
    extra: true,
    async run (results) {
      say('bench: simulator speed, 5-unit machine agent world (40 seeds × 40 steps)…')
      results['simMachineAgent'] = await measureSimSpeed()
    }
  },
  inspect: {
    owns: [],
    extra: true,
    async run (results) {
      // A timing goal, so a bench and not a test: the viewer's functions are tested by
      // test/inspect-browser.test.ts; how fast it draws depends on the machine's load.
      say('bench: cantrip inspect in headless chromium, 100 units on 10 agents under a config-change load…')
      const r = await measureViewerResponsiveness({ agents: 10, unitsPerAgent: 10, seconds: 6 })
      results['inspectViewer'] = r
      for (const line of describeResponsiveness(r)) say(`  ${line}`)
    }
  },
  idle: {
    owns: [],
    extra: true,
    async run (results) {
      say('bench: idle CPU, 3 cantrip controllers and 3 etcd members, 10 s each…')
      const idle = await measureIdleCpu()
      results['idleCpu'] = idle
      say(`  cantrip ${idle.cantripPercent.join(' / ')} %, etcd ${idle.etcdPercent.join(' / ')} % of a core`)
    }
  },
  mesh: {
    owns: [],
    extra: true,
    async run (results) {
      say('bench: the mesh in real processes, 3 controllers + 20 machine agents…')
      results['mesh'] = await measureMesh(20, 20)
    }
  }
}

function message (error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300)
}

const chosen = process.argv.slice(2)
for (const name of chosen) {
  if (!Object.hasOwn(benches, name)) {
    process.stderr.write(`bench: expected one of ${Object.keys(benches).join(', ')}, got ${JSON.stringify(name)}\n`)
    process.exit(2)
  }
}
const selected = Object.entries(benches).filter(([name, b]) => chosen.length === 0 ? b.extra !== true : chosen.includes(name))
if (selected.some(([name]) => name === 'writes' || name === 'watch' || name === 'serf')) {
  execFileSync('sh', [new URL('../scripts/ensure-bench-tools.sh', import.meta.url).pathname], { stdio: 'inherit' })
}
const started = performance.now()
const startedAt = new Date()
const results: Results = { startedAt: startedAt.toISOString(), commit: commit(), benches: selected.map(([name]) => name) }
const loadStart = loadavg()
// The machine is shared: each bench's load averages go beside its figures.
const benchLoad: Record<string, { start: number[], end: number[] }> = {}
for (const [name, bench] of selected) {
  const t0 = performance.now()
  const before = loadavg()
  try {
    await bench.run(results)
  } catch (error) {
    markFailed(results, bench.owns, message(error))
    say(`  ${name} failed: ${message(error)}`)
  }
  benchLoad[name] = { start: before, end: loadavg() }
  say(`  (${name}: ${Math.round((performance.now() - t0) / 1000)} s, load ${before[0]!.toFixed(1)} → ${loadavg()[0]!.toFixed(1)})`)
  put(results, `benchSeconds.${name}`, Math.round((performance.now() - t0) / 1000))
}
results['machine'] = { cores: availableParallelism(), cpu: cpus()[0]?.model ?? '', memoryBytes: totalmem(), node: process.version }
results['load'] = { start: loadStart, end: loadavg(), benches: benchLoad }
results['runSeconds'] = Math.round((performance.now() - started) / 1000)
results['measuredAt'] = new Date().toISOString()
const resultsPath = resultsFile(startedAt, chosen)
await mkdir(resultsDir, { recursive: true })
await writeFile(resultsPath, JSON.stringify(results, null, 2) + '\n')
say('')
say(formatTable(results))
const problems = checkResults(results)
say(problems.length === 0 ? `bench: every required figure present; wrote ${resultsPath.pathname} (${results['runSeconds'] as number} s)` : `bench: wrote ${resultsPath.pathname} with ${problems.length} figures missing:\n${problems.join('\n')}`)
process.exit(0)
