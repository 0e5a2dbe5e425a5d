/**
 * `npm start`: a real local deployment of the example charms, its status, and proof
 * that the workloads answer — then a clean teardown.
 *
 * A one-member controller group (Raft on LevelDB) runs in this process; machine 0 is
 * this host at 127.0.0.1; the machine agent's deployer starts a unit agent per unit,
 * whose hooks are real bash processes calling the hook tools (the C client over the
 * unit's socket). Deployed: kv ×2 (peers), web ×1 related to kv, cluster ×3 (peers),
 * and the logship subordinate on each kv unit through juju-info.
 *
 *   node --import tsx examples/local-deploy.ts [--keep] [--data-dir <dir>] [--timeout <s>]
 *
 * --keep        stay up after the demo until SIGINT/SIGTERM, then tear down the same way
 * --data-dir    where the controller store, the machine store, the unit agents and the
 *               machine log live (must be new or empty; kept afterwards); default: a
 *               fresh temporary directory, removed at the end
 * --timeout     seconds to wait for every unit to settle (default 120)
 *
 * Exits 0 after a clean teardown; otherwise prints one `local-deploy: error: …` line,
 * stops every process it started (workloads by their pid files as a last resort) and
 * exits 1 (130 when interrupted before the demo finished).
 */
import '../runtime/polyfill.ts'
import { randomUUID } from 'node:crypto'
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, type WriteStream } from 'node:fs'
import { freePort, portFree } from '../agent/free-port.ts'
import { exerciseWeb } from './demo/workloads.ts'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packCharm } from '../agent/charm/charm-archive.ts'
import { loadCharmDir } from '../agent/charm/load-charm.ts'
import { ChildProcessRunner } from '../agent/child-process-runner.ts'
import { LocalController } from '../agent/controller/local-controller.ts'
import { ensureToolClient } from '../agent/hook-tools/client/build-client.ts'
import { LevelStorage } from '../agent/level-storage.ts'
import { StreamLogger } from '../agent/stream-logger.ts'
import { SystemClock } from '../agent/system-clock.ts'
import type { Deployer } from '../actors/machine/deployer.ts'
import { startProcessDeployer } from '../agent/uniter/deployer.ts'
import { deployCharmArchive } from '../agent/uniter/charm-fetch.ts'
import { naturalCompare } from '../runtime/ids.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import type { ModelCommand, UnitRecord } from '../runtime/model/model-types.ts'
import { tableValues } from '../runtime/model/table.ts'
import { displayedUnitStatus, formatStatus } from './status-table.ts'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const charmsDir = join(repoRoot, 'examples', 'charms')
const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version
const kvUnits = 2
const clusterUnits = 3
/** kv's `port` option is 0 by default: each unit serves on 18000 + its unit number. */
const kvBasePort = 18000
const teardownWaitMs = 60_000
const workloadExitWaitMs = 10_000

const say = (line = ''): void => { process.stdout.write(line + '\n') }
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`
const errorText = (error: unknown): string => error instanceof Error ? error.message : String(error)

class Interrupted extends Error {}

// ---------------------------------------------------------------------------- options

interface Options { keep: boolean, dataDir: string | undefined, timeoutMs: number }

function parseOptions (argv: readonly string[]): Options {
  const options: Options = { keep: false, dataDir: undefined, timeoutMs: 120_000 }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = (): string => {
      const next = argv[++i]
      if (next === undefined || next.startsWith('--')) throw new Error(`${arg} needs a value`)
      return next
    }
    if (arg === '--keep') options.keep = true
    else if (arg === '--data-dir') options.dataDir = resolve(value())
    else if (arg === '--timeout') {
      const s = Number(value())
      if (!Number.isFinite(s) || s <= 0) throw new Error('--timeout needs a positive number of seconds')
      options.timeoutMs = s * 1000
    } else if (arg === '--help' || arg === '-h') {
      say('usage: npm start -- [--keep] [--data-dir <dir>] [--timeout <seconds>]')
      process.exit(0)
    } else throw new Error(`unknown argument ${JSON.stringify(arg)} (try --help)`)
  }
  return options
}

// ---------------------------------------------------------------------------- helpers

/** A process is gone when kill(0) fails or /proc shows a zombie (its parent, init, has not reaped it yet). */
function alive (pid: number): boolean {
  try { process.kill(pid, 0) } catch { return false }
  try { return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')) } catch { return true }
}

/** Workload pids the charms recorded in their unit state dirs (`agents/<unit>/state/<name>.pid`). */
function workloadPids (root: string): Map<number, string> {
  const pids = new Map<number, string>()
  const agents = join(root, 'agents')
  if (!existsSync(agents)) return pids
  for (const unit of readdirSync(agents)) {
    const state = join(agents, unit, 'state')
    if (!existsSync(state)) continue
    for (const file of readdirSync(state).filter(name => name.endsWith('.pid'))) {
      let pid = Number.NaN
      try { pid = Number(readFileSync(join(state, file), 'utf8').trim()) } catch { /* removed meanwhile */ }
      if (Number.isSafeInteger(pid) && pid > 1) pids.set(pid, `${unit}/state/${file}`)
    }
  }
  return pids
}

/** `unit-kv-0/state/kv-server.pid` → `kv-server of kv/0`. */
function workloadLabel (file: string): string {
  const match = /^unit-(.+)-(\d+)\/state\/(.+)\.pid$/.exec(file)
  return match === null ? file : `${match[3]} of ${match[1]}/${match[2]}`
}

// ---------------------------------------------------------------------------- the run

const options = (() => {
  try {
    return parseOptions(process.argv.slice(2))
  } catch (error) {
    process.stderr.write(`local-deploy: error: ${errorText(error)}\n`)
    process.exit(2)
  }
})()

const t0 = performance.now()
const since = (): string => seconds(performance.now() - t0)
const stop = new AbortController()
let fatal: unknown
let signals = 0
let root: string | undefined
let keptRoot = options.dataDir !== undefined
let controller: LocalController | undefined
let storage: LevelStorage | undefined
let deployer: Deployer | undefined
let logStream: WriteStream | undefined
/** Every workload pid seen while the deployment ran, so teardown can check they ended. */
const seenPids = new Map<number, string>()

function onSignal (signal: NodeJS.Signals): void {
  if (++signals === 1) {
    stop.abort(signal)
    return
  }
  // A second signal: no more waiting for stop hooks.
  process.stderr.write(`local-deploy: ${signal} again: killing the workloads and exiting\n`)
  if (root !== undefined) for (const pid of workloadPids(root).keys()) { try { process.kill(pid, 'SIGKILL') } catch { /* gone */ } }
  process.exit(130)
}
process.on('SIGINT', onSignal)
process.on('SIGTERM', onSignal)
// The deployer starts agents from controller callbacks; a failure there must end the run
// through the cleanup below, not kill the process with the workloads still running.
const onFatal = (error: unknown): void => {
  fatal ??= error
  stop.abort('fatal')
}
process.on('unhandledRejection', onFatal)
process.on('uncaughtException', onFatal)

function checkStop (): void {
  if (!stop.signal.aborted) return
  if (fatal !== undefined) throw fatal instanceof Error ? fatal : new Error(String(fatal))
  throw new Interrupted(`interrupted by ${String(stop.signal.reason)}`)
}

async function sleep (ms: number): Promise<void> {
  await new Promise<void>(resolve => {
    const timer = setTimeout(done, ms)
    function done (): void { clearTimeout(timer); stop.signal.removeEventListener('abort', done); resolve() }
    stop.signal.addEventListener('abort', done, { once: true })
  })
}

function model (): ReturnType<LocalController['model']> {
  return controller!.model()
}

function units (): UnitRecord[] {
  return tableValues(model().units).sort((a, b) => naturalCompare(a.name, b.name))
}

function describeUnit (unit: UnitRecord): string {
  const shown = displayedUnitStatus(unit)
  return `${unit.name} ${shown.workload}${shown.message === '' ? '' : ` "${shown.message}"`} (agent ${shown.agent})`
}

/**
 * What still keeps the deployment from being settled, per unit: not active, agent busy,
 * or not yet seeing its relations (web's backends, cluster's members), or no leader.
 */
function unsettled (expectedUnits: number, kvCount: number): string[] {
  const reader = readerOf(model())
  const problems: string[] = []
  const all = units()
  if (all.length < expectedUnits) problems.push(`${all.length} of ${expectedUnits} units in the model`)
  for (const unit of all) {
    const shown = displayedUnitStatus(unit)
    if (shown.workload !== 'active' || shown.agent !== 'idle') {
      problems.push(describeUnit(unit))
    } else if (unit.application === 'web' && unit.workload.message !== `${kvCount} backends`) {
      problems.push(`${describeUnit(unit)}, waiting for ${kvCount} backends`)
    } else if (unit.application === 'cluster' && !unit.workload.message.startsWith(`member of ${clusterUnits},`)) {
      problems.push(`${describeUnit(unit)}, waiting for ${clusterUnits} members`)
    }
  }
  for (const app of ['kv', 'web', 'cluster', 'logship']) {
    if (reader.application(app) !== undefined && reader.lease(app) === undefined) problems.push(`${app}: no leader yet`)
  }
  if ((reader.application('kv')?.leaderSettings.token ?? '') === '') problems.push('kv: the leader has not shared its token yet')
  return problems
}

/** Waits until `problems()` is empty, showing progress; throws naming what is still wrong after `timeoutMs`. */
async function settle (what: string, timeoutMs: number, problems: () => string[], progress: () => string): Promise<number> {
  const start = performance.now()
  const tty = process.stdout.isTTY === true
  let lastLine = ''
  let lastPrinted = 0
  for (;;) {
    checkStop()
    for (const pid of root === undefined ? [] : workloadPids(root)) seenPids.set(...pid)
    const open = problems()
    const elapsed = performance.now() - start
    if (open.length === 0) {
      if (tty) process.stdout.write('\r\x1b[2K')
      return elapsed
    }
    if (elapsed > timeoutMs) {
      if (tty) process.stdout.write('\r\x1b[2K')
      throw new Error(`timed out after ${seconds(timeoutMs)} waiting for ${what}: ${open.join('; ')}`)
    }
    const line = progress()
    if (tty) {
      const text = `  [${seconds(elapsed).padStart(6)}] ${line}`
      process.stdout.write('\r\x1b[2K' + text.slice(0, Math.max(20, (process.stdout.columns ?? 100) - 1)))
    } else if (line !== lastLine && performance.now() - lastPrinted > 2_000) {
      say(`  [${seconds(elapsed).padStart(6)}] ${line}`)
      lastLine = line
      lastPrinted = performance.now()
    }
    await sleep(100)
  }
}

function deployProgress (): string {
  const all = units()
  const active = all.filter(u => u.workload.status === 'active' && u.agent.status === 'idle').length
  const busy = all.filter(u => !(u.workload.status === 'active' && u.agent.status === 'idle'))
    .slice(0, 3).map(u => {
      const shown = displayedUnitStatus(u)
      return `${u.name} ${shown.workload}${shown.message === '' ? '' : ` ${shown.message}`}`
    })
  return `${active}/${all.length} units active${busy.length === 0 ? ', waiting for relations' : ` · ${busy.join(' · ')}`}`
}

async function asMachine (body: Record<string, unknown>): Promise<void> {
  const command = { ...body, requestId: `machine-0/${randomUUID()}`, proposer: { kind: 'machine', id: '0' } } as unknown as ModelCommand
  const result = await controller!.submit(command)
  if (!result.ok) throw new Error(result.error)
}

async function deploy (): Promise<{ webPort: number, kvCount: number }> {
  // Preconditions, each failing with what to do about it.
  try {
    await ensureToolClient()
  } catch (error) {
    throw new Error(`the hook tools' client is built with the system C compiler (cc), which failed: ${errorText(error)}`)
  }

  // kv's port option is one value for the whole application, so two units on one machine
  // must leave it at 0 (18000 + unit number); those ports must be free.
  const kvPorts = Array.from({ length: kvUnits }, (_, n) => kvBasePort + n)
  const busy: number[] = []
  for (const port of kvPorts) if (!await portFree(port, '0.0.0.0')) busy.push(port)
  let kvCount = kvUnits
  let kvConfig: Record<string, number> = {}
  if (busy.length > 0) {
    kvCount = 1
    kvConfig = { port: await freePort('0.0.0.0') }
    say(`note: port ${busy.join(', ')} is in use; kv's port option is one value for the whole application and 0 means 18000 + unit number, so two kv units cannot share this machine: deploying one kv unit on port ${kvConfig.port}`)
  }
  const webPort = await freePort('0.0.0.0')

  mkdirSync(join(root!, 'logs'), { recursive: true })
  logStream = createWriteStream(join(root!, 'logs', 'machine-0.log'), { flags: 'a' })
  const logger = new StreamLogger({ stream: logStream, module: 'machine-0', levelMin: 'debug' })

  controller = await LocalController.start(join(root!, 'controller'))
  say(`controller  one-member Raft group on LevelDB, leading (${since()})`)
  storage = await LevelStorage.open(join(root!, 'machine-0'))
  await controller.admin({ type: 'add-machine' })
  await controller.asController({ type: 'set-machine-instance', machine: '0', instanceId: 'local-0', addresses: ['127.0.0.1'] })
  await controller.asController({ type: 'set-machine-status', machine: '0', instanceStatus: 'running', message: '', now: Math.floor(controller.now()) })
  say('machine 0   this host, 127.0.0.1')

  const charmLines: string[] = []
  for (const name of ['kv', 'web', 'cluster', 'logship']) {
    const dir = join(charmsDir, name)
    const loaded = await loadCharmDir(dir)
    const packed = await packCharm(dir)
    const url = `local:${name}-0`
    await controller.charms.put(packed.bytes)
    await controller.admin({ type: 'add-charm', url, hash: packed.hash, metadata: loaded.summary })
    charmLines.push(`${url} (sha256 ${packed.hash.slice(0, 12)}…)`)
  }
  say(`charms      ${charmLines.join(', ')}`)

  await controller.admin({ type: 'deploy', application: 'kv', charm: 'local:kv-0', config: kvConfig, constraints: {}, numUnits: kvCount, placement: Array(kvCount).fill('0') })
  await controller.admin({ type: 'deploy', application: 'web', charm: 'local:web-0', config: { port: webPort }, constraints: {}, numUnits: 1, placement: ['0'] })
  await controller.admin({ type: 'integrate', a: 'web:backend', b: 'kv:website' })
  await controller.admin({ type: 'deploy', application: 'cluster', charm: 'local:cluster-0', config: {}, constraints: {}, numUnits: clusterUnits, placement: Array(clusterUnits).fill('0') })
  await controller.admin({ type: 'deploy', application: 'logship', charm: 'local:logship-0', config: {}, constraints: {}, numUnits: 0 })
  const sub = await controller.admin({ type: 'integrate', a: 'logship:juju-info', b: 'kv:juju-info' })
  say(`deploy      kv ×${kvCount} (${kvCount === kvUnits ? `ports ${kvPorts.join(', ')}` : `port ${kvConfig.port}`}), web ×1 (port ${webPort}), cluster ×${clusterUnits}, logship (subordinate)`)
  say(`integrate   web:backend kv:website; logship:juju-info kv:juju-info (${(sub.units ?? []).join(', ')})`)

  deployer = startProcessDeployer({
    machineId: '0',
    dataDir: root!,
    controller,
    storage,
    processRunner: new ChildProcessRunner(),
    // Each unit agent fetches the archive from the controller's charm store by its hash.
    fetchCharm: async (url, dir) => { await deployCharmArchive(controller!, url, dir) },
    logger,
    clock: new SystemClock(),
    leaseDurationMs: 10_000
  })
  await asMachine({ type: 'set-machine-status', machine: '0', agentStatus: 'started', message: '', now: Math.floor(controller.now()) })
  say(`machine agent started; unit agents run the hooks (log: ${join(root!, 'logs', 'machine-0.log')})`)
  say()
  const expected = kvCount * 2 + 1 + clusterUnits
  const took = await settle('every unit to be active', options.timeoutMs, () => unsettled(expected, kvCount), deployProgress)
  say(`all ${units().length} units active and related after ${seconds(took)}`)
  return { webPort, kvCount }
}

async function demo (webPort: number): Promise<void> {
  const token = readerOf(model()).application('kv')!.leaderSettings.token!
  await exerciseWeb(webPort, token, say)

  // What the two workload-less or background charms left in their unit state dirs.
  const state = (unit: string, file: string): string | undefined => {
    try { return readFileSync(join(root!, 'agents', `unit-${unit.replace('/', '-')}`, 'state', file), 'utf8') } catch { return undefined }
  }
  const shipped = units().filter(u => u.application === 'logship').map(u => {
    const lines = (state(u.name, 'shipped.log') ?? '').split('\n').filter(line => line !== '').length
    return `${u.name} (on ${u.principal ?? '?'}) ${lines}`
  })
  say(`logship: log lines shipped into state/shipped.log by ${shipped.join(', ')}`)
  const digests = units().filter(u => u.application === 'cluster').map(u => {
    try { return (JSON.parse(state(u.name, 'cluster.json') ?? '{}') as Record<string, unknown>)['secret-sha256-prefix'] } catch { return undefined }
  })
  const agreed = digests.every(d => typeof d === 'string' && d !== '' && d === digests[0])
  say(`cluster: ${digests.length} members ${agreed ? `agree on the leader's secret (sha256 ${String(digests[0])}…)` : `do not agree on the leader's secret yet: ${digests.map(String).join(', ')}`}`)
}

/** remove-application for each application, then waits (bounded) until every unit has left the model. */
async function tearDown (): Promise<void> {
  if (controller === undefined) return
  const apps = tableValues(model().applications).filter(a => a.life === 'alive').map(a => a.name).sort(naturalCompare)
  if (apps.length === 0 && units().length === 0) return
  say(`remove-application ${apps.join(', ')}`)
  for (const app of apps) await controller.admin({ type: 'remove-application', application: app })
  for (const pid of root === undefined ? [] : workloadPids(root)) seenPids.set(...pid)
  if (deployer === undefined) return
  const start = performance.now()
  const until = start + teardownWaitMs
  while (units().length > 0 || tableValues(model().applications).length > 0) {
    if (performance.now() > until) throw new Error(`timed out after ${seconds(teardownWaitMs)} waiting for the units to go: ${units().map(describeUnit).join('; ')}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  say(`every unit ran its stop and remove hooks and left the model after ${seconds(performance.now() - start)}`)
  // The stop hooks end the workloads; give them a moment to exit.
  const exitUntil = performance.now() + workloadExitWaitMs
  let running = [...seenPids].filter(([pid]) => alive(pid))
  while (running.length > 0 && performance.now() < exitUntil) {
    await new Promise(resolve => setTimeout(resolve, 100))
    running = running.filter(([pid]) => alive(pid))
  }
  if (running.length > 0) throw new Error(`workloads still running after their units were removed: ${running.map(([pid, file]) => `pid ${pid} (${file})`).join(', ')}`)
  say(`workloads ended: ${seenPids.size === 0 ? 'none were running' : [...seenPids.values()].map(workloadLabel).sort(naturalCompare).join(', ')}`)
}

/** Stops everything this process started; never throws. Returns the leftover pids it had to kill. */
async function release (): Promise<number[]> {
  const steps: Array<[string, () => Promise<void> | void]> = [
    ['the machine agent', async () => { await deployer?.stop() }],
    ['the controller', async () => { await controller?.stop() }],
    ['the machine store', async () => { await storage?.close() }],
    ['the log', async () => { await new Promise<void>(resolve => { if (logStream === undefined) resolve(); else logStream.end(resolve) }) }]
  ]
  for (const [what, step] of steps) {
    try { await step() } catch (error) { process.stderr.write(`local-deploy: warning: stopping ${what}: ${errorText(error)}\n`) }
  }
  const killed: number[] = []
  if (root !== undefined) {
    for (const [pid, file] of [...seenPids, ...workloadPids(root)]) {
      if (!alive(pid)) continue
      try { process.kill(pid, 'SIGKILL'); killed.push(pid) } catch { /* gone */ }
      process.stderr.write(`local-deploy: killed leftover workload pid ${pid} (${file})\n`)
    }
  }
  return killed
}

async function main (): Promise<number> {
  let failure: unknown
  try {
    if (options.dataDir !== undefined) {
      mkdirSync(options.dataDir, { recursive: true })
      if (readdirSync(options.dataDir).length > 0) throw new Error(`data dir ${options.dataDir} is not empty; give a new or empty directory`)
      root = options.dataDir
    } else {
      root = mkdtempSync(join(tmpdir(), 'cantrip-local-'))
    }
    say(`cantrip ${version}: local deployment of the example charms`)
    say(`data dir    ${root}${options.dataDir === undefined ? ' (temporary)' : ''}`)
    const { webPort } = await deploy()
    checkStop()
    say()
    say(formatStatus(model(), { model: 'default', controller: 'local', cloud: 'local/localhost', version, at: new Date() }))
    say()
    await demo(webPort)
    say()
    if (options.keep) {
      const token = readerOf(model()).application('kv')!.leaderSettings.token!
      say(`Running until Ctrl-C or kill -TERM ${process.pid}. Try:`)
      say(`  curl http://127.0.0.1:${webPort}/backends`)
      say(`  curl -X PUT -H 'X-Token: ${token}' --data world http://127.0.0.1:${webPort}/kv/hello`)
      say(`  curl http://127.0.0.1:${webPort}/kv/hello`)
      await new Promise(resolve => { stop.signal.addEventListener('abort', resolve, { once: true }) })
      say()
      if (fatal !== undefined) checkStop()
      say(`${String(stop.signal.reason)}: tearing down`)
    }
  } catch (error) {
    failure = error
  }
  if (failure !== undefined && !(failure instanceof Interrupted)) keptRoot = true
  // Tear down through the model, so stop hooks end the workloads; the interrupts that
  // ended the run above do not cut this short (a second signal does).
  try {
    if (failure !== undefined && controller !== undefined) say(`\ntearing down after ${failure instanceof Interrupted ? 'the interrupt' : 'the error'}`)
    await tearDown()
  } catch (error) {
    failure ??= error
    keptRoot = true
  }
  const killed = await release()
  if (killed.length > 0 && failure === undefined) {
    failure = new Error(`${killed.length} workload process(es) outlived the teardown and were killed: ${killed.join(', ')}`)
    keptRoot = true
  }
  if (root !== undefined) {
    if (!keptRoot) {
      rmSync(root, { recursive: true, force: true })
      say(`stopped the machine agent, hook tool services and controller; removed ${root}`)
    } else if (existsSync(root)) {
      say(`stopped the machine agent, hook tool services and controller; kept ${root} (logs/machine-0.log, agents/*/state)`)
    }
  }
  if (failure !== undefined) {
    process.stderr.write(`local-deploy: error: ${errorText(failure)}\n`)
    return failure instanceof Interrupted ? 130 : 1
  }
  say(`done in ${since()}`)
  return 0
}

process.exit(await main())
