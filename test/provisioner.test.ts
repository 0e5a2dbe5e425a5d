/**
 * The provisioner against a scripted provider and an in-memory model, on a SimClock:
 * pending machines get a provisioning record and then one instance each; failures are
 * retried with the provider's reason in status; unknown instances are stopped before
 * pending machines start; an instance the provider already has for a machine's token is
 * adopted, never started twice; a dying machine with no units has its instance stopped
 * and is marked dead.
 */
import '../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { Provisioner } from '../actors/provisioner/provisioner.ts'
import type { Logger } from '../runtime/logger.ts'
import { tableGet } from '../runtime/model/table.ts'
import { ProviderError, type InstanceInfo, type InstanceSpec, type Provider, type StartedInstance } from '../providers/provider-contract.ts'
import { SimClock } from '../sim/sim-clock.ts'
import { MemoryController } from './support/model-controller.ts'

const logger: Logger = { module: 'test', log: () => {}, child: () => logger }

/** A cloud that answers at once, idempotent by token; `failNext` makes the next starts fail. */
class ScriptedProvider implements Provider {
  readonly name = 'scripted'
  readonly calls: string[] = []
  readonly instances = new Map<string, InstanceInfo>()
  failNext: Array<ProviderError> = []
  #next = 0

  async startInstance (spec: InstanceSpec, onProgress?: (p: { type: 'allocated', instanceId: string } | { type: 'deploying', message: string }) => void): Promise<StartedInstance> {
    this.calls.push(`start ${spec.machineId}`)
    const failure = this.failNext.shift()
    if (failure !== undefined) throw failure
    const seen = [...this.instances.values()].find(i => i.token === spec.token)
    if (seen !== undefined) return { instanceId: seen.instanceId, addresses: seen.addresses }
    const instanceId = `scripted:i-${this.#next++}`
    onProgress?.({ type: 'allocated', instanceId })
    this.instances.set(instanceId, { instanceId, machineId: spec.machineId, token: spec.token, status: 'running', addresses: ['10.0.0.1'], message: '' })
    return { instanceId, addresses: ['10.0.0.1'] }
  }

  async stopInstances (ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      this.calls.push(`stop ${id}`)
      this.instances.delete(id)
    }
  }

  async allInstances (): Promise<InstanceInfo[]> {
    return [...this.instances.values()]
  }
}

function world (provider: ScriptedProvider, reconcileIntervalMs = 1_000) {
  const clock = new SimClock({ startMs: 1_000 })
  const controller = new MemoryController()
  const listeners = new Set<() => void>()
  const submit = controller.submit.bind(controller)
  controller.submit = async command => {
    const result = await submit(command)
    for (const listener of [...listeners]) listener()
    return result
  }
  let n = 0
  const provisioner = new Provisioner({
    controllerId: 'c0',
    incarnation: '1',
    clock,
    logger,
    providerFor: () => provider,
    providers: [provider],
    model: () => controller.model(),
    onModelChange: listener => { listeners.add(listener); return () => { listeners.delete(listener) } },
    submit: async command => await controller.submit(command),
    newToken: () => (++n).toString(16).padStart(16, '0'),
    newSecret: () => (++n).toString(16).padStart(32, '0'),
    bootstrapFor: machine => new TextEncoder().encode(`bootstrap ${machine.id}`),
    policy: { retryDelayMsMin: 100, retryDelayMsMax: 400, provisioningAttemptsMax: 3 },
    reconcileIntervalMs,
    retryRoundMs: 5_000
  })
  const admin = (type: Parameters<MemoryController['run']>[0], fields: Record<string, unknown>) => {
    const result = controller.run(type, fields as never)
    for (const listener of [...listeners]) listener()
    return result
  }
  /** Lets promises settle and the clock move, `ms` at a time, `steps` times. */
  const run = async (steps: number, ms = 100): Promise<void> => {
    for (let i = 0; i < steps; i++) {
      for (let j = 0; j < 5; j++) await new Promise(resolve => setImmediate(resolve))
      clock.advance(ms)
    }
  }
  return { clock, controller, provisioner, admin, run }
}

test('pending machines get a provisioning record, then exactly one instance each, recorded in the model', async () => {
  const provider = new ScriptedProvider()
  const { controller, provisioner, admin, run } = world(provider)
  for (let i = 0; i < 3; i++) admin('add-machine', {})
  provisioner.start()
  await run(20)
  for (const id of ['0', '1', '2']) {
    const machine = tableGet(controller.model().machines, id)!
    assert.ok(machine.provisioning !== null && machine.instanceId !== null, JSON.stringify(machine))
    assert.is(machine.instance.status, 'running')
    assert.is([...provider.instances.values()].filter(i => i.machineId === id).length, 1)
  }
  assert.is(provider.calls.filter(c => c.startsWith('start')).length, 3)
  provisioner.stop()
})

test('a failing start is retried with back-off; the reason shows in status; a round that runs out starts again later', async () => {
  const provider = new ScriptedProvider()
  const { controller, provisioner, admin, run } = world(provider)
  provider.failNext = [0, 1, 2].map(() => new ProviderError('scripted', 'quota', 'instance quota of 0 reached'))
  admin('add-machine', {})
  provisioner.start()
  await run(30)
  const failed = tableGet(controller.model().machines, '0')!
  assert.is(failed.instance.status, 'provisioning error')
  assert.match(failed.instance.message, 'provider scripted: quota: instance quota of 0 reached')
  assert.is(provider.calls.length, 3, 'three attempts in the round')
  await run(80)
  const machine = tableGet(controller.model().machines, '0')!
  assert.is(machine.instance.status, 'running', 'a new round after retryRoundMs succeeds')
  assert.not.match(machine.instance.message, /quota/, 'the old reason is gone')
  provisioner.stop()
})

test('retry-provisioning: a machine whose first start failed for good (an "invalid" error, never retried alone) starts again on request', async () => {
  // Juju's retry-provisioning (cmd/juju/machine/retryprovisioning.go): only a machine in error; the provisioner starts it again.
  const provider = new ScriptedProvider()
  const { controller, provisioner, admin, run } = world(provider)
  provider.failNext = [new ProviderError('scripted', 'invalid', 'host 10.0.0.9 refused the connection')]
  admin('add-machine', {})
  assert.throws(() => admin('retry-provisioning', { machine: '0' }), /machine 0 is not in an error state \(pending\)/)
  provisioner.start()
  await run(30)
  assert.is(tableGet(controller.model().machines, '0')!.instance.status, 'provisioning error')
  await run(80)
  assert.is(tableGet(controller.model().machines, '0')!.instance.status, 'provisioning error', 'not retried by itself')
  assert.is(provider.calls.length, 1)
  admin('retry-provisioning', { machine: '0' })
  await run(20)
  const machine = tableGet(controller.model().machines, '0')!
  assert.is(machine.instance.status, 'running')
  assert.is(provider.calls.length, 2)
  assert.throws(() => admin('retry-provisioning', { machine: '0' }), /machine 0 is not in an error state \(running\)/)
  provisioner.stop()
})

test('unknown instances are stopped before pending machines start; an instance with the machine\'s token is adopted, not started again', async () => {
  const provider = new ScriptedProvider()
  const { controller, provisioner, admin, run } = world(provider)
  admin('add-machine', {})
  admin('add-machine', {})
  // As an earlier leader left things: machine 0 recorded its token and its start landed in
  // the cloud, but the instance was never recorded; a stray instance belongs to no machine.
  controller.run('set-machine-provisioning', { machine: '0', token: 'aa'.repeat(8), secret: 'bb'.repeat(16) }, { kind: 'controller', id: 'old' })
  provider.instances.set('scripted:old-0', { instanceId: 'scripted:old-0', machineId: '0', token: 'aa'.repeat(8), status: 'running', addresses: ['10.0.0.9'], message: '' })
  provider.instances.set('scripted:stray', { instanceId: 'scripted:stray', machineId: '7', token: 'cc'.repeat(8), status: 'running', addresses: [], message: '' })
  provisioner.start()
  await run(20)
  assert.is(provider.calls[0], 'stop scripted:stray')
  assert.not.ok(provider.calls.includes('start 0'), 'machine 0 was adopted, not started')
  assert.is(tableGet(controller.model().machines, '0')!.instanceId, 'scripted:old-0')
  assert.is(provisioner.counters.adopted, 1)
  assert.ok(provider.calls.includes('start 1'))
  assert.equal([...provider.instances.values()].map(i => i.machineId).sort(), ['0', '1'])
  provisioner.stop()
})

test('a dying machine with no units has its instance stopped and is marked dead (it leaves the model)', async () => {
  const provider = new ScriptedProvider()
  const { controller, provisioner, admin, run } = world(provider)
  admin('add-machine', {})
  provisioner.start()
  await run(20)
  const instanceId = tableGet(controller.model().machines, '0')!.instanceId!
  admin('remove-machine', { machine: '0' })
  await run(20)
  assert.ok(provider.calls.includes(`stop ${instanceId}`), provider.calls.join(', '))
  assert.is(tableGet(controller.model().machines, '0'), undefined)
  assert.is(provider.instances.size, 0)
  provisioner.stop()
})

// A pass for a change looks only at the machines it changed, and those with something left
// to do: a write that was refused is one, so it is made again by the next pass for any change,
// long before the reconcile tick (here 10 minutes away) would look at every machine.
test('a status write refused is made again by the next pass for a change of another machine', async () => {
  const provider = new ScriptedProvider()
  const { controller, provisioner, admin, run } = world(provider, 600_000)
  const submit = controller.submit.bind(controller)
  let refusing = true
  let refused = 0
  controller.submit = async command => {
    if (refusing && command.type === 'set-machine-status' && command.machine === '0' && command.instanceStatus === 'running') {
      refused++
      return { ok: false, index: 0, error: 'scripted: refused' }
    }
    return await submit(command)
  }
  admin('add-machine', {})
  provisioner.start()
  await run(20)
  assert.ok(refused >= 1, 'the running status was refused')
  assert.is(tableGet(controller.model().machines, '0')!.instanceId, provider.instances.keys().next().value, 'its instance is recorded')
  assert.is.not(tableGet(controller.model().machines, '0')!.instance.status, 'running')
  refusing = false
  admin('add-machine', {})
  await run(20)
  assert.is(tableGet(controller.model().machines, '0')!.instance.status, 'running', 'the pass for machine 1 wrote it')
  assert.is(tableGet(controller.model().machines, '1')!.instance.status, 'running')
  provisioner.stop()
})

test.run()
