import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freeLoopbackPort } from '../agent/free-port.ts'
import { ChildSet } from './child-processes.ts'
import { pollUntil } from './stats.ts'

/**
 * A 3-member etcd cluster on loopback (Debian's etcd 3.4, defaults: WAL fsync on every
 * commit, 100 ms heartbeat, 1 s election timeout, unless `timing` gives others; PreVote on), each
 * member with its own data dir under one temp dir, talked to over its HTTP/JSON gateway
 * (`/v3/kv/put`) with keep-alive connections. Members are killed by pid in `close()` and
 * the temp dir removed.
 */
const component = 'bench etcd'
const startWithinMs = 60_000
const requestTimeoutMs = 5_000

export interface EtcdMember { name: string, clientUrl: string, process: ChildProcess, args: string[], logFile: string }

/** etcd's Raft timing (`--heartbeat-interval`, `--election-timeout`); both randomise the election timeout over [t, 2t). */
export interface EtcdTiming { heartbeatMs: number, electionTimeoutMs: number }
export const etcdDefaultTiming: EtcdTiming = { heartbeatMs: 100, electionTimeoutMs: 1_000 }

export class EtcdGroup {
  readonly root = mkdtempSync(join(tmpdir(), 'cantrip-bench-etcd-'))
  readonly members: EtcdMember[] = []
  readonly #children = new ChildSet()
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 256 })

  async start (size = 3, timing: EtcdTiming = etcdDefaultTiming): Promise<void> {
    const ports = []
    for (let i = 0; i < size; i++) ports.push({ client: await freeLoopbackPort(), peer: await freeLoopbackPort() })
    const cluster = ports.map((p, i) => `m${i}=http://127.0.0.1:${p.peer}`).join(',')
    for (const [i, p] of ports.entries()) {
      const clientUrl = `http://127.0.0.1:${p.client}`
      const peerUrl = `http://127.0.0.1:${p.peer}`
      const logFile = join(this.root, `m${i}.log`)
      // Info, etcd's default level: its raft logs each election step there, with the time.
      const args = [
        '--name', `m${i}`, '--data-dir', join(this.root, `m${i}`),
        '--listen-client-urls', clientUrl, '--advertise-client-urls', clientUrl,
        '--listen-peer-urls', peerUrl, '--initial-advertise-peer-urls', peerUrl,
        '--initial-cluster', cluster, '--initial-cluster-state', 'new', '--initial-cluster-token', `bench-${process.pid}`,
        '--heartbeat-interval', String(timing.heartbeatMs), '--election-timeout', String(timing.electionTimeoutMs),
        // PreVote, as cantrip's controllers run it and etcd 3.5 on enables by default
        // (3.4's default is off): a failover then costs both stores the same round trips.
        '--pre-vote=true',
        '--logger', 'zap', '--log-outputs', logFile, '--log-level', 'info'
      ]
      this.members.push({ name: `m${i}`, clientUrl, process: this.#children.start('etcd', args), args, logFile })
    }
    const up = await pollUntil(async () => await this.tryPut(this.members[0]!, 'bench/start', 'x'), startWithinMs, 100)
    if (!up) throw new Error(`${component}: expected the cluster to take a put within ${startWithinMs} ms, got none`)
  }

  live (): EtcdMember[] {
    return this.members.filter(m => m.process.exitCode === null && m.process.signalCode === null)
  }

  async put (member: EtcdMember, key: string, value: string): Promise<void> {
    const body = JSON.stringify({ key: Buffer.from(key).toString('base64'), value: Buffer.from(value).toString('base64') })
    const reply = await this.#post(member, '/v3/kv/put', body)
    if (reply.status !== 200) throw new Error(`${component}: expected 200 from a put to ${member.name}, got ${reply.status}: ${reply.text.slice(0, 200)}`)
  }

  async tryPut (member: EtcdMember, key: string, value: string, timeoutMs = requestTimeoutMs): Promise<boolean> {
    try {
      const body = JSON.stringify({ key: Buffer.from(key).toString('base64'), value: Buffer.from(value).toString('base64') })
      return (await this.#post(member, '/v3/kv/put', body, timeoutMs)).status === 200
    } catch {
      return false
    }
  }

  /** The member that is leader now, as the members' status says. */
  async leader (): Promise<EtcdMember | undefined> {
    for (const m of this.live()) {
      try {
        const status = JSON.parse((await this.#post(m, '/v3/maintenance/status', '{}')).text) as { header?: { member_id?: string }, leader?: string }
        if (status.leader !== undefined && status.leader === status.header?.member_id) return m
      } catch { /* not answering: ask the next */ }
    }
    return undefined
  }

  async killHard (member: EtcdMember): Promise<void> {
    await this.#children.killHard(member.process)
  }

  /** kill -9 of a member, not waiting for it to exit (a failover is timed from the signal). */
  killNow (member: EtcdMember): void {
    member.process.kill('SIGKILL')
  }

  /**
   * Starts a killed member again on its data dir (etcd then ignores the initial-cluster
   * flags and rejoins as the member it was), once the old process has exited.
   */
  async restart (member: EtcdMember): Promise<void> {
    await this.#children.killHard(member.process)
    member.process = this.#children.start('etcd', member.args)
  }

  async close (): Promise<void> {
    this.#agent.destroy()
    await this.#children.stopAll()
    rmSync(this.root, { recursive: true, force: true })
  }

  async #post (member: EtcdMember, path: string, body: string, timeoutMs = requestTimeoutMs): Promise<{ status: number, text: string }> {
    return await new Promise((resolve, reject) => {
      const req = request(`${member.clientUrl}${path}`, { method: 'POST', agent: this.#agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: timeoutMs }, res => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', chunk => { text += chunk })
        res.on('end', () => { resolve({ status: res.statusCode ?? 0, text }) })
      })
      req.on('timeout', () => { req.destroy(new Error(`${component}: ${path} to ${member.name} timed out after ${timeoutMs} ms`)) })
      req.on('error', reject)
      req.end(body)
    })
  }
}
