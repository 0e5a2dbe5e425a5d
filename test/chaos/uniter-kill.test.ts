/**
 * kill -9 of a machine agent at random points in uniter operations (issue 12, item 5).
 * The agent (test/fixtures/unit-agent-process.ts: a one-member controller and the
 * deployer in one process, as `cantripd --role both` runs them) deploys a charm whose
 * lifecycle hooks log, sleep and count themselves (support/uniter-kill-charm.ts). Each
 * trial starts it, kills it with SIGKILL a random time after it is up, over and over,
 * then lets it finish. After every kill the persisted uniter state must open and decode;
 * at the end every queued lifecycle hook has run to its end at least once, the unit is
 * installed and started, and install and start each committed exactly once.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createUnitStateStore } from '../../actors/unit/unit-state-store.ts'
import { OneControllerFixture } from '../support/one-controller-fixture.ts'
import { LevelStorage } from '../../agent/level-storage.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import { limits } from '../../runtime/limits.ts'
import { bundledChild } from '../support/bundled-child.ts'
import { processAlive } from '../support/processes.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { hookRuns, lifecycleHooks, writeKillCharm } from './support/uniter-kill-charm.ts'

const test = suite('uniter: kill -9 of the machine agent at random points')
const trials = chaosCount(100, 1)
const killsPerTrial = chaosCount(10, 5)
/** Kills land up to this long after the agent reports it is up: the lifecycle hooks take about that long. */
const killWindowMs = 1_500
/** Generous: each start is a fresh process (test/support/bundled-child.ts) on a shared, loaded machine. */
const waitMsMax = 60_000
/** A final round's wait for start to run again: past the first hook retry delay (5 s, up to 20 % jitter) and start's own run. */
const finalRoundWaitMs = limits.hookRetryDelayMsMin * (1 + limits.hookRetryJitterFraction) + 10_000
const seed = Number(process.env['CANTRIP_CHAOS_SEED'] ?? 12)

/** A small seeded generator (mulberry32), so a failing trial can be run again. */
function random (state: number): () => number {
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

async function waitFor (what: string, condition: () => boolean, output: () => string): Promise<void> {
  const until = performance.now() + waitMsMax
  while (!condition()) {
    if (performance.now() > until) throw new Error(`uniter kill: timed out waiting for ${what}: ${output().slice(-1500)}`)
    await sleep(20)
  }
}

interface Agent { child: ChildProcess, exited: Promise<unknown>, output: () => string }

function startAgent (root: string, charmDir: string, children: ChildProcess[]): Agent {
  const child = spawn(process.execPath, [bundledChild('test/fixtures/unit-agent-process.ts'), root, charmDir], { stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let output = ''
  child.stdout!.on('data', chunk => { output += String(chunk) })
  child.stderr!.on('data', chunk => { output += String(chunk) })
  const exited = new Promise(resolve => { child.once('exit', resolve) })
  return { child, exited, output: () => output }
}

async function stopped (agent: Agent, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const outcome = await Promise.race([agent.exited.then(() => 'exited'), new Promise(resolve => { timer = setTimeout(() => { resolve('hung') }, 20_000) })])
  clearTimeout(timer)
  assert.is(outcome, 'exited', `${what}: ${agent.output().slice(-1500)}`)
}

/** The persisted uniter state must open and decode after any kill. */
async function unitState (root: string): Promise<Awaited<ReturnType<ReturnType<typeof createUnitStateStore>['load']>>> {
  const storage = await LevelStorage.open(join(root, 'machine-0'))
  try {
    return await createUnitStateStore(storage).load('slow/0')
  } finally {
    await storage.close()
  }
}

/** Hook processes the kills orphaned: killed by the pids they logged. */
function killOrphans (hookLog: string): void {
  let text = ''
  try { text = readFileSync(hookLog, 'utf8') } catch { return }
  for (const pid of new Set(text.split('\n').map(line => Number(line.split(' ')[2])).filter(pid => pid > 1))) {
    if (processAlive(pid)) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
  }
}

const figures: Record<string, number | string> = { seed, trials, kills: 0, killsDuringHooks: 0, hookRunsStarted: 0, hookRunsEnded: 0, finalRounds: 0 }

test.after(() => {
  reportFigures('uniter-kill', figures)
})

test('after any sequence of kills: state readable, every queued hook run at least once, nothing committed twice', async () => {
  const next = random(seed)
  for (let trial = 0; trial < trials; trial++) {
    const root = mkdtempSync(join(tmpdir(), 'cantrip-uniter-kill-'))
    const charmDir = join(root, 'charm-src')
    const hookLog = join(root, 'hooks.log')
    writeKillCharm(charmDir, hookLog)
    const children: ChildProcess[] = []
    try {
      for (let kill = 0; kill < killsPerTrial; kill++) {
        const agent = startAgent(root, charmDir, children)
        await waitFor('the agent to start', () => agent.output().includes('agent started'), agent.output)
        const before = hookRuns(hookLog)
        await sleep(Math.floor(next() * killWindowMs))
        const during = Object.entries(hookRuns(hookLog)).some(([hook, runs]) => runs.started > runs.ended || runs.started > (before[hook]?.started ?? 0))
        agent.child.kill('SIGKILL')
        await stopped(agent, 'the agent to die on SIGKILL')
        figures['kills'] = Number(figures['kills']) + 1
        if (during) figures['killsDuringHooks'] = Number(figures['killsDuringHooks']) + 1
        killOrphans(hookLog)
        // Readable: opens and decodes (load throws on anything else); absent only before the unit's first save.
        await unitState(root)
      }
      // Let it finish: run until start has ended, give the commit a moment, stop gracefully; again if it was cut short.
      let local = await unitState(root)
      for (let round = 0; round < 3 && !(local?.installed === true && local.started); round++) {
        figures['finalRounds'] = Number(figures['finalRounds']) + 1
        const agent = startAgent(root, charmDir, children)
        const ended = hookRuns(hookLog)['start']?.ended ?? 0
        await waitFor('the agent to start', () => agent.output().includes('agent started'), agent.output)
        // Not started yet, so start runs again: at once if it was queued, after the first
        // hook retry delay if a kill left it pending (an error, §2.11). Or it is only
        // committed, without running, if it was done: hence the bound.
        const until = performance.now() + finalRoundWaitMs
        while ((hookRuns(hookLog)['start']?.ended ?? 0) === ended && performance.now() < until) await sleep(50)
        await sleep(1_500)
        agent.child.kill('SIGTERM')
        await stopped(agent, 'the agent to stop on SIGTERM')
        local = await unitState(root)
      }
      assert.ok(local?.installed === true && local.started, `trial ${trial}: installed and started: ${JSON.stringify(local)}`)
      const runs = hookRuns(hookLog)
      for (const hook of ['install', 'config-changed', 'start']) assert.ok((runs[hook]?.ended ?? 0) >= 1, `trial ${trial}: ${hook} ran to its end at least once: ${JSON.stringify(runs)}`)
      figures['hookRunsStarted'] = Number(figures['hookRunsStarted']) + Object.values(runs).reduce((n, r) => n + r.started, 0)
      figures['hookRunsEnded'] = Number(figures['hookRunsEnded']) + Object.values(runs).reduce((n, r) => n + r.ended, 0)
      const controller = await OneControllerFixture.start(join(root, 'controller'))
      const state = readerOf(controller.model()).unit('slow/0')?.charmState ?? {}
      await controller.stop()
      for (const hook of ['install', 'start']) assert.is(state[`${hook}-count`], '1', `trial ${trial}: ${hook} committed exactly once: ${JSON.stringify(state)}, runs ${JSON.stringify(runs)}`)
      for (const hook of lifecycleHooks) figures[`${hook}-commits`] = `${String(figures[`${hook}-commits`] ?? '')}${figures[`${hook}-commits`] === undefined ? '' : ','}${state[`${hook}-count`] ?? 0}`
    } finally {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      killOrphans(hookLog)
      rmSync(root, { recursive: true, force: true })
    }
  }
})

test.run()
