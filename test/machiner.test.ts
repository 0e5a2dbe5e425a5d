import '../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { Machiner } from '../actors/machine/machiner.ts'
import { emptyModel } from '../runtime/model/model-draft.ts'
import type { CommandResult, MachineRecord, ModelCommand, ModelContext } from '../runtime/model/model-types.ts'
import { tableFrom } from '../runtime/model/table.ts'

/** A controller whose view the test sets, recording what the machiner submits. */
function fakeController (answer: (command: ModelCommand) => CommandResult | Error = () => ({ ok: true }) as CommandResult) {
  let model: ModelContext = emptyModel()
  const listeners = new Set<() => void>()
  const submitted: ModelCommand[] = []
  return {
    submitted,
    set (machine: Partial<MachineRecord> | undefined): void {
      model = { ...emptyModel(), revision: model.revision + 1, machines: tableFrom(machine === undefined ? [] : [['0', { id: '0', life: 'alive', units: [], ...machine } as MachineRecord]]) }
      for (const listener of [...listeners]) listener()
    },
    model: () => model,
    now: () => 1_000,
    onChange (listener: () => void) { listeners.add(listener); return () => { listeners.delete(listener) } },
    async submit (command: ModelCommand): Promise<CommandResult> {
      submitted.push(command)
      const result = answer(command)
      if (result instanceof Error) throw result
      return result
    }
  }
}

const settle = async (): Promise<void> => { for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve)) }

test('reports the agent started once its machine appears in the model, and only once', async () => {
  const controller = fakeController()
  const machiner = Machiner.start({ machineId: '0', controller, incarnation: 7 })
  await settle()
  assert.is(controller.submitted.length, 0, 'nothing to report on before the machine exists')
  controller.set({})
  controller.set({ units: ['kv/0'] })
  await settle()
  assert.equal(controller.submitted.map(c => [c.type, (c as { agentStatus?: string }).agentStatus]), [['set-machine-status', 'started']])
  const command = controller.submitted[0] as unknown as { requestId: string, proposer: unknown }
  assert.is(command.requestId, 'machine-0/7/1')
  assert.equal(command.proposer, { kind: 'machine', id: '0' })
  assert.not.ok('controller' in command, 'a plain machine agent does not say it is a controller')
  await machiner.stop()
})

test('the agent of a controller (role both) says so in its report, so its machine outlives its last unit', async () => {
  const controller = fakeController()
  const machiner = Machiner.start({ machineId: '0', controller, incarnation: 1, hostsController: true })
  controller.set({})
  await settle()
  assert.equal(controller.submitted.map(c => c.type === 'set-machine-status' ? [c.agentStatus, c.controller] : c.type), [['started', true]])
  await machiner.stop()
})

test('a dying machine is marked dead only once its last unit has left; the machiner then ends `dead`', async () => {
  const controller = fakeController()
  const machiner = Machiner.start({ machineId: '0', controller, incarnation: 1 })
  controller.set({ units: ['kv/0'] })
  controller.set({ life: 'dying', units: ['kv/0'] })
  await settle()
  assert.not.ok(controller.submitted.some(c => c.type === 'machine-dead'), 'not while a unit remains')
  controller.set({ life: 'dying', units: [] })
  controller.set({ life: 'dying', units: [] })
  await machiner.done
  assert.is(machiner.outcome, 'dead')
  assert.is(controller.submitted.filter(c => c.type === 'machine-dead').length, 1)
})

test('a machine removed from the model ends the machiner `removed`', async () => {
  const controller = fakeController()
  const machiner = Machiner.start({ machineId: '0', controller, incarnation: 1 })
  controller.set({})
  controller.set(undefined)
  await machiner.done
  assert.is(machiner.outcome, 'removed')
})

test('a refused command fails the machiner; a refusal of the agent itself is fatal', async () => {
  const refused = fakeController(() => ({ ok: false, error: 'machine "0" not found' }) as CommandResult)
  const m1 = Machiner.start({ machineId: '0', controller: refused, incarnation: 1 })
  refused.set({})
  const e1 = await m1.done.then(() => undefined, (error: Error) => error)
  assert.match(e1?.message ?? '', /machiner of machine 0: set-machine-status refused: machine "0" not found/)
  assert.is.not(e1?.name, 'FatalError')

  const denied = fakeController(() => new Error('controller "c0": permission denied: peer "p" may not propose as {"kind":"machine","id":"0"}'))
  const m2 = Machiner.start({ machineId: '0', controller: denied, incarnation: 1 })
  denied.set({})
  const e2 = await m2.done.then(() => undefined, (error: Error) => error)
  assert.is(e2?.name, 'FatalError')
  assert.match(e2?.message ?? '', /the controllers refuse this agent/)
})

test.run()
