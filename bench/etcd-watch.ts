import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EtcdGroup } from './etcd-group.ts'
import { latencySummary, pollUntil, sleep, wallMs, type LatencySummary } from './stats.ts'
import { sharedTiming } from './writes.ts'

/**
 * The watch anchor for change notices (issue 28): what a user would otherwise pick to tell
 * every agent that desired state changed is a watch on etcd (Kubernetes' kubelets, Juju's
 * API watchers). 3 etcd members on loopback (cantrip's Raft timing), N watcher processes
 * (`etcdctl watch --prefix`, a Go client as a kubelet is, spread over the members), each
 * piping its output through a bash loop that stamps every line with `$EPOCHREALTIME` into
 * its own file, as serf's handler and cantrip's agents stamp their own receipts. A writer
 * in the bench puts one key per change to the leader; a notice at a watcher is the stamped
 * line with that key, from the put's acknowledgement (p50/p99 over all watchers and
 * changes, the same as the cantrip and serf benches). Each watcher is its own process
 * group, killed by its pid when the bench ends.
 */
const component = 'bench etcd watch'
const prefix = 'bench/notice/'
const readyWithinMs = 60_000
const noticeWithinMs = 10_000
/** Pause between two changes, as in the serf and cantrip benches. */
const changeGapMs = 300
const stopWaitMs = 5_000

export interface EtcdWatchFigures {
  watchers: number
  changes: number
  propagation: LatencySummary
  /** The same notices timed from the writer's send instead of its acknowledgement. */
  fromSend: LatencySummary
  startSeconds: number
}

export async function measureEtcdWatch (watchers: number, changes: number): Promise<EtcdWatchFigures> {
  const etcd = new EtcdGroup()
  const children: ChildProcess[] = []
  try {
    await etcd.start(3, sharedTiming)
    const leader = await etcd.leader()
    if (leader === undefined) throw new Error(`${component}: expected a leader after start, got none`)
    const started = performance.now()
    const files: string[] = []
    for (let i = 0; i < watchers; i++) {
      const file = join(etcd.root, `w${i}.events`)
      files.push(file)
      children.push(startWatcher(etcd.members[i % etcd.members.length]!.clientUrl, file))
    }
    // Every watcher is up once it has seen a put made after it started.
    let probe = 0
    const ready = await pollUntil(async () => {
      const key = `${prefix}ready-${probe++}`
      await etcd.put(leader, key, 'x')
      return await pollUntil(() => files.every(f => stampOf(f, key) !== undefined), 1_000, 20)
    }, readyWithinMs, 0)
    if (!ready) throw new Error(`${component}: expected all ${watchers} watchers to see a put within ${readyWithinMs} ms, got ${files.filter(f => existsSync(f)).length} with output`)
    const startSeconds = (performance.now() - started) / 1000
    await sleep(2_000)
    const fromAck: number[] = []
    const fromSend: number[] = []
    for (let i = 0; i < changes; i++) {
      const key = `${prefix}change-${i}`
      const sentAt = wallMs()
      await etcd.put(leader, key, String(sentAt))
      const ackedAt = wallMs()
      await pollUntil(() => files.every(f => stampOf(f, key) !== undefined), noticeWithinMs, 5)
      for (const f of files) {
        const t = stampOf(f, key)
        // A watcher that had no notice within the bound counts at the bound, as in the cantrip bench.
        fromAck.push(t === undefined ? noticeWithinMs : Math.max(0, t - ackedAt))
        fromSend.push(t === undefined ? noticeWithinMs : Math.max(0, t - sentAt))
      }
      await sleep(changeGapMs)
    }
    return { watchers, changes, propagation: latencySummary(fromAck), fromSend: latencySummary(fromSend), startSeconds: Number(startSeconds.toFixed(1)) }
  } finally {
    await Promise.all(children.map(stopGroup))
    await etcd.close()
  }
}

/** `etcdctl watch` into a stamping bash loop, in a process group of its own (so both go when it is killed). */
function startWatcher (endpoint: string, file: string): ChildProcess {
  const script = `etcdctl --endpoints=${endpoint} watch --prefix ${prefix} | while IFS= read -r line; do printf '%s %s\\n' "$EPOCHREALTIME" "$line"; done >> ${JSON.stringify(file)}`
  const child = spawn('bash', ['-c', script], { stdio: ['ignore', 'ignore', 'pipe'], detached: true })
  child.stderr?.on('data', () => { /* drained */ })
  return child
}

async function stopGroup (child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  const gone = new Promise(resolve => { child.once('exit', resolve) })
  const signal = (name: NodeJS.Signals): void => { try { process.kill(-child.pid!, name) } catch { /* already gone */ } }
  signal('SIGTERM')
  const timer = setTimeout(() => { signal('SIGKILL') }, stopWaitMs)
  await gone
  clearTimeout(timer)
}

/** When (ms since the epoch) the watcher writing `file` first printed the line `key`. */
function stampOf (file: string, key: string): number | undefined {
  if (!existsSync(file)) return undefined
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const space = line.indexOf(' ')
    if (space > 0 && line.slice(space + 1) === key) return Number(line.slice(0, space)) * 1000
  }
  return undefined
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureEtcdWatch(Number(process.argv[2] ?? 10), Number(process.argv[3] ?? 5))))
  process.exit(0)
}
