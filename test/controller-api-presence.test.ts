/**
 * Presence in the admin `model-summary` reply: a unit's agent is `lost` while its machine
 * agent is not heard from, and whenever presence knows the machine agent the unit says
 * since when (`agentSince`) and on whose observation (`agentHeardBy`).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { controllerApiProtocol, serveApiRequest, type MachinePresence, type SummaryReply } from '../actors/controller/controller-api.ts'
import type { ModelReplica } from '../actors/controller/model-replica.ts'
import { decode, encode } from '../runtime/codec.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import type { Entity } from '../runtime/model/model-types.ts'
import { MemoryController } from './support/model-controller.ts'

const test = suite('controller api presence')

/** Two applications of one unit each, on two machines. */
function model (): MemoryController {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:web-0', hash: 'a'.repeat(16), metadata: { name: 'web' } })
  c.run('add-charm', { url: 'local:db-0', hash: 'b'.repeat(16), metadata: { name: 'db' } })
  c.run('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 1 })
  c.run('deploy', { application: 'db', charm: 'local:db-0', config: {}, constraints: {}, numUnits: 1 })
  return c
}

const identify = (peer: string): Entity | undefined => peer === 'admin' ? { kind: 'user', name: 'admin' } : peer === 'm' ? { kind: 'machine', id: '0' } : undefined

async function summary (c: MemoryController, presence: MachinePresence | undefined, from = 'admin'): Promise<SummaryReply> {
  const node = { read: async () => c.context } as unknown as ModelReplica
  const data = await serveApiRequest(node, identify, { from, protocol: controllerApiProtocol, data: encode({ op: 'model-summary' }) }, undefined, presence)
  return decode(data, 'test') as SummaryReply
}

test('a unit whose machine agent is not heard from is lost, with since when and who says so', async () => {
  const c = model()
  const reader = readerOf(c.context)
  const webMachine = reader.unit('web/0')!.machine
  const dbMachine = reader.unit('db/0')!.machine
  assert.is.not(webMachine, dbMachine)
  const presence: MachinePresence = machine => machine === webMachine
    ? { status: 'lost', since: 1_700_000_000_123, heardBy: 'peer-controller-1' }
    : { status: 'alive', since: 1_700_000_000_000, heardBy: 'peer-controller-0' }
  const reply = await summary(c, presence)
  if (!reply.ok) throw new Error(reply.error)
  assert.equal(reply.units['web/0'], { workload: 'waiting', message: reply.units['web/0']!.message, agent: 'lost', agentSince: 1_700_000_000_123, agentHeardBy: 'peer-controller-1' })
  assert.is(reply.units['db/0']!.agent, readerOf(c.context).unit('db/0')!.agent.status, 'an alive machine agent leaves the unit\'s own agent status')
  assert.is.not(reply.units['db/0']!.agent, 'lost')
  assert.is(reply.units['db/0']!.agentSince, 1_700_000_000_000)
  assert.is(reply.units['db/0']!.agentHeardBy, 'peer-controller-0')
})

test('what presence does not know is left out, not sent as nil', async () => {
  const c = model()
  const unknown = await summary(c, () => ({ status: 'lost', since: undefined, heardBy: undefined }))
  if (!unknown.ok) throw new Error(unknown.error)
  assert.equal(Object.keys(unknown.units['web/0']!).sort(), ['agent', 'message', 'workload'])
  assert.is(unknown.units['web/0']!.agent, 'lost')

  const none = await summary(c, undefined)
  if (!none.ok) throw new Error(none.error)
  assert.equal(Object.keys(none.units['db/0']!).sort(), ['agent', 'message', 'workload'])
  assert.is(none.units['db/0']!.agent, readerOf(c.context).unit('db/0')!.agent.status)
})

test('only admins and controllers may read the summary', async () => {
  const reply = await summary(model(), () => ({ status: 'lost', since: 1, heardBy: 'x' }), 'm')
  assert.is(reply.ok, false)
})

test.run()
