import '../runtime/polyfill.ts'
import { CantripdCluster } from '../test/support/cantripd-cluster.ts'
import { onCpuMs, startAgents, submit } from './cantrip-propagation.ts'
import { pollUntil, quantile, sleep } from './stats.ts'

/**
 * What one change costs each machine agent in CPU (issue 28: the 50-agent notice tail on
 * 2 cores is the queue of this work). The propagation bench's own figure subtracts one
 * idle window from one window of changes; with 50 idle agents using about a core between
 * them (presence, gossipsub heartbeats) that difference was noise. Here blocks of
 * `blockMs` alternate, idle and with one change every `gapMs` (as the propagation bench
 * spaces them), `blocks` of each, CPU from /proc/PID/task/TID/schedstat of every agent;
 * per change = (median busy block − median idle block) / changes per block / agents.
 * Each change waits for every agent's view before the gap starts, as in the bench; the change is
 * the bench's (`submit`: a model-config set, which every agent's view carries; an add-machine
 * until 2026-11-28).
 *   node --import tsx bench/notice-agent-cpu.ts [AGENTS] [BLOCKS]
 */
const component = 'bench notice agent cpu'
const startWithinMs = 240_000
const blockMs = 6_000
const gapMs = 300
const viewWithinMs = 10_000

export interface NoticeAgentCpu {
  agents: number
  /** CPU-ms per agent per change, the median over blocks. */
  perAgentPerChangeMs: number
  /** Each busy block's per-agent, per-change figure (against the idle median). */
  blocks: number[]
  idleBlockMs: number[]
  busyBlockMs: number[]
  changesPerBlock: number[]
  /** CPU-ms of the three controllers together per change, the median over blocks (same method). */
  controllersPerChangeMs: number
  controllerBlocks: number[]
}

export async function measureNoticeAgentCpu (agents: number, blocks: number): Promise<NoticeAgentCpu> {
  const cluster = new CantripdCluster()
  try {
    await cluster.prepare(3, agents)
    const everyone = [...cluster.controllers, ...cluster.machines]
    cluster.hostOf = agent => `127.0.1.${everyone.indexOf(agent) + 1}`
    // CANTRIP_AGENT_NODE_ARGS: node flags for the machine agents only (a V8 tier-up trial), added by a shell that execs node (same pid).
    const agentArgs = process.env['CANTRIP_AGENT_NODE_ARGS']
    if (agentArgs !== undefined) cluster.launcher = agent => agent.role === 'controller' ? [] : ['bash', '-c', `node="$1"; shift; exec "$node" ${agentArgs} "$@"`, 'bench']
    for (const c of cluster.controllers) cluster.start(c)
    await cluster.connectClient()
    if (!await pollUntil(() => cluster.leader() !== undefined, startWithinMs, 50)) throw new Error(`${component}: expected a leader within ${startWithinMs} ms, got none`)
    await startAgents(cluster, performance.now() + startWithinMs)
    // Past start-up: grafts, first status reports, and every watch answered once (its hold).
    await sleep(12_000)
    const agentsCpu = (): number => cluster.machines.reduce((sum, m) => sum + onCpuMs(m.process!.pid!), 0)
    const controllersCpu = (): number => cluster.controllers.reduce((sum, c) => sum + onCpuMs(c.process!.pid!), 0)
    const idle: number[] = []
    const busy: number[] = []
    const counts: number[] = []
    const controllersIdle: number[] = []
    const controllersBusy: number[] = []
    for (let b = 0; b < blocks; b++) {
      let from = agentsCpu()
      let fromControllers = controllersCpu()
      let at = performance.now()
      await sleep(blockMs)
      idle.push((agentsCpu() - from) * blockMs / (performance.now() - at))
      controllersIdle.push((controllersCpu() - fromControllers) * blockMs / (performance.now() - at))
      from = agentsCpu()
      fromControllers = controllersCpu()
      at = performance.now()
      let changes = 0
      while (performance.now() - at < blockMs - gapMs) {
        const result = await submit(cluster)
        if (!result.ok) throw new Error(`${component}: expected the change committed, got ${JSON.stringify(result)}`)
        await pollUntil(() => cluster.machines.every(m => m.views.some(v => v.revision >= result.index)), viewWithinMs, 5)
        changes++
        await sleep(gapMs)
      }
      busy.push((agentsCpu() - from) * blockMs / (performance.now() - at))
      controllersBusy.push((controllersCpu() - fromControllers) * blockMs / (performance.now() - at))
      counts.push(changes)
    }
    const idleMedian = quantile(idle, 0.5)
    const perBlock = busy.map((cpu, i) => Number(((cpu - idleMedian) / counts[i]! / agents).toFixed(3)))
    const controllersIdleMedian = quantile(controllersIdle, 0.5)
    const controllerBlocks = controllersBusy.map((cpu, i) => Number(((cpu - controllersIdleMedian) / counts[i]!).toFixed(2)))
    return {
      agents,
      perAgentPerChangeMs: Number(quantile(perBlock, 0.5).toFixed(3)),
      blocks: perBlock,
      idleBlockMs: idle.map(Math.round),
      busyBlockMs: busy.map(Math.round),
      changesPerBlock: counts,
      controllersPerChangeMs: Number(quantile(controllerBlocks, 0.5).toFixed(2)),
      controllerBlocks
    }
  } finally {
    await cluster.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureNoticeAgentCpu(Number(process.argv[2] ?? 50), Number(process.argv[3] ?? 4)), null, 2))
  process.exit(0)
}
