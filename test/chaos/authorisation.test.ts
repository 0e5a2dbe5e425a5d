/**
 * Authorisation (issue 12, item 7) on a simulated controller group serving the real API:
 * the policy table is pinned to the rules of DESIGN.md §10; random (entity, API call,
 * target) triples, sent over the network as that entity's peer, are answered exactly as
 * the table says; a denial is the table's one line and carries nothing of the model (the
 * model holds canary names and values that must never appear in one). The propose path
 * gets the same treatment: a caller proposes only as itself, a machine agent also for the
 * units the model puts on its machine, a controller for anyone.
 */
import fc from 'fast-check'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { apiOps, apiPermits, apiPolicy, apiRefusal, type ApiOp } from '../../actors/controller/api-policy.ts'
import { controllerApiProtocol } from '../../actors/controller/controller-api.ts'
import { controllerProposeProtocol } from '../../actors/controller/controller-node.ts'
import type { Entity } from '../../runtime/model/model-types.ts'
import type { ControllerGroup } from '../../sim/controller-group.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { admin, canaries, canaryGroup, strangers, type CanaryGroup } from './support/hostile-model-group.ts'

const test = suite('authorisation: the policy table, denials and the propose path')
const figures: Record<string, number> = { triples: 0, permitted: 0, denied: 0, proposals: 0, proposalsDenied: 0 }
let group: ControllerGroup
let peers: Map<string, Entity>
let ask: CanaryGroup['ask']

test.before(async () => {
  ({ group, peers, ask } = await canaryGroup())
})

test.after(async () => {
  await group.stop()
  reportFigures('authorisation', figures)
})

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
