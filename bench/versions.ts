/**
 * The built client and agent, measured as a user meets them (issue 26), each beside the
 * same run's floor:
 *
 *   cold start   `cantrip version`, `cantrip --help` and `cantrip status` (dist/cantrip.mjs
 *                against a live controller), each run `coldRuns` times interleaved with
 *                `node -e 0`; medians, and each minus node's
 *   idle agent   VmRSS of a machine agent with no units, started by the local provider
 *                through its launcher as every machine is, sampled for its first minute:
 *                idle is the median of the last samples, and the start-up peak is kept too
 *   shipped      the bytes the manual provider sends a new SSH host: the tar of the staged
 *                agent bundle (agent/tools/agent-bundle.ts), exactly what it packs; and
 *                whether that host would need a C compiler (it would not if the bundle
 *                holds the prebuilt hook-tool client and LevelDB's prebuilt binding)
 *   upgrade      `upgrade-model` from this tree to the same tree stamped one patch higher
 *                (test/support/stamped-tree.ts) across `upgradeMachines` idle machines:
 *                from the command until every machine reports the new version
 *
 * One controller bootstrapped with the CLI in a temporary CANTRIP_HOME, destroyed with
 * `cantrip destroy-controller` at the end. Run alone with `npm run bench -- versions`.
 */
import '../runtime/polyfill.ts'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { controllerEntry } from '../agent/cli/cli-home.ts'
import { Connection, type FullModel } from '../agent/cli/connection.ts'
import { stagedAgentBundle, installationAgentBundle } from '../agent/tools/agent-bundle.ts'
import { cantripVersion } from '../agent/version.ts'
import { tableValues } from '../runtime/model/table.ts'
import { stampedTree } from '../test/support/stamped-tree.ts'
import { rssBytes } from './child-processes.ts'
import { pollUntil, quantile, round, sleep } from './stats.ts'

export interface VersionsBench {
  coldStart: {
    runs: number
    nodeMs: number
    versionMs: number
    helpMs: number
    statusMs: number
    /** Each command's median minus `node -e 0`'s, in the same run. */
    versionOverNodeMs: number
    helpOverNodeMs: number
    statusOverNodeMs: number
    /** The same medians in CPU time (user + system): what a start costs whatever the load. */
    cpu: { nodeMs: number, versionOverNodeMs: number, helpOverNodeMs: number, statusOverNodeMs: number }
  }
  /** Median VmRSS over the last `rssSamples` samples of the first `idleWatchMs` after the agent started. */
  idleMachineAgentRssBytes: number
  /** The highest sample in that time: start-up's garbage, before V8's memory reducer returns it. */
  startingMachineAgentRssMaxBytes: number
  shipped: { bytes: number, bundleBytes: number, needsCompiler: boolean }
  upgrade: { machines: number, seconds: number | null, reason?: string }
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const controllerName = 'bench-versions'
const coldRuns = 11
/** How long the idle agent is watched: V8's memory reducer returns start-up's garbage about 30 s after start. */
const idleWatchMs = 60_000
const rssEveryMs = 2_000
const rssSamples = 5
const upgradeMachines = 10
const machinesStartWithinMs = 300_000
const upgradeWithinMs = 300_000
const cliRunMsMax = 240_000

function cli (home: string, args: readonly string[], tree = repoRoot): string {
  const run = spawnSync(process.execPath, [join(tree, 'dist', 'cantrip.mjs'), ...args], {
    cwd: tree, env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1' }, encoding: 'utf8', timeout: cliRunMsMax
  })
  if (run.status !== 0) throw new Error(`bench versions: expected cantrip ${args.join(' ')} to exit 0, got ${String(run.status)}: ${run.stderr.trim().split('\n').pop() ?? ''}`)
  return run.stdout
}

/**
 * One run of `args` under node: wall milliseconds from spawn to exit, and the CPU
 * milliseconds (user + system) GNU time reports for it — on a shared, loaded machine the
 * wall figure waits for the cores, the CPU figure is what the start itself costs.
 */
function timed (home: string, args: readonly string[]): { wallMs: number, cpuMs: number } {
  const cpuFile = join(tmpdir(), `cantrip-bench-time-${process.pid}`)
  const started = performance.now()
  const run = spawnSync(timeProgram, ['-f', '%U %S', '-o', cpuFile, process.execPath, ...args], { cwd: tmpdir(), env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1' }, stdio: 'ignore', timeout: cliRunMsMax })
  const wallMs = performance.now() - started
  if (run.status !== 0) throw new Error(`bench versions: expected node ${args.join(' ')} to exit 0, got ${String(run.status)}`)
  const [user, system] = readFileSync(cpuFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number)
  rmSync(cpuFile, { force: true })
  return { wallMs, cpuMs: ((user ?? NaN) + (system ?? NaN)) * 1000 }
}

/** GNU time, for a child's CPU seconds (Debian: the `time` package). */
const timeProgram = '/usr/bin/time'

function coldStart (home: string): VersionsBench['coldStart'] {
  const client = join(repoRoot, 'dist', 'cantrip.mjs')
  const commands = { node: ['-e', '0'], version: [client, 'version'], help: [client, '--help'], status: [client, 'status'] }
  type Name = keyof typeof commands
  const samples: Record<Name, Array<{ wallMs: number, cpuMs: number }>> = { node: [], version: [], help: [], status: [] }
  // Interleaved, so a burst of load on the shared machine falls on all of them alike.
  for (let i = 0; i < coldRuns; i++) {
    for (const [name, args] of Object.entries(commands) as Array<[Name, string[]]>) samples[name].push(timed(home, args))
  }
  const median = (name: Name, figure: 'wallMs' | 'cpuMs' = 'wallMs'): number => round(quantile(samples[name].map(s => s[figure]), 0.5), 1)
  const node = median('node')
  const nodeCpu = median('node', 'cpuMs')
  return {
    runs: coldRuns,
    nodeMs: node,
    versionMs: median('version'),
    helpMs: median('help'),
    statusMs: median('status'),
    versionOverNodeMs: round(median('version') - node, 1),
    helpOverNodeMs: round(median('help') - node, 1),
    statusOverNodeMs: round(median('status') - node, 1),
    cpu: {
      nodeMs: nodeCpu,
      versionOverNodeMs: round(median('version', 'cpuMs') - nodeCpu, 1),
      helpOverNodeMs: round(median('help', 'cpuMs') - nodeCpu, 1),
      statusOverNodeMs: round(median('status', 'cpuMs') - nodeCpu, 1)
    }
  }
}

/** What the manual provider ships to a new host: the tar of the staged bundle (manual-provider.ts #pack). */
function shipped (): VersionsBench['shipped'] {
  const staged = stagedAgentBundle(repoRoot)
  const archive = join(mkdtempSync(join(tmpdir(), 'cantrip-bench-ship-')), 'code.tar')
  try {
    const run = spawnSync('tar', ['-c', '-f', archive, '-C', staged.dir, '.'], { encoding: 'utf8' })
    if (run.status !== 0) throw new Error(`bench versions: expected tar to pack ${staged.dir}, got ${run.stderr}`)
    const tool = join(staged.dir, 'dist', 'cantrip-tool')
    const binding = join(staged.dir, 'node_modules', 'classic-level', 'prebuilds', `${process.platform}-${process.arch}`)
    const toolReady = existsSync(tool) && (statSync(tool).mode & 0o111) !== 0
    return { bytes: statSync(archive).size, bundleBytes: installationAgentBundle(repoRoot).bytes.byteLength, needsCompiler: !(toolReady && existsSync(binding)) }
  } finally {
    rmSync(dirname(archive), { recursive: true, force: true })
  }
}

function agentPids (home: string): number[] {
  const machines = join(home, 'controllers', controllerName, 'machines')
  const pids: number[] = []
  for (let id = 0; id < upgradeMachines; id++) {
    const file = join(machines, `machine-${id}`, 'agent.pid')
    if (existsSync(file)) pids.push(Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0]))
  }
  return pids
}

async function started (connection: Connection, count: number, version?: string): Promise<boolean> {
  return await pollUntil(async () => {
    const full: FullModel = await connection.model()
    const machines = tableValues(full.model.machines)
    return machines.length >= count && machines.every(m => m.agent.status === 'started' && (version === undefined || m.agentVersion === version))
  }, version === undefined ? machinesStartWithinMs : upgradeWithinMs, 500)
}

export async function measureVersions (): Promise<VersionsBench> {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'cantrip-bench-versions-')))
  const previousHome = process.env['CANTRIP_HOME']
  let bootstrapped = false
  try {
    cli(home, ['bootstrap', controllerName])
    bootstrapped = true
    process.env['CANTRIP_HOME'] = home
    const connection = await Connection.open(controllerEntry(controllerName).entry)
    try {
      cli(home, ['add-machine'])
      if (!await started(connection, 1)) throw new Error(`bench versions: expected machine 0 started within ${machinesStartWithinMs / 1000} s`)
      const pid = agentPids(home)[0]!
      const rss: number[] = []
      for (let at = 0; at < idleWatchMs; at += rssEveryMs) { rss.push(rssBytes(pid)); await sleep(rssEveryMs) }
      const coldStartFigures = coldStart(home)
      const upgrade = await measureUpgrade(home, connection)
      return {
        coldStart: coldStartFigures,
        idleMachineAgentRssBytes: quantile(rss.slice(-rssSamples), 0.5),
        startingMachineAgentRssMaxBytes: Math.max(...rss),
        shipped: shipped(),
        upgrade
      }
    } finally {
      await connection.close()
    }
  } finally {
    if (bootstrapped) cli(home, ['destroy-controller', controllerName, '--no-prompt'])
    if (previousHome === undefined) delete process.env['CANTRIP_HOME']
    else process.env['CANTRIP_HOME'] = previousHome
    rmSync(home, { recursive: true, force: true })
  }
}

async function measureUpgrade (home: string, connection: Connection): Promise<VersionsBench['upgrade']> {
  cli(home, ['add-machine', '-n', String(upgradeMachines - 1)])
  if (!await started(connection, upgradeMachines)) return { machines: upgradeMachines, seconds: null, reason: `not all ${upgradeMachines} machines started within ${machinesStartWithinMs / 1000} s` }
  const higher = cantripVersion.replace(/(\d+)$/, patch => String(Number(patch) + 1))
  const tree = stampedTree(higher)
  try {
    const t0 = performance.now()
    cli(home, ['upgrade-model'], tree.root)
    if (!await started(connection, upgradeMachines, higher)) return { machines: upgradeMachines, seconds: null, reason: `not every machine on ${higher} within ${upgradeWithinMs / 1000} s` }
    return { machines: upgradeMachines, seconds: round((performance.now() - t0) / 1000, 1) }
  } finally {
    tree.remove()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureVersions(), null, 2))
  process.exit(0)
}
