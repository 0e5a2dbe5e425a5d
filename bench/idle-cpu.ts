import '../runtime/polyfill.ts'
import { CantripdCluster, waitFor } from '../test/support/cantripd-cluster.ts'
import { cpuMs } from './child-processes.ts'
import { EtcdGroup } from './etcd-group.ts'
import { sleep } from './stats.ts'
import { sharedTiming } from './writes.ts'

/**
 * Idle CPU of 3 cantrip controllers against 3 etcd members (the same Raft timing), each
 * process's user + system CPU over 10 s after 5 s of settling, in % of one core. On a
 * loaded machine this decides latency: the kernel's fair scheduler wakes a process that
 * uses less than its share of the cores ahead of the others, and one at or above its
 * share (2 cores over 29 runnable tasks is about 7 % each) waits its turn at every hop.
 */
const settleMs = 5_000
const sampleMs = 10_000

export interface IdleCpu { cantripPercent: number[], etcdPercent: number[] }

async function percentOver (pids: readonly number[]): Promise<number[]> {
  const before = pids.map(cpuMs)
  await sleep(sampleMs)
  return pids.map((pid, i) => Number(((cpuMs(pid) - before[i]!) * 100 / sampleMs).toFixed(1)))
}

export async function measureIdleCpu (): Promise<IdleCpu> {
  const cluster = new CantripdCluster()
  let cantripPercent: number[]
  try {
    await cluster.prepare(3, 0)
    for (const c of cluster.controllers) cluster.start(c)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    await sleep(settleMs)
    cantripPercent = await percentOver(cluster.controllers.map(c => c.process!.pid!))
  } finally {
    await cluster.close()
  }
  const etcd = new EtcdGroup()
  try {
    await etcd.start(3, sharedTiming)
    await sleep(settleMs)
    return { cantripPercent, etcdPercent: await percentOver(etcd.members.map(m => m.process.pid!)) }
  } finally {
    await etcd.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureIdleCpu()))
  process.exit(0)
}
