/**
 * `npm start`: the example charms deployed through the real `cantrip` CLI on a local
 * controller, left running for you to look at.
 *
 * Checks the prerequisites (Node, bash, cc), bootstraps a controller named "demo" with
 * the local provider (or reuses a healthy one of that name), deploys
 * examples/bundle.yaml (kv ×2 behind web, logship on each kv unit) and the cluster charm
 * ×3 placed on the same machines (`--to`), waits — pushed by the controller's change
 * notices — until every unit is active and idle and sees its relations, prints
 * `cantrip status` and `cantrip status --relations`, sends a few requests through web to
 * kv, and says how to look further and how to tear down. $CANTRIP_HOME is honoured.
 *
 *   node --import tsx examples/demo.ts [--timeout <seconds>]
 *
 * Exits 0 with the deployment running. On failure: one `cantrip demo: …` line, the
 * controller left as it is for inspection, the teardown command, exit 1.
 */
import '../runtime/polyfill.ts'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Command } from 'commander'
import { createContext } from '../agent/cli/cli-context.ts'
import { cantripHome, controllerEntry, type ControllerEntry, readControllers, writeControllers } from '../agent/cli/cli-home.ts'
import { loadCommands } from '../agent/cli/commands/index.ts'
import { untilModel } from '../agent/cli/commands/model-common.ts'
import { Connection, type FullModel } from '../agent/cli/connection.ts'
import { statusDocument } from '../agent/cli/status-document.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import { tableValues } from '../runtime/model/table.ts'
import { naturalCompare } from '../runtime/ids.ts'
import { cantrip } from './demo/cli-run.ts'
import { controllerHealth } from './demo/controller-health.ts'
import { bundleWithFreePorts } from './demo/ports.ts'
import { checkPrerequisites } from './demo/prerequisites.ts'
import { settling } from './demo/settled.ts'
import { exerciseWeb, reportState, webPort } from './demo/workloads.ts'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version
const controllerName = 'demo'
const bundlePath = join(repoRoot, 'examples', 'bundle.yaml')
const clusterCharm = join(repoRoot, 'examples', 'charms', 'cluster')
const clusterUnits = 3
const settleMsDefault = 240_000
/** Plain (non-terminal) progress: at most one line this often. */
const progressLineMs = 2_000
const teardown = `npm run cantrip -- destroy-controller ${controllerName} --no-prompt`

const say = (line = ''): void => { process.stdout.write(line + '\n') }
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

function parseTimeout (argv: readonly string[]): number {
  let timeoutMs = settleMsDefault
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--timeout') {
      const s = Number(argv[++i])
      if (!Number.isFinite(s) || s <= 0) throw new Error(`cantrip demo: expected --timeout <seconds> as a positive number, got ${JSON.stringify(argv[i] ?? '')}`)
      timeoutMs = s * 1000
    } else if (arg === '--help' || arg === '-h') {
      say('usage: npm start -- [--timeout <seconds>]   (controller "demo" in $CANTRIP_HOME, default ~/.local/share/cantrip)')
      process.exit(0)
    } else {
      throw new Error(`cantrip demo: expected --timeout or --help, got ${JSON.stringify(arg)}`)
    }
  }
  return timeoutMs
}

/** Bootstraps "demo", or reuses it when it answers; a stale one is an error saying how to clean up. */
async function ensureController (): Promise<{ reused: boolean }> {
  const existing = readControllers().controllers[controllerName]
  if (existing === undefined) {
    await cantrip(repoRoot, ['bootstrap', controllerName, '--inspect'], say)
    return { reused: false }
  }
  const problem = await controllerHealth(existing)
  if (problem !== undefined) {
    throw new Error(`cantrip demo: expected controller "${controllerName}" in ${cantripHome()} to answer, got: ${problem}; remove it with "${teardown}" and run npm start again`)
  }
  const file = readControllers()
  file['current-controller'] = controllerName
  writeControllers(file)
  say(`Reusing controller "${controllerName}" (it answers; data in ${existing.dir}); it is now the current controller`)
  return { reused: true }
}

async function readModelOnce (entry: ControllerEntry): Promise<FullModel> {
  const connection = await Connection.open(entry)
  try {
    return await connection.model()
  } finally {
    await connection.close()
  }
}

/** Machines of the principal units, in order: where the cluster units go. */
function principalMachines (full: FullModel): string[] {
  const machines = tableValues(full.model.units).filter(u => u.principal === null).map(u => u.machine).filter((m): m is string => m !== null)
  return [...new Set(machines)].sort(naturalCompare)
}

async function waitSettled (connection: Connection, timeoutMs: number): Promise<FullModel> {
  const started = performance.now()
  const tty = process.stdout.isTTY === true
  let lastLine = ''
  let lastPrinted = 0
  let last: FullModel | undefined
  let open: string[] = []
  const reached = await untilModel(connection, full => {
    last = full
    const state = settling(statusDocument(full, controllerName, Date.now()), readerOf(full.model).application('kv')?.leaderSettings['token'])
    open = state.problems
    if (open.length === 0) return true
    const line = `[${seconds(performance.now() - started).padStart(7)}] ${state.active}/${state.total} units active · ${open.slice(0, 2).join(' · ')}`
    if (tty) process.stdout.write('\r\x1b[2K' + line.slice(0, Math.max(20, (process.stdout.columns ?? 100) - 1)))
    else if (line !== lastLine && performance.now() - lastPrinted > progressLineMs) {
      say(line)
      lastLine = line
      lastPrinted = performance.now()
    }
    return false
  }, timeoutMs)
  if (tty) process.stdout.write('\r\x1b[2K')
  if (!reached || last === undefined) throw new Error(`cantrip demo: expected every unit active and related within ${seconds(timeoutMs)}, got: ${open.join('; ') || 'no answer from the controller'}`)
  say(`Every unit is active and idle, and sees its relations, after ${seconds(performance.now() - started)}.`)
  return last
}

/** The CLI's commands, to say which of the next steps exist yet. */
async function availableCommands (): Promise<Set<string>> {
  const program = new Command('cantrip')
  const context = createContext({ noColor: true })
  for (const register of await loadCommands()) register(program, context)
  return new Set(program.commands.map(c => c.name()))
}

async function nextSteps (dir: string, port: number): Promise<void> {
  const have = await availableCommands()
  const step = (command: string, what: string, missing: string): void => {
    const name = command.split(' ')[0]!
    say(`  npm run cantrip -- ${command.padEnd(16)} ${have.has(name) ? what : missing}`)
  }
  say(`Controller "${controllerName}" keeps running (its data and logs are in ${dir}). To look further:`)
  step('status --watch', 'the status, redrawn on every change (Ctrl-C to stop)', '')
  step('debug-log', 'the agents\' logs, merged and followed', `coming; meanwhile the logs are ${dir}/c0/cantripd.log and ${dir}/machines/machine-*/agent.log`)
  step('inspect', 'the actors and their statecharts, live, in a local web viewer', 'coming: not in this build yet')
  say(`  curl http://127.0.0.1:${port}/backends         web's backends, from the kv units' relation data`)
  say('Tear down (stops every process it started, by pid, and removes its directory):')
  say(`  ${teardown}`)
}

async function main (): Promise<void> {
  const timeoutMs = parseTimeout(process.argv.slice(2))
  const started = performance.now()
  say(`cantrip ${version} demo: the example charms on a local controller, through the cantrip CLI`)
  say(`CANTRIP_HOME ${cantripHome()}`)
  await checkPrerequisites(repoRoot)
  const { reused } = await ensureController()
  const { entry } = controllerEntry(controllerName)
  // A reused deployment keeps its ports; a new one moves off ports something else holds.
  // CANTRIP_DEMO_FREE_PORTS=1: free ports whatever the bundle's (several demos started at once on one host).
  const always = process.env['CANTRIP_DEMO_FREE_PORTS'] === '1'
  const bundle = reused ? { path: bundlePath, moved: [] } : await bundleWithFreePorts(bundlePath, join(entry.dir, 'demo-bundle.yaml'), always)
  if (bundle.moved.length > 0) say(`Note: ${always ? 'CANTRIP_DEMO_FREE_PORTS=1' : 'the bundle\'s ports are taken here'}, so the demo deploys a copy with free ones (${bundle.moved.join(', ')}): ${bundle.path}`)
  await cantrip(repoRoot, ['deploy', bundle.path, '-c', controllerName], say)
  const before = await readModelOnce(entry)
  if (readerOf(before.model).application('cluster') === undefined) {
    const machines = principalMachines(before).slice(0, clusterUnits)
    await cantrip(repoRoot, ['deploy', clusterCharm, '-n', String(clusterUnits), ...(machines.length > 0 ? ['--to', machines.join(',')] : []), '-c', controllerName], say)
  } else {
    say('cluster is in the model already')
  }
  // Opened only now: every CLI process speaks as the same admin peer, and a watch
  // subscribed after another such process came and went hears no change notices.
  const connection = await Connection.open(entry)
  try {
    say('Waiting until every unit is active and idle and sees its relations…')
    const full = await waitSettled(connection, timeoutMs)
    say()
    await cantrip(repoRoot, ['status', '-c', controllerName], say)
    say()
    const doc = statusDocument(full, controllerName, Date.now())
    const port = webPort(doc)
    await exerciseWeb(port, readerOf(full.model).application('kv')!.leaderSettings['token']!, say)
    reportState(statusDocument(await connection.model(), controllerName, Date.now()), entry.dir, say)
    say()
    await cantrip(repoRoot, ['status', '--relations', '-c', controllerName], say)
    say()
    say(`Done in ${seconds(performance.now() - started)}.`)
    await nextSteps(entry.dir, port)
  } finally {
    await connection.close()
  }
}

// Ctrl-C while waiting: the deployment carries on without us; say how to stop it.
process.once('SIGINT', () => {
  process.stderr.write(`\ncantrip demo: interrupted${knownController() ? `; controller "${controllerName}" keeps running (npm run cantrip -- status); tear down with: ${teardown}` : ''}\n`)
  process.exit(130)
})

function knownController (): boolean {
  try {
    return readControllers().controllers[controllerName] !== undefined
  } catch {
    return false
  }
}

try {
  await main()
  process.exit(0)
} catch (error) {
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!
  process.stderr.write(`${message.startsWith('cantrip') ? message : `cantrip demo: ${message}`}\n`)
  if (knownController() && !message.includes(teardown)) {
    process.stderr.write(`Left as it is for inspection (npm run cantrip -- status -c ${controllerName}); tear down with: ${teardown}\n`)
  }
  process.exit(1)
}
