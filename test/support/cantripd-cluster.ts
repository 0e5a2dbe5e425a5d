/**
 * cantripd processes on loopback for tests: N controllers (Raft over the mesh) and
 * machine agents, with a client peer in the test process that acts as the admin.
 * Every process is started with its own data dir and identity and killed by pid in
 * `close()`; every wait is bounded.
 */
import '../../runtime/polyfill.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import { cpSync, createWriteStream, mkdirSync, mkdtempSync, rmSync, type WriteStream } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { controllerApiProtocol, type SummaryReply } from '../../actors/controller/controller-api.ts'
import { uploadCharm } from '../../agent/charm/charm-upload.ts'
import { packCharm } from '../../agent/charm/charm-archive.ts'
import { loadCharmDir } from '../../agent/charm/load-charm.ts'
import { controllerProposeProtocol, type ForwardReply } from '../../actors/controller/model-replica.ts'
import { freeLoopbackPort, freePortRun } from '../../agent/free-port.ts'
import { Libp2pTransport } from '../../agent/mesh/libp2p-transport.ts'
import { generateNetworkKey, writeNetworkKey } from '../../agent/mesh/network-key.ts'
import { generatePeerKey, peerIdOfKey, writePeerKey } from '../../agent/mesh/peer-identity.ts'
import { decode, encode } from '../../runtime/codec.ts'
import type { CommandResult } from '../../runtime/model/model-types.ts'
import { distProgram } from './dist.ts'
import { killUnitWorkloads } from './processes.ts'
import { countFailedWait, signalAgentEvent, waitFor, waitMsMax, waitsFailedSoFar } from './wait-for.ts'

export const admin = { kind: 'user', name: 'admin' } as const

export interface Agent {
  id: string
  dir: string
  port: number
  role: 'controller' | 'machine'
  machineId?: string
  process: ChildProcess | undefined
  raftRole: string
  term: number
  output: string
  /** Machine agents: each new view of the model, with the wall-clock time it arrived. */
  views: Array<{ revision: number, at: number }>
}

export const freePort = freeLoopbackPort
export { freePortRun }

/** A refused or unanswered submit is sent again after this pause, doubling up to the max. */
const submitPauseMsMin = 100
const submitPauseMsMax = 1_000
/** Refusals that sending the same command again cannot change: submit gives up on them at once. */
const submitRefusalsFinal = new Set(['PermissionDeniedError', 'InvalidInputError', 'InvalidBatchError'])

export { waitFor }

export class CantripdCluster {
  readonly root = mkdtempSync(join(tmpdir(), 'cantripd-'))
  readonly controllers: Agent[] = []
  readonly machines: Agent[] = []
  client: Libp2pTransport | undefined
  /** Arguments every agent is started with (e.g. shorter presence timings). */
  extraArgs: string[] = []
  /** The address each agent listens on and is dialled at (another one inside a network namespace). */
  hostOf: (agent: Agent) => string = () => '127.0.0.1'
  /** A command each agent is started under, e.g. `ip netns exec NS` (none by default). */
  launcher: (agent: Agent) => string[] = () => []
  /** Every agent's whole stdout and stderr, one file each under `root/logs` (kept by `close` on failure). */
  readonly #logs = new Map<Agent, { out: WriteStream, err: WriteStream }>()
  readonly #waitsFailedBefore = waitsFailedSoFar()
  #networkKey = generateNetworkKey()
  #clientKey: Uint8Array | undefined
  #requests = 0

  get keyFile (): string {
    return join(this.root, 'swarm.key')
  }

  /**
   * Creates identities for `controllers` controllers and `machines` machine agents (not
   * started). With `both`, the first `both` controllers also run the agents of machines
   * 0, 1, …, and the machine agents take the ids after them.
   */
  async prepare (controllers: number, machines: number, { both = 0 }: { both?: number } = {}): Promise<void> {
    await writeNetworkKey(this.keyFile, this.#networkKey)
    this.#clientKey = await generatePeerKey()
    for (let i = 0; i < controllers + machines; i++) {
      const role = i < controllers ? 'controller' : 'machine'
      const dir = join(this.root, role === 'controller' ? `c${i}` : `m${i - controllers}`)
      mkdirSync(dir)
      const key = await generatePeerKey()
      await writePeerKey(join(dir, 'agent.key'), key)
      const agent: Agent = { id: peerIdOfKey(key), dir, port: await freePort(), role, process: undefined, raftRole: '', term: 0, output: '', views: [] }
      if (role === 'machine') agent.machineId = String(i - controllers + both)
      else if (i < both) agent.machineId = String(i)
      ;(role === 'controller' ? this.controllers : this.machines).push(agent)
    }
  }

  address (agent: Agent): string {
    return `/ip4/${this.hostOf(agent)}/tcp/${agent.port}/p2p/${agent.id}`
  }

  start (agent: Agent): void {
    const common = ['--data-dir', agent.dir, '--network-key', this.keyFile, '--listen', `/ip4/${this.hostOf(agent)}/tcp/${agent.port}`,
      '--controllers', this.controllers.map(c => c.id).join(','), ...this.controllers.filter(c => c !== agent).flatMap(c => ['--seed', this.address(c)])]
    const machineAgents = [...this.controllers, ...this.machines].filter(a => a.machineId !== undefined)
    const roleArgs = agent.role === 'controller'
      ? ['--role', agent.machineId === undefined ? 'controller' : 'both', ...(agent.machineId === undefined ? [] : ['--machine-id', agent.machineId]),
          '--admin', peerIdOfKey(this.#clientKey!), ...machineAgents.flatMap(m => ['--machine', `${m.machineId!}=${m.id}`])]
      : ['--role', 'machine', '--machine-id', agent.machineId!]
    const [command, ...prefix] = [...this.launcher(agent), process.execPath]
    const child = spawn(command!, [...prefix, distProgram('cantripd'), ...roleArgs, ...common, ...this.extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] })
    agent.process = child
    agent.raftRole = ''
    const log = this.#logOf(agent)
    const started = `-- ${new Date().toISOString()} started, pid ${String(child.pid)}\n`
    log.out.write(started)
    log.err.write(started)
    let pending = ''
    child.stdout!.on('data', chunk => {
      log.out.write(chunk)
      pending += String(chunk)
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const line of lines) {
        agent.output += line + '\n'
        const event = JSON.parse(line) as { event: string, role?: string, term?: number, revision?: number, at?: number }
        if (event.event === 'role') { agent.raftRole = event.role!; agent.term = event.term! }
        if (event.event === 'model') agent.views.push({ revision: event.revision!, at: event.at! })
      }
      if (lines.length > 0) signalAgentEvent()
    })
    child.stderr!.on('data', chunk => {
      log.err.write(chunk)
      agent.output = (agent.output + String(chunk)).slice(-20_000)
    })
  }

  #logOf (agent: Agent): { out: WriteStream, err: WriteStream } {
    let log = this.#logs.get(agent)
    if (log === undefined) {
      const dir = join(this.root, 'logs')
      mkdirSync(dir, { recursive: true })
      const name = basename(agent.dir)
      log = { out: createWriteStream(join(dir, `${name}.out`), { flags: 'a' }), err: createWriteStream(join(dir, `${name}.err`), { flags: 'a' }) }
      this.#logs.set(agent, log)
    }
    return log
  }

  /**
   * Moves the agents' logs out of `root` before it is removed, when asked to
   * (CANTRIP_KEEP_LOGS=1) or when a wait of this cluster timed out: a failure under load
   * can then be read afterwards. Says where on stderr.
   */
  async #keepLogs (): Promise<void> {
    await Promise.all([...this.#logs.values()].flatMap(log => [log.out, log.err]).map(async stream => await new Promise(resolve => stream.end(resolve))))
    const failed = waitsFailedSoFar() > this.#waitsFailedBefore
    if (this.#logs.size === 0 || (!failed && process.env['CANTRIP_KEEP_LOGS'] !== '1')) return
    const kept = join(process.env['CANTRIP_KEEP_LOGS_DIR'] ?? join(tmpdir(), 'cantrip-kept-logs'), `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}-${basename(this.root)}`)
    cpSync(join(this.root, 'logs'), kept, { recursive: true })
    process.stderr.write(`cantripd cluster: ${failed ? 'a wait failed; ' : ''}the agents' logs are kept in ${kept}\n`)
  }

  async connectClient (): Promise<Libp2pTransport> {
    this.client = await Libp2pTransport.create({ privateKey: this.#clientKey!, networkKey: this.#networkKey, bootstrap: this.controllers.map(c => this.address(c)) })
    return this.client
  }

  leader (): Agent | undefined {
    return this.controllers.filter(c => c.process !== undefined && c.raftRole === 'leader').sort((a, b) => b.term - a.term)[0]
  }

  /**
   * Submits as the admin through the leader (or any controller), retrying with the same
   * request id (so it applies once) until acknowledged or waitMsMax has passed. The bound
   * is time, not a count: a refusal ("not the leader" while an election settles) comes
   * back at once, and 20 quick refusals were once all a busy machine's election left room
   * for. A refusal naming the leader sends the next attempt there; one that cannot change
   * (permission, malformed) ends it. On giving up it says
   * why on stderr and answers undefined.
   */
  async submit (body: Record<string, unknown>, requestId = `admin-${++this.#requests}`): Promise<CommandResult | undefined> {
    const until = performance.now() + waitMsMax
    let last = 'no attempt made'
    let hinted: Agent | undefined
    let pauseMs = submitPauseMsMin
    for (let attempt = 0; performance.now() < until; attempt++) {
      const target = hinted ?? this.leader() ?? this.controllers[attempt % this.controllers.length]!
      hinted = undefined
      try {
        const reply = decode(await this.client!.request(target.id, controllerProposeProtocol, encode({ ...body, requestId, proposer: admin }, 'test'), { timeoutMs: 3_000 }), 'test') as ForwardReply
        if (reply.ok) return reply.result
        last = `${target.id.slice(-6)} refused: ${reply.name}: ${reply.message}`
        if (submitRefusalsFinal.has(reply.name)) break
        hinted = this.controllers.find(c => c.id === reply.leader && c !== target && c.process !== undefined)
      } catch (error) {
        last = `${target.id.slice(-6)}: ${error instanceof Error ? error.message : String(error)}`
      }
      await new Promise(resolve => setTimeout(resolve, pauseMs))
      pauseMs = Math.min(submitPauseMsMax, pauseMs * 2)
    }
    countFailedWait()
    process.stderr.write(`cantripd cluster: ${String(body['type'])} (${requestId}) not acknowledged; last: ${last}\n`)
    return undefined
  }

  async api<T> (agent: Agent, body: Record<string, unknown>, timeoutMs = 3_000): Promise<T | undefined> {
    try {
      return decode(await this.client!.request(agent.id, controllerApiProtocol, encode(body, 'test'), { timeoutMs }), 'test') as T
    } catch {
      return undefined
    }
  }

  /**
   * Puts the charm in `dir` into `agent`'s store (retrying until that controller answers)
   * and adds it to the model as `url`; answers the archive's hash and the stored one.
   */
  async addCharm (agent: Agent, dir: string, url: string): Promise<{ hash: string, stored: string | undefined, added: CommandResult | undefined }> {
    const packed = await packCharm(dir)
    let stored: string | undefined
    let last = ''
    const unanswered = { ok: false as const, error: 'no answer' }
    await waitFor(`the charm ${url} in ${agent.id.slice(-6)}'s store`, async () => {
      try {
        stored = (await uploadCharm({
          begin: async manifest => await this.api(agent, { op: 'put-charm-begin', manifest }) ?? unanswered,
          chunk: async (hash, index, bytes) => await this.api(agent, { op: 'put-charm-chunk', hash, index, bytes }) ?? unanswered,
          commit: async hash => await this.api(agent, { op: 'put-charm-commit', hash }, 60_000) ?? unanswered
        }, packed.bytes)).hash
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
      }
      return stored !== undefined
    }, () => last)
    const added = await this.submit({ type: 'add-charm', url, hash: packed.hash, metadata: (await loadCharmDir(dir)).summary })
    return { hash: packed.hash, stored, added }
  }

  async summary (agent: Agent): Promise<SummaryReply | undefined> {
    return await this.api<SummaryReply>(agent, { op: 'model-summary' })
  }

  /**
   * Keeps submitting `add-machine` as the admin, kills the Raft leader with kill -9 once
   * `before` commands were acknowledged, and waits until the group acknowledges commands
   * again. Returns the killed controller, how long serving took, and `finish()`, which
   * stops the load and answers every acknowledged command's machine id.
   */
  async killLeaderUnderLoad (before: number): Promise<{ killed: Agent, servingMs: number, acknowledged: string[], finish: () => Promise<string[]> }> {
    const acknowledged: string[] = []
    let loading = true
    let n = 0
    const load = (async () => {
      while (loading) {
        const result = await this.submit({ type: 'add-machine' }, `load-${n++}`)
        if (result?.ok === true && result.machines?.[0] !== undefined) acknowledged.push(result.machines[0])
      }
    })()
    await waitFor(`${before} commands acknowledged`, () => acknowledged.length >= before)
    const killed = this.leader()!
    killed.process!.kill('SIGKILL')
    const killedAt = performance.now()
    const ackedBefore = acknowledged.length
    killed.process = undefined
    await waitFor('a command acknowledged after the kill', () => acknowledged.length > ackedBefore + 1)
    const servingMs = performance.now() - killedAt
    return { killed, servingMs, acknowledged, finish: async () => { loading = false; await load; return acknowledged } }
  }

  /** Waits until every controller holds every machine id in `ids`. */
  async waitForMachinesEverywhere (ids: readonly string[]): Promise<void> {
    for (const c of this.controllers) {
      await waitFor(`${c.id.slice(-6)} to hold every acknowledged command`, async () => {
        const summary = await this.summary(c)
        return summary?.ok === true && ids.every(id => summary.machines.includes(id))
      })
    }
  }

  async close (): Promise<void> {
    await this.client?.stop()
    for (const agent of [...this.machines, ...this.controllers]) {
      // Not yet exited (a process killed by a signal has a signalCode and no exitCode).
      if (agent.process !== undefined && agent.process.exitCode === null && agent.process.signalCode === null) {
        agent.process.kill('SIGTERM')
        const exited = new Promise(resolve => { agent.process!.once('exit', resolve) })
        const timer = setTimeout(() => { agent.process?.kill('SIGKILL') }, 10_000)
        await exited
        clearTimeout(timer)
      }
    }
    // Workloads outlive their agents (as in Juju); anything a test left running ends here, by pid.
    for (const agent of [...this.controllers, ...this.machines]) if (agent.machineId !== undefined) killUnitWorkloads(agent.dir)
    await this.#keepLogs()
    rmSync(this.root, { recursive: true, force: true })
  }
}
