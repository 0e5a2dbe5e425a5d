/**
 * Deploy-to-active on the local provider: one controller (`cantrip bootstrap`, detached
 * cantripd), then at t0 `add-machine` ×10 and `deploy bench/charms/trivial -n 100 --to
 * 0,1,…,9,0,1,…` (the CLI's own deploy code, in this process) — measured from t0 until
 * all 100 units are active and idle, re-reading the model on every change notice (and at
 * least every `recheckMs`, should a notice be lost).
 *
 * The floor beside it, each part measured by doing it:
 *   (a) machine agents: from t0 until all 10 machines' agents report started (the local
 *       provider spawning 10 cantripd processes that register), in the same run;
 *   (b) hooks: the same hook files, as many as ran per unit in the deployment (counted
 *       from what the hooks noted), spawned as bash processes with their hook tool call
 *       answered over a real unix socket by the C client — serially on each machine, as
 *       the machine's hook lock requires, the 10 machines in parallel — with no
 *       controller behind the tools.
 * Everything it starts is stopped with `cantrip destroy-controller`.
 *
 * Run alone with `npm run bench -- deploy100`.
 */
import '../runtime/polyfill.ts'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { controllerEntry } from '../agent/cli/cli-home.ts'
import { runAddMachine } from '../agent/cli/commands/machines.ts'
import { runDeploy } from '../agent/cli/commands/deploy.ts'
import { Connection, type FullModel } from '../agent/cli/connection.ts'
import { ensureToolClient, hookToolNames, installToolLinks } from '../agent/hook-tools/client/build-client.ts'
import { ToolServer } from '../agent/hook-tools/transport/tool-server.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import { tableValues } from '../runtime/model/table.ts'

export interface Deploy100Bench {
  seconds: number
  floorSeconds: number
  machines: number
  units: number
  hooksPerUnit: number
  machineAgentsStartedSeconds: number
  hookSpawnFloorSeconds: number
  /** From the deploy command's last commit to all active: what the units themselves took. */
  afterDeployCommandSeconds: number
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const charmDir = join(repoRoot, 'bench', 'charms', 'trivial')
const controllerName = 'bench'
const machineCount = 10
const unitCount = 100
/** Longest the deployment may take to become active before the bench gives up. */
const activeWaitMsMax = 600_000
/** A re-read of the model at least this often, in case a change notice is lost. */
const recheckMs = 1_000
const cliRunMsMax = 240_000

function cli (home: string, ...args: string[]): void {
  const run = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cantrip.mjs'), ...args], {
    cwd: repoRoot, env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1' }, encoding: 'utf8', timeout: cliRunMsMax
  })
  if (run.status !== 0) throw new Error(`deploy100 bench: expected "cantrip ${args.join(' ')}" to succeed, got exit ${String(run.status)}: ${run.stderr.trim()}`)
}

/** Calls `check` on each change notice and every `recheckMs`; resolves with the time it first returns true. */
async function until (connection: Connection, check: (full: FullModel) => void, done: () => boolean): Promise<void> {
  let wake: () => void = () => {}
  const unsubscribe = connection.watch(() => { wake() })
  const deadline = performance.now() + activeWaitMsMax
  try {
    while (!done()) {
      if (performance.now() > deadline) throw new Error(`deploy100 bench: expected ${unitCount} units active within ${activeWaitMsMax / 1000} s, got fewer`)
      check(await connection.model())
      if (done()) return
      await new Promise<void>(resolve => {
        const timer = setTimeout(resolve, recheckMs)
        wake = () => { clearTimeout(timer); resolve() }
      })
    }
  } finally {
    unsubscribe()
  }
}

/** Lines the hooks appended to `<charm dir>/.hooks-run`, over every unit of every machine. */
function hooksRun (controllerDir: string): number {
  let lines = 0
  const machines = join(controllerDir, 'machines')
  for (const machine of readdirSync(machines)) {
    const agents = join(machines, machine, 'agent', 'agents')
    for (const unit of existsSync(agents) ? readdirSync(agents) : []) {
      const file = join(agents, unit, 'charm', '.hooks-run')
      if (existsSync(file)) lines += readFileSync(file, 'utf8').split('\n').filter(l => l !== '').length
    }
  }
  return lines
}

async function measureDeployment (): Promise<{ seconds: number, machinesSeconds: number, afterDeploySeconds: number, hooksPerUnit: number }> {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'cantrip-bench-')))
  const previousHome = process.env['CANTRIP_HOME']
  let bootstrapped = false
  try {
    cli(home, 'bootstrap', controllerName)
    bootstrapped = true
    process.env['CANTRIP_HOME'] = home
    const { entry } = controllerEntry(controllerName)
    const connection = await Connection.open(entry)
    try {
      const quiet = (): void => {}
      const t0 = performance.now()
      await runAddMachine(async () => connection, undefined, { n: String(machineCount) }, quiet)
      const machines = tableValues((await connection.model()).model.machines).map(m => m.id)
      const to = Array.from({ length: unitCount }, (_, i) => machines[i % machines.length]!).join(',')
      await runDeploy(async () => connection, charmDir, undefined, { n: String(unitCount), to }, quiet)
      const deployed = performance.now()
      let machinesAt: number | undefined
      let activeAt: number | undefined
      await until(connection, full => {
        const now = performance.now()
        const started = tableValues(full.model.machines).filter(m => m.agent.status === 'started').length
        if (machinesAt === undefined && started >= machineCount) machinesAt = now
        const active = tableValues(full.model.units).filter(u => u.workload.status === 'active' && u.agent.status === 'idle').length
        if (active >= unitCount && machinesAt !== undefined) activeAt = now
      }, () => activeAt !== undefined)
      const hooks = hooksRun(entry.dir)
      return {
        seconds: (activeAt! - t0) / 1000,
        machinesSeconds: (machinesAt! - t0) / 1000,
        afterDeploySeconds: (activeAt! - deployed) / 1000,
        hooksPerUnit: hooks / unitCount
      }
    } finally {
      await connection.close()
    }
  } finally {
    if (bootstrapped) cli(home, 'destroy-controller', controllerName, '--no-prompt')
    if (previousHome === undefined) delete process.env['CANTRIP_HOME']
    else process.env['CANTRIP_HOME'] = previousHome
    rmSync(home, { recursive: true, force: true })
  }
}

/** The hooks of a unit's first deployment, in order, for `hooksPerUnit` hooks (install, start, …). */
function hookSequence (hooksPerUnit: number): string[] {
  const hooks = readdirSync(join(charmDir, 'hooks')).sort((a, b) => (a === 'install' ? -1 : b === 'install' ? 1 : a.localeCompare(b)))
  return Array.from({ length: Math.round(hooksPerUnit) }, (_, i) => hooks[i % hooks.length]!)
}

function runHook (hook: string, env: Record<string, string>, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(cwd, 'hooks', hook), [], { cwd, env, stdio: 'ignore' })
    child.once('error', reject)
    child.once('exit', code => { code === 0 ? resolve() : reject(new Error(`deploy100 bench: expected hook ${hook} to exit 0, got ${String(code)}`)) })
  })
}

/** Floor (b): the hooks spawned for real, serially per machine, machines in parallel. */
async function measureHookSpawns (hooksPerUnit: number): Promise<number> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'cantrip-bench-hooks-')))
  const servers: ToolServer[] = []
  try {
    const client = await ensureToolClient()
    const sequence = hookSequence(hooksPerUnit)
    mkdirSync(join(root, 'charm'))
    const unitsPerMachine = unitCount / machineCount
    const chains = await Promise.all(Array.from({ length: machineCount }, async (_, m) => {
      const dir = join(root, `m${m}`)
      await installToolLinks(join(dir, 'tools'), hookToolNames, client)
      const server = await ToolServer.listen(join(dir, 'agent.socket'), async () => ({ code: 0, stdout: '', stderr: '' }), { logger: createMemoryLogger('bench') })
      servers.push(server)
      return { dir, server }
    }))
    const started = performance.now()
    await Promise.all(chains.map(async ({ dir, server }, m) => {
      for (let u = 0; u < unitsPerMachine; u++) {
        for (const [h, hook] of sequence.entries()) {
          const contextId = `trivial/${m * unitsPerMachine + u}-${hook}-${h}`
          server.contexts.open(contextId)
          await runHook(hook, {
            PATH: `${join(dir, 'tools')}:${dirname(process.execPath)}:/usr/bin:/bin`,
            CHARM_DIR: join(root, 'charm'),
            JUJU_CONTEXT_ID: contextId,
            JUJU_AGENT_SOCKET_ADDRESS: server.socketPath,
            JUJU_AGENT_SOCKET_NETWORK: 'unix'
          }, charmDir)
          await server.contexts.close(contextId)
        }
      }
    }))
    return (performance.now() - started) / 1000
  } finally {
    await Promise.allSettled(servers.map(async s => { await s.close() }))
    rmSync(root, { recursive: true, force: true })
  }
}

const round = (s: number): number => Math.round(s * 100) / 100

export async function measureDeploy100 (): Promise<Deploy100Bench> {
  const run = await measureDeployment()
  const hookSpawn = await measureHookSpawns(run.hooksPerUnit)
  return {
    seconds: round(run.seconds),
    floorSeconds: round(run.machinesSeconds + hookSpawn),
    machines: machineCount,
    units: unitCount,
    hooksPerUnit: run.hooksPerUnit,
    machineAgentsStartedSeconds: round(run.machinesSeconds),
    hookSpawnFloorSeconds: round(hookSpawn),
    afterDeployCommandSeconds: round(run.afterDeploySeconds)
  }
}
