/**
 * Tools for the controller chaos suites: a load of acknowledged writes (`add-machine`,
 * each with its own request id) through the real client API path, a watch of each
 * controller's reported Raft role with the time it arrived, and the read-back that
 * checks nothing acknowledged was lost and nothing applied twice. Every wait is bounded.
 */
import { controllerProposeProtocol } from '../../../actors/controller/model-replica.ts'
import { decode, encode } from '../../../runtime/codec.ts'
import type { CommandResult } from '../../../runtime/model/model-types.ts'
import { chaosFull } from './chaos-scale.ts'
export { percentile } from './chaos-scale.ts'
import { admin, waitFor, type Agent, type CantripdCluster } from '../../support/cantripd-cluster.ts'

/** Concurrent writers of a load: enough to keep the leader's batches full, few enough not to starve the machine. */
export const writersDefault = 8
/** How long one write waits for its answer before it is retried (same request id). */
const writeTimeoutMs = 3_000
/** Attempts of one write before the load counts it as unanswered (it may still apply). */
const writeAttemptsMax = 40

/** A Raft role report as a controller printed it, with when the test read it. */
export interface RoleReport { at: number, role: string, term: number }

/** Records every role report of `agent`'s current process (call after each start). */
export function watchRoles (agent: Agent, reports: Map<Agent, RoleReport[]>): void {
  const list: RoleReport[] = reports.get(agent) ?? []
  reports.set(agent, list)
  let pending = ''
  agent.process!.stdout!.on('data', chunk => {
    pending += String(chunk)
    const lines = pending.split('\n')
    pending = lines.pop()!
    for (const line of lines) {
      const event = JSON.parse(line) as { event: string, role?: string, term?: number }
      if (event.event === 'role') list.push({ at: performance.now(), role: event.role!, term: event.term! })
    }
  })
}

/** The first report of a leader with a term above `term` at or after `since`, among `agents`. */
export function firstLeaderAfter (reports: Map<Agent, RoleReport[]>, agents: readonly Agent[], term: number, since: number): RoleReport | undefined {
  const found = agents.flatMap(a => reports.get(a) ?? []).filter(r => r.role === 'leader' && r.term > term && r.at >= since)
  return found.sort((a, b) => a.at - b.at)[0]
}

/** One write of a load: its request id, and once acknowledged the machine it made and when. */
export interface Write { requestId: string, startedAt: number, machine?: string, ackedAt?: number }

/**
 * Sends one command to `target` as the admin on the real propose protocol; the reply, or
 * undefined when unreachable, timed out or refused (the caller retries with the same id).
 */
export async function proposeTo (cluster: CantripdCluster, target: Agent, body: Record<string, unknown>, requestId: string, timeoutMs = writeTimeoutMs): Promise<CommandResult | undefined> {
  try {
    const reply = decode(await cluster.client!.request(target.id, controllerProposeProtocol, encode({ ...body, requestId, proposer: admin }, 'chaos'), { timeoutMs }), 'chaos') as { ok: boolean, result?: CommandResult }
    return reply.ok ? reply.result : undefined
  } catch {
    return undefined
  }
}

/** The leader the test believes in (the highest term reported), else the controllers in turn. */
function target (cluster: CantripdCluster, attempt: number): Agent {
  const live = cluster.controllers.filter(c => c.process !== undefined)
  return cluster.leader() ?? live[attempt % Math.max(1, live.length)] ?? cluster.controllers[0]!
}

/**
 * Keeps `writers` loops writing until `stop()` or `total` writes were acknowledged. A
 * write is retried with the same request id until acknowledged (or writeAttemptsMax).
 */
export class WriteLoad {
  readonly writes: Write[] = []
  readonly #cluster: CantripdCluster
  readonly #prefix: string
  #running = true
  #loops: Array<Promise<void>> = []

  constructor (cluster: CantripdCluster, prefix: string, total: number, writers = writersDefault) {
    this.#cluster = cluster
    this.#prefix = prefix
    for (let w = 0; w < writers; w++) this.#loops.push(this.#loop(total))
  }

  get acknowledged (): Write[] {
    return this.writes.filter(w => w.machine !== undefined)
  }

  /** Stops issuing new writes and waits for those under way. */
  async stop (): Promise<void> {
    this.#running = false
    await Promise.all(this.#loops)
  }

  /** Waits for every loop to end by itself (total reached). */
  async done (): Promise<void> {
    await Promise.all(this.#loops)
  }

  /**
   * One more write beyond the load's total, started now and retried like the others: a
   * trial that needs a write started after some event gets one even when the load has
   * already issued all of its own (a late kill in a short sample).
   */
  async probe (): Promise<Write> {
    const write = this.#issue()
    await this.#writeUntilAcknowledged(write)
    return write
  }

  async #loop (total: number): Promise<void> {
    while (this.#running && this.writes.length < total) await this.#writeUntilAcknowledged(this.#issue())
  }

  #issue (): Write {
    const write: Write = { requestId: `${this.#prefix}-${this.writes.length}`, startedAt: performance.now() }
    this.writes.push(write)
    return write
  }

  async #writeUntilAcknowledged (write: Write): Promise<void> {
    for (let attempt = 0; attempt < writeAttemptsMax && this.#running; attempt++) {
      const result = await proposeTo(this.#cluster, target(this.#cluster, attempt), { type: 'add-machine' }, write.requestId)
      if (result?.ok === true && result.machines?.[0] !== undefined) {
        write.machine = result.machines[0]
        write.ackedAt = performance.now()
        return
      }
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  }
}

/** The first dial of a controller may take this long; each failed one allows twice as long, up to the max. */
const dialTimeoutMsMin = 2_000
const dialTimeoutMsMax = 16_000
/**
 * How long connectAll waits for one controller: generous, like every wait of the cluster
 * support (a controller starting among 20–30 runnable processes on 2 cores took over a
 * minute to answer); it ends as soon as the dial succeeds.
 */
const connectMsDefault = 240_000

/**
 * Dials every live controller from the client until each answers (bounded). The client's
 * seed redial backs off while the controllers are still starting, and a request to a
 * peer it never reached has no address to go to. A dial that timed out is retried with a
 * longer timeout: on a starved machine the Noise handshake alone can outlast a fixed 2 s,
 * and a fixed timeout would then fail every attempt however long the wait.
 */
export async function connectAll (cluster: CantripdCluster, ms = connectMsDefault): Promise<void> {
  for (const c of cluster.controllers.filter(c => c.process !== undefined)) {
    let timeoutMs = dialTimeoutMsMin
    await waitUntil(`the client to reach ${c.id.slice(-6)}`, ms, async () => {
      try {
        await cluster.client!.dial(cluster.address(c), { timeoutMs })
        return true
      } catch {
        timeoutMs = Math.min(dialTimeoutMsMax, timeoutMs * 2)
        await new Promise(resolve => setTimeout(resolve, 200))
        return false
      }
    })
  }
}

/** Starts every prepared controller with its role changes watched, connects the client to each, and waits for a leader. */
export async function startWatched (cluster: CantripdCluster, reports: Map<Agent, RoleReport[]>): Promise<void> {
  for (const c of cluster.controllers) {
    cluster.start(c)
    watchRoles(c, reports)
  }
  await cluster.connectClient()
  await connectAll(cluster)
  await waitFor('a leader', () => cluster.leader() !== undefined)
}

/** Machine ids as one controller holds them, read linearizably (undefined: no answer). */
export async function machinesAt (cluster: CantripdCluster, agent: Agent): Promise<string[] | undefined> {
  const summary = await cluster.summary(agent)
  return summary?.ok === true ? summary.machines : undefined
}

/** What the read-back found: acknowledged writes missing, and machines beyond the writes issued. */
export interface ReadBack { lost: string[], machines: number, issued: number }

/**
 * Waits until every live controller answers with all acknowledged machines (bounded),
 * then counts what is missing anywhere. More machines than writes issued would mean a
 * write applied twice.
 */
export async function readBack (cluster: CantripdCluster, writes: readonly Write[]): Promise<ReadBack> {
  const acked = writes.filter(w => w.machine !== undefined).map(w => w.machine!)
  const lost = new Set<string>()
  let machines = 0
  await connectAll(cluster)
  for (const c of cluster.controllers.filter(c => c.process !== undefined)) {
    let held: string[] | undefined
    try {
      await waitFor(`${c.id.slice(-6)} to hold every acknowledged write`, async () => {
        held = await machinesAt(cluster, c)
        const set = new Set(held ?? [])
        return held !== undefined && acked.every(id => set.has(id))
      })
    } catch {
      // Counted below: whatever is still missing is lost.
    }
    const set = new Set(held ?? [])
    for (const id of acked) if (!set.has(id)) lost.add(id)
    machines = Math.max(machines, held?.length ?? 0)
  }
  return { lost: [...lost], machines, issued: writes.length }
}

/** Waits (polling) until `condition` holds, at most `ms`; throws naming `what` otherwise. */
export async function waitUntil (what: string, ms: number, condition: () => boolean | Promise<boolean>): Promise<void> {
  const until = performance.now() + ms
  while (!await condition()) {
    if (performance.now() > until) throw new Error(`controller chaos: timed out after ${ms} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

/**
 * The sample under `npm test` runs one trial on a machine shared with everything else: one
 * trial is no percentile, and a scheduler stall there says nothing about the promise. So
 * the sample's verdict is the event itself (a leader, a convergence) within its wait's
 * generous bound, and its time is only reported; the full run (CANTRIP_CHAOS) checks the
 * promise as made, and the bench measures it.
 */
export const sampleTimingBoundMs = 30_000

/** The bound a measured time is checked against: `promisedMs` in the full run, the waits' own bound in the sample. */
export function timingBoundMs (promisedMs: number): number {
  return chaosFull ? promisedMs : Math.max(promisedMs, sampleTimingBoundMs)
}


/** Kills `agent`'s process with `signal` and forgets it (kill -9): it is not waited for by close(). */
export async function killNine (agent: Agent): Promise<void> {
  const child = agent.process!
  const exited = new Promise(resolve => { child.once('exit', resolve) })
  child.kill('SIGKILL')
  agent.process = undefined
  agent.raftRole = ''
  await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 5_000))])
}
