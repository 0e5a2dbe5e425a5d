/**
 * Chaos, issue 12 item 4: the Raft leader's data directory fails under a write load on
 * three real cantripd controllers. Each controller's directory is a size-limited tmpfs the
 * test mounts itself (we run as root); the leader's is then filled to the last byte
 * (ENOSPC), or its process may no longer grow any file (prlimit's file-size limit set to
 * what its LevelDB log holds: every write past it fails with EFBIG, an I/O error that a
 * busy filesystem cannot be remounted read-only to give). The controller must stop by itself, with the
 * storage error in its output, without acknowledging anything it could not store; the
 * others go on, and when the disk is repaired and the controller restarted from its
 * directory, every controller holds every acknowledged write. Damaged LevelDB logs (torn
 * tail, damage in the middle) are test/level-log-check.test.ts.
 */
import '../../runtime/polyfill.ts'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CantripdCluster, type Agent } from '../support/cantripd-cluster.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { connectAll, readBack, type RoleReport, startWatched, waitUntil, watchRoles, WriteLoad } from './support/controller-chaos.ts'

/** Each controller's tmpfs: room for its LevelDB many times over, small enough to fill at once. */
const tmpfsSize = '64m'
/** A controller whose disk failed must have stopped within this long of its next write. */
const stopMsMax = 30_000

type Fault = 'disk full' | 'io error'

function mountTmpfs (dir: string): void {
  // The identity the test made goes back onto the fresh filesystem.
  const key = readFileSync(join(dir, 'agent.key'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${tmpfsSize}`, 'tmpfs', dir])
  writeFileSync(join(dir, 'agent.key'), key)
}

function unmount (dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'ignore' })
  } catch {
    // Still busy (a process not yet reaped): detach it now, the kernel frees it after.
    try { execFileSync('umount', ['-l', dir], { stdio: 'ignore' }) } catch { /* not mounted */ }
  }
}

function inject (fault: Fault, agent: Agent): void {
  const dir = agent.dir
  if (fault === 'io error') {
    // Node ignores SIGXFSZ, so a write past the limit fails with EFBIG instead of killing the process.
    const controllerDir = join(dir, 'controller')
    const largest = Math.max(0, ...readdirSync(controllerDir).filter(name => name.endsWith('.log')).map(name => statSync(join(controllerDir, name)).size))
    execFileSync('prlimit', ['--pid', String(agent.process!.pid), `--fsize=${largest}:${largest}`])
    return
  }
  try {
    // Runs until the filesystem has no byte left.
    execFileSync('dd', ['if=/dev/zero', `of=${join(dir, 'filler')}`, 'bs=1M'], { stdio: 'ignore' })
  } catch {
    // dd ends with "No space left on device": that is the point.
  }
}

/** The disk full is emptied again; the file-size limit ends with the process. */
function repair (fault: Fault, dir: string): void {
  if (fault === 'disk full') rmSync(join(dir, 'filler'), { force: true })
}

/** Kills every process of the cluster by pid and waits (bounded) for each to exit. */
async function killAll (cluster: CantripdCluster): Promise<void> {
  for (const agent of cluster.controllers) {
    const child = agent.process
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) continue
    const exited = new Promise(resolve => { child.once('exit', resolve) })
    child.kill('SIGKILL')
    await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 5_000))])
  }
}

interface FaultFigures { stopMs: number, lost: number, acked: number }

async function faultTrial (trial: number): Promise<Record<Fault, FaultFigures>> {
  const reports = new Map<Agent, RoleReport[]>()
  const cluster = new CantripdCluster()
  const mounted: string[] = []
  const figures: Partial<Record<Fault, FaultFigures>> = {}
  let loadToStop: WriteLoad | undefined
  try {
    await cluster.prepare(3, 0)
    for (const c of cluster.controllers) {
      mountTmpfs(c.dir)
      mounted.push(c.dir)
    }
    await startWatched(cluster, reports)
    const load = loadToStop = new WriteLoad(cluster, `disk-${trial}`, 100_000, 4)
    for (const fault of ['disk full', 'io error'] as const) {
      await waitUntil('writes acknowledged', 60_000, () => load.acknowledged.length >= 10)
      const victim = cluster.leader()!
      const child = victim.process!
      const exited = new Promise<number | null>(resolve => { child.once('exit', code => { resolve(code) }) })
      const ackedBefore = load.acknowledged.length
      const faultAt = performance.now()
      inject(fault, victim)
      const code = await Promise.race([exited, new Promise<'running'>(resolve => setTimeout(() => { resolve('running') }, stopMsMax))])
      assert.ok(code !== 'running', `the controller with a ${fault} disk still runs after ${stopMsMax} ms`)
      const stopMs = performance.now() - faultAt
      assert.is.not(code, 0, `exit code after a ${fault} disk`)
      assert.match(victim.output, /level-storage: cannot write a batch/, `the storage error in the output of the ${fault} controller: ${victim.output.slice(-2_000)}`)
      victim.process = undefined
      victim.raftRole = ''
      // The others go on without it.
      await waitUntil(`writes acknowledged without the ${fault} controller`, 60_000, () => load.acknowledged.length >= ackedBefore + 10)
      repair(fault, victim.dir)
      cluster.start(victim)
      watchRoles(victim, reports)
      await connectAll(cluster)
      const back = await readBack(cluster, load.acknowledged)
      figures[fault] = { stopMs, lost: back.lost.length, acked: load.acknowledged.length }
    }
    await load.stop()
    const back = await readBack(cluster, load.writes)
    figures['io error']!.lost += back.lost.length
    return figures as Record<Fault, FaultFigures>
  } finally {
    await loadToStop?.stop()
    await killAll(cluster)
    for (const dir of mounted) unmount(dir)
    await cluster.close()
  }
}

test('the leader\'s disk fills up or fails with I/O errors: it stops without acknowledging, nothing acknowledged is lost', async () => {
  const trials = chaosCount(20, 1)
  const all: Array<Record<Fault, FaultFigures>> = []
  for (let trial = 0; trial < trials; trial++) all.push(await faultTrial(trial))
  const sum = (fault: Fault, key: keyof FaultFigures): number => all.reduce((total, f) => total + f[fault][key], 0)
  reportFigures('controller-disk', {
    trials,
    acknowledged: all.reduce((total, f) => total + f['io error'].acked, 0),
    lostDiskFull: sum('disk full', 'lost'),
    lostIoError: sum('io error', 'lost'),
    stopMsMaxDiskFull: Math.round(Math.max(...all.map(f => f['disk full'].stopMs))),
    stopMsMaxIoError: Math.round(Math.max(...all.map(f => f['io error'].stopMs)))
  })
  assert.is(sum('disk full', 'lost') + sum('io error', 'lost'), 0, 'acknowledged writes lost')
})

test.run()
