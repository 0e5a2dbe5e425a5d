/**
 * A simulated controller group serving the real API and propose protocol, with a small
 * model whose names and values are canaries (they must never appear in a denial), and
 * peers that identify as each kind of entity. Shared by the authorisation and the
 * controller-API fuzz suites.
 */
import '../../../runtime/polyfill.ts'
import * as assert from 'uvu/assert'
import type { CharmArchives } from '../../../actors/controller/controller-api.ts'
import { decode, encode } from '../../../runtime/codec.ts'
import { limits } from '../../../runtime/limits.ts'
import type { Entity, ModelCommand } from '../../../runtime/model/model-types.ts'
import { SimControllerGroup } from '../../../sim/sim-controller-group.ts'
import { Simulation } from '../../../sim/simulation.ts'

export const canaries = ['canaryapp', 'canarycharm', 'CANARY-CONFIG-7f3a', 'canarydb']
export const admin = { kind: 'user', name: 'admin' } as const
export const strangers = ['stranger-peer']

export interface CanaryGroup {
  group: SimControllerGroup
  /** Peer id → entity, controllers included. */
  peers: Map<string, Entity>
  /**
   * Keeps canaryapp/0 the leader of canaryapp (a lease claimed at setup, for
   * `application-status`): extends the lease when less than a minute of it is left on
   * the controllers' (undrifted) clock. Returns that clock's reading.
   */
  keepLeader: () => Promise<number>
  /** Sends a request as `from` to the leader (or, when `from` leads, to another controller); throws on a transport failure. */
  ask: (from: string, protocol: string, body: unknown, bytes?: Uint8Array) => Promise<Record<string, unknown>>
}

const archive = 'ab'.repeat(32)
const charms: CharmArchives = {
  async manifest (hash) { return hash === archive ? { hash, size: 7, chunkBytes: 7, chunks: ['cd'.repeat(32)] } : undefined },
  async chunk (hash, index) { return hash === archive && index === 0 ? new TextEncoder().encode('archive') : undefined },
  async begin () { return { complete: false, missing: [0] } },
  async putChunk () {},
  async commit () {}
}

export async function canaryGroup (seed = 12): Promise<CanaryGroup> {
  const peers = new Map<string, Entity>([
    ['admin-peer', admin],
    ['machine-0-peer', { kind: 'machine', id: '0' }],
    ['machine-1-peer', { kind: 'machine', id: '1' }],
    ['unit-peer', { kind: 'unit', name: 'canaryapp/0' }]
  ])
  const group = await SimControllerGroup.create(new Simulation({ seed }), { size: 3, hostOptions: () => ({ agents: { modelUuid: 'model-canary', identify: (peer: string) => peers.get(peer), charms } }) })
  for (const id of group.ids) peers.set(id, { kind: 'controller', id })
  assert.ok(await group.runUntil(() => group.leader() !== undefined, 5_000), 'a leader')
  let n = 0
  const run = async (body: Record<string, unknown>, proposer: Entity): Promise<void> => {
    let outcome: { ok: boolean, error?: string } | undefined
    group.leaderNode()!.submit({ ...body, requestId: `setup-${++n}`, proposer } as unknown as ModelCommand).then(r => { outcome = r }, (e: unknown) => { outcome = { ok: false, error: String(e) } })
    assert.ok(await group.runUntil(() => outcome !== undefined, 5_000), 'command answered')
    assert.ok(outcome!.ok, outcome!.error)
  }
  for (const body of [
    { type: 'add-machine' }, { type: 'add-machine' },
    { type: 'add-charm', url: 'local:canarycharm-0', hash: 'ab'.repeat(8), metadata: { name: 'canarycharm', requires: { canarydb: { interface: 'canarydb' } }, config: { secret: { type: 'string', default: 'CANARY-CONFIG-7f3a' } } } },
    { type: 'deploy', application: 'canaryapp', charm: 'local:canarycharm-0', config: {}, constraints: {}, numUnits: 2, placement: ['0', '1'] }
  ]) await run(body, admin)
  const leader = { kind: 'unit', name: 'canaryapp/0' } as const
  const leaseMs = limits.leadershipLeaseDurationMsMax
  let expiry = Math.floor(group.sim.clock.now()) + leaseMs
  await run({ type: 'claim-leadership', application: 'canaryapp', unit: 'canaryapp/0', now: expiry - leaseMs, durationMs: leaseMs }, leader)
  const keepLeader = async (): Promise<number> => {
    const now = Math.floor(group.sim.clock.now())
    if (expiry - now < 60_000) {
      await run({ type: 'extend-leadership', application: 'canaryapp', unit: 'canaryapp/0', now, durationMs: leaseMs }, leader)
      expiry = now + leaseMs
    }
    return group.sim.clock.now()
  }
  const ask = async (from: string, protocol: string, body: unknown, bytes?: Uint8Array): Promise<Record<string, unknown>> => {
    let reply: Record<string, unknown> | undefined
    let failure: unknown
    const to = group.leader()!.id === from ? group.ids.find(id => id !== from)! : group.leader()!.id
    group.network.transport(from).request(to, protocol, bytes ?? encode(body, 'test'), { timeoutMs: 2_000 })
      .then(data => { reply = decode(data, 'test') as Record<string, unknown> }, (error: unknown) => { failure = error })
    assert.ok(await group.runUntil(() => reply !== undefined || failure !== undefined, 3_000), 'answered in time')
    if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure))
    return reply!
  }
  return { group, peers, ask, keepLeader }
}
