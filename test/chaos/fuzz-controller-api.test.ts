/**
 * Fuzzing the controller's request decoders (issue 12, item 8): the API protocol and the
 * propose protocol (single commands and machine agents' batches), on a simulated group
 * serving the real handlers. Requests are random bytes, random values and valid requests
 * with mutated bytes or fields, sent as every kind of caller. Each must be answered (no
 * transport failure, no thrown handler) with a reply whose error, if any, is one line.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { controllerApiProtocol } from '../../actors/controller/controller-api.ts'
import { controllerProposeProtocol } from '../../actors/controller/model-replica.ts'
import type { SimControllerGroup } from '../../sim/sim-controller-group.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { accepted, FuzzCrash, fuzz, rejected, tallyFigures } from './support/fuzz-harness.ts'
import { wireInputs } from './support/fuzz-inputs.ts'
import { admin, canaryGroup, strangers, type CanaryGroup } from './support/hostile-model-group.ts'

const count = chaosCount(100_000, 2_000)
const test = suite('fuzz: controller request decoders')
const figures: Record<string, number | string> = {}
let group: SimControllerGroup
let peers: CanaryGroup['peers']
let ask: CanaryGroup['ask']

test.before(async () => {
  ({ group, peers, ask } = await canaryGroup(13))
})

test.after(async () => {
  await group.stop()
  reportFigures('fuzz-controller-api', figures)
})

/** A reply is a map with a boolean ok; a refusal's text is one line. */
function judge (reply: Record<string, unknown>): ReturnType<typeof rejected> {
  if (typeof reply !== 'object' || reply === null || typeof reply['ok'] !== 'boolean') throw new FuzzCrash(`a reply without ok: ${JSON.stringify(reply)}`)
  if (reply['ok'] === true) return accepted
  const text = String(reply['error'] ?? reply['message'] ?? '')
  // A handler's own TypeError (say) caught and passed on is still a crash of the handler.
  if (['TypeError', 'RangeError', 'ReferenceError', 'Error'].includes(String(reply['name']))) throw new FuzzCrash(`a ${String(reply['name'])} from the handler: ${text}`)
  if (text.length === 0 || text.includes('\n')) throw new FuzzCrash(`a refusal without a one-line reason: ${JSON.stringify(reply)}`)
  // Our errors name their component first (`controller api: …`, `controller "c0": …`); a bare JS message does not.
  if (!/^[a-z][a-z0-9 .-]*( "[^"]*")?: /.test(text)) throw new FuzzCrash(`a refusal that names no component: ${text}`)
  return rejected(text.includes('permission denied') ? 'denied' : typeof reply['name'] === 'string' ? String(reply['name']) : 'refused')
}

const apiSeeds = [
  { op: 'machine-model', machine: '0' }, { op: 'application-status', unit: 'canaryapp/0' }, { op: 'charm-manifest', hash: 'ab'.repeat(32), local: true }, { op: 'charm-chunk', hash: 'ab'.repeat(32), index: 0 }, { op: 'put-charm-begin', manifest: { hash: 'ab'.repeat(32), size: 3, chunkBytes: 3, chunks: ['cd'.repeat(32)] } }, { op: 'put-charm-chunk', hash: 'ab'.repeat(32), index: 0, bytes: new Uint8Array(3) }, { op: 'put-charm-commit', hash: 'ab'.repeat(32) },
  { op: 'model-summary' }, { op: 'register', machine: '1', secret: 'ff'.repeat(16) }, { op: 'model' }, { op: 'controller-status' },
  { op: 'members' }, { op: 'add-controller', peer: '12D3KooWabc' }, { op: 'remove-controller', peer: '12D3KooWabc' }, { op: 'controllers' }, { op: 'debug-log', after: 0, lines: 5 },
  { op: 'ship-logs', records: [{ entity: 'unit-canaryapp-0', time: 1, level: 'info', module: 'unit.canaryapp/0.juju-log', message: 'x', seq: 1 }] }
]
const status = { type: 'set-unit-status', unit: 'canaryapp/0', status: 'active', message: 'ok', now: 1, requestId: 'f-1', proposer: { kind: 'unit', name: 'canaryapp/0' } }
const proposeSeeds = [status, { batch: [status, { ...status, requestId: 'f-2', unit: 'canaryapp/1' }] }, { type: 'add-machine', requestId: 'f-3', proposer: admin }]

test('API and propose requests: always answered, one-line refusals', async () => {
  const callers = [...peers.keys(), ...strangers]
  for (const [name, protocol, seeds] of [['api', controllerApiProtocol, apiSeeds], ['propose', controllerProposeProtocol, proposeSeeds]] as const) {
    const input = fc.tuple(fc.constantFrom(...callers), wireInputs(seeds as ReadonlyArray<Record<string, unknown>>))
    const tally = await fuzz(input, count, async ([from, bytes]) => judge(await ask(from, protocol, undefined, bytes)))
    Object.assign(figures, tallyFigures(name, tally))
    assert.is(tally.inputs, count)
    assert.is(tally.crashes + tally.hangs, 0)
    assert.ok(tally.accepted > 0 && Object.keys(tally.rejected).length > 1, JSON.stringify(tally))
  }
})

test('reproducer: a propose request that is not a map (msgpack nil) is refused with one line, not a TypeError', async () => {
  // Found by the propose fuzz: #serveOne read `.proposer` of null and answered "Cannot read properties of null".
  for (const bytes of [Uint8Array.of(0xc0), Uint8Array.of(0x90), Uint8Array.of(0xc4, 0x01, 0x00)]) {
    const reply = await ask('admin-peer', controllerProposeProtocol, undefined, bytes)
    assert.is(reply['ok'], false)
    assert.is(reply['name'], 'InvalidInputError')
    assert.match(String(reply['message']), /^controller "[^"]+": expected a command map or \{batch\}, got /)
  }
})

test.run()
