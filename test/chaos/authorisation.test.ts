/**
 * Authorisation (issue 12, item 7) on a simulated controller group serving the real API:
 * the policy table is pinned to the rules of DESIGN.md §10; random (entity, API call,
 * target) triples, sent over the network as that entity's peer, are answered exactly as
 * the table says; a denial is the table's one line and carries nothing of the model (the
 * model holds canary names and values that must never appear in one). The propose path
 * gets the same treatment: a caller proposes only as itself, a machine agent also for the
 * units the model puts on its machine, a controller for anyone.
 */
import '../../runtime/polyfill.ts'
import fc from 'fast-check'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { apiOps, apiPermits, apiPolicy, apiRefusal, type ApiOp } from '../../actors/controller/api-policy.ts'
import { controllerApiProtocol, type CharmArchives } from '../../actors/controller/controller-api.ts'
import { controllerProposeProtocol } from '../../actors/controller/controller-node.ts'
import { decode, encode } from '../../runtime/codec.ts'
import type { Entity, ModelCommand } from '../../runtime/model/model-types.ts'
import { ControllerGroup } from '../../sim/controller-group.ts'
import { Simulation } from '../../sim/simulation.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'

const test = suite('authorisation: the policy table, denials and the propose path')
const modelUuid = 'model-canary'
const canaries = ['canaryapp', 'canarycharm', 'CANARY-CONFIG-7f3a', 'canarydb']
const admin = { kind: 'user', name: 'admin' } as const

/** Peers as the group's identify sees them; controllers are added once the group exists. */
const peers = new Map<string, Entity>([
  ['admin-peer', admin],
  ['machine-0-peer', { kind: 'machine', id: '0' }],
  ['machine-1-peer', { kind: 'machine', id: '1' }],
  ['unit-peer', { kind: 'unit', name: 'canaryapp/0' }]
])
const strangers = ['stranger-peer']

const charms: CharmArchives = {
  async get (hash) { return hash === 'ab'.repeat(8) ? new TextEncoder().encode('archive') : undefined },
  async put () { return 'cd'.repeat(8) }
}

let group: ControllerGroup
const figures: Record<string, number> = { triples: 0, permitted: 0, denied: 0, proposals: 0, proposalsDenied: 0 }

test.before(async () => {
  group = await ControllerGroup.create(new Simulation({ seed: 12 }), { size: 3, hostOptions: () => ({ agents: { modelUuid, identify: peer => peers.get(peer), charms } }) })
  for (const id of group.ids) peers.set(id, { kind: 'controller', id })
  assert.ok(await group.runUntil(() => group.leader() !== undefined, 5_000), 'a leader')
  let n = 0
  for (const body of [
    { type: 'add-machine' }, { type: 'add-machine' },
    { type: 'add-charm', url: 'local:canarycharm-0', hash: 'ab'.repeat(8), metadata: { name: 'canarycharm', requires: { canarydb: { interface: 'canarydb' } }, config: { secret: { type: 'string', default: 'CANARY-CONFIG-7f3a' } } } },
    { type: 'deploy', application: 'canaryapp', charm: 'local:canarycharm-0', config: {}, constraints: {}, numUnits: 2, placement: ['0', '1'] }
  ]) {
    let outcome: { ok: boolean, error?: string } | undefined
    group.leaderNode()!.submit({ ...body, requestId: `setup-${++n}`, proposer: admin } as unknown as ModelCommand).then(r => { outcome = r }, (e: unknown) => { outcome = { ok: false, error: String(e) } })
    assert.ok(await group.runUntil(() => outcome !== undefined, 5_000), 'command answered')
    assert.ok(outcome!.ok, outcome!.error)
  }
})

test.after(async () => {
  await group.stop()
  reportFigures('authorisation', figures)
})

async function ask (from: string, protocol: string, body: unknown): Promise<Record<string, unknown>> {
  let reply: Record<string, unknown> | undefined
  let failure: unknown
  // The leader, or another controller when the leader itself asks (no peer calls itself).
  const to = group.leader()!.id === from ? group.ids.find(id => id !== from)! : group.leader()!.id
  group.network.transport(from).request(to, protocol, encode(body, 'test'), { timeoutMs: 2_000 })
    .then(bytes => { reply = decode(bytes, 'test') as Record<string, unknown> }, (error: unknown) => { failure = error })
  assert.ok(await group.runUntil(() => reply !== undefined || failure !== undefined, 3_000), 'answered in time')
  if (failure !== undefined) throw failure
  return reply!
}

function assertNoModelData (text: string): void {
  for (const canary of canaries) assert.not.ok(text.includes(canary), `leaked ${canary}: ${text}`)
}

test('the table is DESIGN.md §10: who may make each call', () => {
  const spec: Record<ApiOp, string[]> = {
    'machine-model': ['controller', 'machine'],
    'charm-archive': ['user', 'controller', 'machine', 'unit'],
    'put-charm': ['user', 'controller'],
    'model-summary': ['user', 'controller'],
    register: ['user', 'controller', 'machine', 'unit', 'stranger'],
    model: ['user', 'controller'],
    'controller-status': ['user', 'controller'],
    members: ['user', 'controller'],
    'add-controller': ['user'],
    controllers: ['user', 'controller', 'machine', 'unit'],
    'debug-log': ['user', 'controller']
  }
  assert.equal(Object.fromEntries(apiOps.map(op => [op, [...apiPolicy[op].allowed]])), spec)
  assert.ok(apiPolicy['machine-model'].ownMachineOnly, 'a machine agent reads only its own machine')
  assert.ok(apiPermits('machine-model', { kind: 'machine', id: '0' }, '0'))
  assert.not.ok(apiPermits('machine-model', { kind: 'machine', id: '0' }, '1'))
})

test('random (entity, call, target) triples are answered as the table says; denials leak nothing', async () => {
  const callers = [...peers.keys(), ...strangers]
  const triple = fc.record({
    from: fc.constantFrom(...callers),
    op: fc.constantFrom<ApiOp>(...apiOps),
    target: fc.constantFrom<unknown>('0', '1', '7', '', undefined, 3)
  })
  await fc.assert(fc.asyncProperty(triple, async ({ from, op, target }) => {
    figures['triples']!++
    const body: Record<string, unknown> = { op }
    if (op === 'machine-model') body['machine'] = target
    if (op === 'charm-archive') body['hash'] = 'ab'.repeat(8)
    if (op === 'put-charm') body['bytes'] = new Uint8Array(4)
    if (op === 'register') Object.assign(body, { machine: '7', secret: 'wrong' })
    if (op === 'add-controller') body['peer'] = '!'
    const reply = await ask(from, controllerApiProtocol, body)
    const caller = peers.get(from)
    const permitted = apiPermits(op, caller, op === 'machine-model' ? target : undefined) && !(op === 'machine-model' && typeof target !== 'string')
    if (permitted) {
      figures['permitted']!++
      assert.not.ok(String(reply['error'] ?? '').includes('permission denied'), `${from} ${op}: ${JSON.stringify(reply)}`)
    } else {
      figures['denied']!++
      assert.equal(Object.keys(reply).sort(), ['error', 'ok'], `${from} ${op}: a denial carries only the error`)
      assert.is(reply['ok'], false)
      assert.is(reply['error'], apiRefusal('controller api', op, from, op === 'machine-model' ? target : undefined))
      assertNoModelData(reply['error'] as string)
    }
  }), { numRuns: chaosCount(20_000, 2_000), seed: 12, includeErrorInReport: true })
})

test('the propose path: callers propose only as themselves, machine agents also for their units', async () => {
  const proposers: Entity[] = [admin, { kind: 'machine', id: '0' }, { kind: 'machine', id: '1' }, { kind: 'unit', name: 'canaryapp/0' }, { kind: 'unit', name: 'canaryapp/1' }, { kind: 'controller', id: group.ids[0]! }]
  const unitMachine: Record<string, string> = { 'canaryapp/0': '0', 'canaryapp/1': '1' }
  let n = 0
  await fc.assert(fc.asyncProperty(fc.constantFrom(...peers.keys(), ...strangers), fc.constantFrom(...proposers), async (from, proposer) => {
    figures['proposals']!++
    const command = { type: 'set-unit-status', unit: proposer.kind === 'unit' ? proposer.name : 'canaryapp/0', status: 'active', message: 'fine', now: 1, requestId: `p-${++n}`, proposer }
    const reply = await ask(from, controllerProposeProtocol, command)
    const caller = peers.get(from)
    const permitted = caller !== undefined && (caller.kind === 'controller' || JSON.stringify(caller) === JSON.stringify(proposer) ||
      (caller.kind === 'machine' && proposer.kind === 'unit' && unitMachine[proposer.name] === caller.id))
    const denied = reply['ok'] === false && reply['name'] === 'PermissionDeniedError'
    assert.is(denied, !permitted, `${from} as ${JSON.stringify(proposer)}: ${JSON.stringify(reply)}`)
    if (denied) {
      figures['proposalsDenied']!++
      assert.match(String(reply['message']), /^controller "[^"]+": permission denied: peer "[^"]+" (is not known to this model|may not propose as \{.*\})$/)
      assertNoModelData(String(reply['message']).replace(/may not propose as .*$/, ''))
    }
  }), { numRuns: chaosCount(5_000, 500), seed: 12, includeErrorInReport: true })
})

test.run()
