import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createActor, fromPromise, initialTransition, SimulatedClock, transition } from 'xstate'
import type { SnapshotFrom } from 'xstate'
import { machineMachine } from '../actors/machine/machine-machine.ts'
import { machineStatus } from '../actors/machine/machine-status.ts'
import { provisioningBackoff } from '../actors/machine/provisioning-backoff.ts'
import { machinePolicy } from '../actors/machine/machine-policy.ts'
import type {
  MachineEvent, MachineInput, StartInstanceInput, StartInstanceOutput, StopInstanceInput
} from '../actors/machine/machine-types.ts'
import { limits } from '../runtime/limits.ts'

type Snapshot = SnapshotFrom<typeof machineMachine>
type Actions = ReturnType<typeof transition<typeof machineMachine>>[1]

const baseInput: MachineInput = { machineId: '3', now: 1_000, seed: 42, constraints: { mem: '4G' } }

function start (input: Partial<MachineInput> = {}): Snapshot {
  return initialTransition(machineMachine, { ...baseInput, ...input })[0]
}

function step (snapshot: Snapshot, event: MachineEvent | { type: string, [key: string]: unknown }): [Snapshot, Actions] {
  return transition(machineMachine, snapshot, event as MachineEvent)
}

function run (snapshot: Snapshot, ...events: Array<MachineEvent | { type: string, [key: string]: unknown }>): Snapshot {
  return events.reduce<Snapshot>((current, event) => step(current, event)[0], snapshot)
}

const started = (output: StartInstanceOutput) => ({ type: 'xstate.done.actor.startInstance', output })
const startFailed = (error: unknown) => ({ type: 'xstate.error.actor.startInstance', error })
const stopped = () => ({ type: 'xstate.done.actor.stopInstance', output: undefined })
const stopFailed = (error: unknown) => ({ type: 'xstate.error.actor.stopInstance', error })
const instance: StartInstanceOutput = { instanceId: 'i-3', addresses: ['10.0.0.3'] }

function spawned (actions: Actions, src: string): { input: unknown } | undefined {
  const action = actions.find(a => a.type === 'xstate.spawnChild' && (a.params as { src?: unknown }).src === src)
  return action === undefined ? undefined : action.params as { input: unknown }
}

function scheduled (actions: Actions, delayName: string): number | undefined {
  const action = actions.find(a => a.type === 'xstate.raise' && String((a.params as { id?: unknown }).id).includes(`.${delayName}.`))
  return action === undefined ? undefined : (action.params as { delay: number }).delay
}

/** Action types as plain strings (the typed union omits some built-ins that do occur). */
function actionTypes (actions: Actions): string[] { return actions.map(a => a.type as string) }

const flush = async (): Promise<void> => { for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve)) }

// ---- pure transitions -------------------------------------------------------------

test('a new machine is pending with no instance, and provisioning invokes startInstance with its input', () => {
  const s0 = start({ bootstrapData: new Uint8Array([1, 2]) })
  assert.equal(s0.value, { lifecycle: 'pending', agent: 'agentUnknown' })
  assert.equal(machineStatus(s0), { agentStatus: 'pending', instanceStatus: 'pending', message: '', since: 1_000 })

  const [s1, actions] = step(s0, { type: 'machine.provision', at: 1_500 })
  assert.equal(s1.value, { lifecycle: { provisioning: 'allocating' }, agent: 'agentUnknown' })
  assert.equal(spawned(actions, 'startInstance')?.input,
    { machineId: '3', constraints: { mem: '4G' }, bootstrapData: new Uint8Array([1, 2]), attempt: 1 })
  assert.equal(machineStatus(s1), { agentStatus: 'pending', instanceStatus: 'allocating', message: 'starting', since: 1_500 })
})

test('provider progress moves allocating to deploying without restarting startInstance', () => {
  const s1 = run(start(), { type: 'machine.provision' })
  const [s2, actions] = step(s1, { type: 'instance.allocated', instanceId: 'node-7' })
  assert.equal(s2.value, { lifecycle: { provisioning: 'deploying' }, agent: 'agentUnknown' })
  assert.is(actionTypes(actions).some(type => type === 'xstate.spawnChild' || type === 'xstate.stopChild'), false)
  assert.is(s2.context.instanceState, 'allocated')
  assert.is(s2.context.instanceId, 'node-7')
  const s3 = run(s2, { type: 'instance.deploying', message: 'Deploying: installing OS' })
  assert.is(machineStatus(s3).message, 'Deploying: installing OS')
  assert.is(machineStatus(s3).instanceStatus, 'allocating')
})

test('startInstance resolving gives a running instance that waits for its agent, then started', () => {
  const s1 = run(start(), { type: 'machine.provision' }, started(instance))
  assert.equal(s1.value, { lifecycle: 'provisioned', agent: 'agentUnknown' })
  assert.is(s1.context.instanceId, 'i-3')
  assert.equal(s1.context.addresses, ['10.0.0.3'])
  assert.equal(machineStatus(s1), { agentStatus: 'pending', instanceStatus: 'running', message: 'running' })

  const s2 = run(s1, { type: 'agent.started', at: 9_000 })
  assert.equal(s2.value, { lifecycle: 'started', agent: 'agentAlive' })
  assert.equal(machineStatus(s2), { agentStatus: 'started', instanceStatus: 'running', message: '', since: 9_000 })
})

test('an agent that reports before startInstance resolves is remembered', () => {
  const s1 = run(start(), { type: 'machine.provision' }, { type: 'agent.started', at: 5_000 })
  assert.equal(s1.value, { lifecycle: { provisioning: 'allocating' }, agent: 'agentAlive' })
  const s2 = run(s1, started(instance))
  assert.equal(s2.value, { lifecycle: 'started', agent: 'agentAlive' })
})

test('a failed start backs off by the jittered delay drawn from the PRNG state in context', () => {
  const s1 = run(start(), { type: 'machine.provision' })
  const [s2, actions] = step(s1, startFailed(new Error('quota exceeded')))
  const expected = provisioningBackoff(s1.context.policy, 1, s1.context.rngState)
  assert.equal(s2.value, { lifecycle: 'provisioningBackoff', agent: 'agentUnknown' })
  assert.is(scheduled(actions, 'retryDelay'), expected.delayMs)
  assert.ok(expected.delayMs >= 10_000 && expected.delayMs <= 12_000, `first delay ${expected.delayMs} within [10s, 12s]`)
  assert.is(s2.context.rngState, expected.rngState)
  assert.equal(s2.context.lastFailure, { operation: 'startInstance', reason: 'quota exceeded', attempt: 1 })
  assert.equal(machineStatus(s2), {
    agentStatus: 'pending',
    instanceStatus: 'allocating',
    message: `failed to start machine 3 (quota exceeded), retrying in ${expected.delayMs / 1000}s (9 more attempts)`
  })

  // The delayed event re-enters provisioning for attempt 2, whose status keeps the reason.
  const [s3, retryActions] = step(s2, { type: 'xstate.after.retryDelay.machine.lifecycle.provisioningBackoff' })
  assert.equal(s3.value, { lifecycle: { provisioning: 'allocating' }, agent: 'agentUnknown' })
  assert.is((spawned(retryActions, 'startInstance')?.input as StartInstanceInput).attempt, 2)
  assert.is(machineStatus(s3).message, 'starting (attempt 2 of 10; last failure: quota exceeded)')
})

test('back-off doubles from the minimum, caps at the maximum, and keeps jitter within bounds', () => {
  const policy = machinePolicy()
  const noJitter = machinePolicy({ retryJitterFraction: 0 })
  assert.equal([1, 2, 3, 4, 5, 6, 7, 10].map(n => provisioningBackoff(noJitter, n, 7).delayMs),
    [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000])
  let rng = 1
  for (let i = 0; i < 2_000; i++) {
    const failures = 1 + (i % 10)
    const nominal = Math.min(300_000, 10_000 * 2 ** (failures - 1))
    const { delayMs, rngState } = provisioningBackoff(policy, failures, rng)
    assert.ok(delayMs >= Math.max(10_000, nominal * 0.8) && delayMs <= Math.min(300_000, nominal * 1.2),
      `delay ${delayMs} after ${failures} failures outside its jitter band`)
    assert.ok(Number.isInteger(delayMs))
    assert.is.not(rngState, rng)
    rng = rngState
  }
  // Same state, same delay: the draw is part of the snapshot, so a replay agrees.
  assert.equal(provisioningBackoff(policy, 3, 99), provisioningBackoff(policy, 3, 99))
  assert.is.not(provisioningBackoff(policy, 3, 99).delayMs, provisioningBackoff(policy, 3, 100).delayMs)
})

test('retries exhausted: provisioning error with the reason until machine.retryProvisioning', () => {
  let s = run(start({ policy: { provisioningAttemptsMax: 3 } }), { type: 'machine.provision' })
  for (let attempt = 1; attempt < 3; attempt++) {
    s = run(s, startFailed(new Error(`no capacity ${attempt}`)), { type: 'xstate.after.retryDelay.machine.lifecycle.provisioningBackoff' })
  }
  assert.is(s.context.startAttempt, 3)
  const [failed, actions] = step(s, startFailed(new Error('no capacity 3')))
  assert.equal(failed.value, { lifecycle: 'provisioningError', agent: 'agentUnknown' })
  assert.is(scheduled(actions, 'retryDelay'), undefined)
  assert.equal(machineStatus(failed), {
    agentStatus: 'error',
    instanceStatus: 'provisioning error',
    message: 'failed to start machine 3 after 3 attempts: no capacity 3'
  })
  // Nothing but a request moves it on.
  assert.equal(run(failed, { type: 'xstate.after.retryDelay.machine.lifecycle.provisioningBackoff' }).value, failed.value)

  const [retried, retryActions] = step(failed, { type: 'machine.retryProvisioning', at: 50_000 })
  assert.equal(retried.value, { lifecycle: { provisioning: 'allocating' }, agent: 'agentUnknown' })
  assert.is((spawned(retryActions, 'startInstance')?.input as StartInstanceInput).attempt, 1)
  assert.equal(retried.context.lastFailure?.reason, 'no capacity 3')
})

test('a failure no retry can fix goes straight to provisioning error', () => {
  const error = Object.assign(new Error('machine: actor "startInstance": not provided'), { name: 'NotProvidedError' })
  const s = run(start(), { type: 'machine.provision' }, startFailed(error))
  assert.equal(s.value, { lifecycle: 'provisioningError', agent: 'agentUnknown' })
  assert.is(s.context.startAttempt, 1)
})

test('destroying a machine that was never provisioned makes it dead at once, then removed ends the actor', () => {
  const [s1, actions] = step(start(), { type: 'machine.destroy', at: 2_000 })
  assert.equal(s1.value, { lifecycle: 'dead', agent: 'agentGone' })
  assert.is(spawned(actions, 'stopInstance'), undefined)
  assert.is(s1.context.life, 'dead')
  assert.equal(machineStatus(s1), { agentStatus: 'stopped', instanceStatus: 'pending', message: '', since: 2_000 })
  const s2 = run(s1, { type: 'machine.removed' })
  assert.equal(s2.value, { lifecycle: 'removed', agent: 'agentGone' })
  assert.is(s2.status, 'done')
})

test('a dying machine waits for its units, then stops its instance, then is dead', () => {
  const running = run(start({ unitCount: 2 }), { type: 'machine.provision' }, started(instance), { type: 'agent.started', at: 3_000 })
  const dying = run(running, { type: 'machine.destroy' })
  assert.equal(dying.value, { lifecycle: { dying: 'waitingForUnits' }, agent: 'agentAlive' })
  assert.is(machineStatus(dying).message, 'waiting for 2 units to be removed')
  assert.is(machineStatus(dying).agentStatus, 'started')

  const oneLeft = run(dying, { type: 'machine.unitsChanged', count: 1 })
  assert.equal(oneLeft.value, dying.value)
  assert.is(machineStatus(oneLeft).message, 'waiting for 1 unit to be removed')

  const [stopping, actions] = step(oneLeft, { type: 'machine.unitsChanged', count: 0 })
  assert.equal(stopping.value, { lifecycle: { dying: 'stopping' }, agent: 'agentAlive' })
  assert.equal(spawned(actions, 'stopInstance')?.input, { machineId: '3', instanceId: 'i-3', attempt: 1 })

  const dead = run(stopping, stopped())
  assert.equal(dead.value, { lifecycle: 'dead', agent: 'agentGone' })
  assert.is(machineStatus(dead).instanceStatus, 'stopped')
})

test('a destroy while a start is in flight is deferred until the start settles', () => {
  const s1 = run(start(), { type: 'machine.provision' })
  const [deferred, actions] = step(s1, { type: 'machine.destroy' })
  assert.equal(deferred.value, s1.value, 'the start keeps running')
  assert.is(actionTypes(actions).includes('xstate.stopChild'), false)
  assert.match(machineStatus(deferred).message, 'destroy requested')

  // The instance came up after all: stop it.
  const [afterStart, stopActions] = step(deferred, started(instance))
  assert.equal(afterStart.value, { lifecycle: { dying: 'stopping' }, agent: 'agentUnknown' })
  assert.is((spawned(stopActions, 'stopInstance')?.input as StopInstanceInput).instanceId, 'i-3')

  // It failed: nothing to stop, no retry.
  const [afterFailure, failActions] = step(deferred, startFailed(new Error('quota exceeded')))
  assert.equal(afterFailure.value, { lifecycle: 'dead', agent: 'agentGone' })
  assert.is(scheduled(failActions, 'retryDelay'), undefined)
})

test('force destroy does not wait for units', () => {
  const running = run(start({ unitCount: 3 }), { type: 'machine.provision' }, started(instance))
  const dying = run(running, { type: 'machine.destroy' })
  assert.equal(dying.value, { lifecycle: { dying: 'waitingForUnits' }, agent: 'agentUnknown' })
  const [forced, actions] = step(dying, { type: 'machine.forceDestroy' })
  assert.equal(forced.value, { lifecycle: { dying: 'stopping' }, agent: 'agentUnknown' })
  assert.ok(spawned(actions, 'stopInstance'))
  assert.is(forced.context.force, true)
})

test('stop failures back off, then wait in error for retryStop; force gives up and records the instance as abandoned', () => {
  let s = run(start({ policy: { stopAttemptsMax: 2 } }), { type: 'machine.provision' }, started(instance), { type: 'machine.destroy' })
  const [backingOff, actions] = step(s, stopFailed(new Error('api timeout')))
  assert.equal(backingOff.value, { lifecycle: { dying: 'stopBackoff' }, agent: 'agentUnknown' })
  assert.is(scheduled(actions, 'retryDelay'), provisioningBackoff(s.context.policy, 1, s.context.rngState).delayMs)
  assert.match(machineStatus(backingOff).message, /^failed to stop instance "i-3" \(api timeout\), retrying in [\d.]+s \(1 more attempt\)$/)

  s = run(backingOff, { type: 'xstate.after.retryDelay.machine.lifecycle.dying.stopBackoff' })
  assert.equal(s.value, { lifecycle: { dying: 'stopping' }, agent: 'agentUnknown' })
  assert.is(s.context.stopAttempt, 2)
  const failed = run(s, stopFailed(new Error('api timeout')))
  assert.equal(failed.value, { lifecycle: { dying: 'stopFailed' }, agent: 'agentUnknown' })
  assert.equal(machineStatus(failed), {
    agentStatus: 'error',
    instanceStatus: 'running',
    message: 'cannot stop instance "i-3" after 2 attempts: api timeout'
  })

  const [retrying, retryActions] = step(failed, { type: 'machine.retryStop' })
  assert.equal(retrying.value, { lifecycle: { dying: 'stopping' }, agent: 'agentUnknown' })
  assert.is((spawned(retryActions, 'stopInstance')?.input as StopInstanceInput).attempt, 1)

  const abandoned = run(failed, { type: 'machine.forceDestroy' })
  assert.equal(abandoned.value, { lifecycle: 'dead', agent: 'agentGone' })
  assert.is(abandoned.context.instanceState, 'abandoned')
  assert.is(machineStatus(abandoned).message, 'instance "i-3" may still be running: cannot stop it: api timeout')
})

test('heartbeats arm the down timer from an absolute deadline; machine.resumed re-arms what remains', () => {
  const running = run(start(), { type: 'machine.provision' }, started(instance))
  const [alive, actions] = step(running, { type: 'agent.started', at: 10_000 })
  assert.is(scheduled(actions, 'agentDownDelay'), limits.machineAgentDownAfterMs)
  assert.is(alive.context.agentDownAt, 10_000 + limits.machineAgentDownAfterMs)

  const [beat, beatActions] = step(alive, { type: 'agent.heartbeat', at: 30_000 })
  assert.is(scheduled(beatActions, 'agentDownDelay'), limits.machineAgentDownAfterMs)
  assert.ok(actionTypes(beatActions).includes('xstate.cancel'), 'the previous timer is cancelled')
  assert.is(beat.context.agentDownAt, 90_000)

  // As after a restore from a persisted snapshot 50 s later: 40 s remain.
  const [, resumeActions] = step(beat, { type: 'machine.resumed', at: 50_000 })
  assert.is(scheduled(resumeActions, 'agentDownDelay'), 40_000)
})

test('a late, out-of-order heartbeat never pulls the down deadline back', () => {
  const alive = run(start(), { type: 'machine.provision' }, started(instance), { type: 'agent.started', at: 10_000 },
    { type: 'agent.heartbeat', at: 30_000 })
  const stale = run(alive, { type: 'agent.heartbeat', at: 20_000 })
  assert.is(stale.context.agentLastHeardAt, 30_000)
  assert.is(stale.context.agentDownAt, 90_000)
})

test('an agent that says it is stopping shows stopped, not down, and has no down timer', () => {
  const alive = run(start(), { type: 'machine.provision' }, started(instance), { type: 'agent.started', at: 10_000 })
  const [stopping, actions] = step(alive, { type: 'agent.stopped', at: 12_000 })
  assert.equal(stopping.value, { lifecycle: 'started', agent: 'agentStopped' })
  assert.is(scheduled(actions, 'agentDownDelay'), undefined)
  assert.equal(machineStatus(stopping), { agentStatus: 'stopped', instanceStatus: 'running', message: 'agent stopped', since: 12_000 })
  assert.equal(run(stopping, { type: 'agent.started', at: 15_000 }).value, { lifecycle: 'started', agent: 'agentAlive' })
})

test('machine.resumed restarts a back-off wait in full and leaves other states alone', () => {
  const backingOff = run(start(), { type: 'machine.provision' }, startFailed(new Error('quota exceeded')))
  const [resumed, actions] = step(backingOff, { type: 'machine.resumed', at: 99_000 })
  assert.equal(resumed.value, backingOff.value)
  assert.is(scheduled(actions, 'retryDelay'), backingOff.context.retryDelayMs)
  assert.is(resumed.context.startAttempt, 1, 'no attempt is counted by resuming')
  assert.is(resumed.context.lifecycleSince, backingOff.context.lifecycleSince, 'resuming does not change what the status says')
  assert.is(resumed.context.observedAt, 99_000)

  const [, pendingActions] = step(start(), { type: 'machine.resumed', at: 99_000 })
  assert.equal(pendingActions.filter(a => a.type === 'xstate.raise'), [])
})

test('the default policy gives up after limits.provisioningAttemptsMax attempts', () => {
  let s = run(start(), { type: 'machine.provision' })
  const delays: number[] = []
  for (;;) {
    const [next, actions] = step(s, startFailed(new Error('capacity')))
    const delay = scheduled(actions, 'retryDelay')
    if (delay === undefined) { s = next; break }
    delays.push(delay)
    s = run(next, { type: 'xstate.after.retryDelay.machine.lifecycle.provisioningBackoff' })
  }
  assert.is(s.context.startAttempt, limits.provisioningAttemptsMax)
  assert.is(delays.length, limits.provisioningAttemptsMax - 1)
  assert.ok(delays.every(d => d >= limits.provisioningRetryDelayMsMin && d <= limits.provisioningRetryDelayMsMax))
  assert.equal(s.value, { lifecycle: 'provisioningError', agent: 'agentUnknown' })
})

test('a machine that arrives with its instance skips provisioning', () => {
  const s = start({ instance: { instanceId: 'manual:10.0.0.9', addresses: ['10.0.0.9'] } })
  assert.equal(s.value, { lifecycle: 'provisioned', agent: 'agentUnknown' })
  assert.is(machineStatus(s).instanceStatus, 'running')
})

test('bad input is refused with a message naming the machine', () => {
  const refusal = (input: Partial<MachineInput>): string => {
    const [snapshot] = initialTransition(machineMachine, { ...baseInput, ...input })
    assert.is(snapshot.status, 'error')
    return (snapshot.error as Error).message
  }
  assert.is(refusal({ machineId: 'web/0' }), 'machine: expected a machine id like "3" or "0/lxd/1", got "web/0"')
  assert.is(refusal({ unitCount: -1 }), 'machine "3": expected a unit count >= 0, got -1')
  assert.match(refusal({ policy: { provisioningAttemptsMax: limits.provisioningAttemptsMax + 1 } }), 'provisioningAttemptsMax must be in [1, 10]')
})

// ---- actors on a simulated clock --------------------------------------------------

function createMachine (input: Partial<MachineInput>, startInstance: (input: StartInstanceInput) => Promise<StartInstanceOutput>,
  stopInstance: (input: StopInstanceInput) => Promise<void> = async () => {}) {
  const clock = new SimulatedClock()
  clock.set(baseInput.now)
  const logic = machineMachine.provide({
    actors: {
      startInstance: fromPromise<StartInstanceOutput, StartInstanceInput>(async ({ input }) => await startInstance(input)),
      stopInstance: fromPromise<void, StopInstanceInput>(async ({ input }) => { await stopInstance(input) })
    }
  })
  const actor = createActor(logic, { clock, input: { ...baseInput, ...input } })
  return { clock, actor: actor.start() }
}

test('actor: retries land exactly on the jittered back-off delays', async () => {
  const attempts: Array<{ attempt: number, at: number }> = []
  const { clock, actor } = createMachine({}, async input => {
    attempts.push({ attempt: input.attempt, at: clock.now() })
    if (input.attempt < 3) throw new Error('capacity')
    return instance
  })
  const policy = actor.getSnapshot().context.policy
  const first = provisioningBackoff(policy, 1, actor.getSnapshot().context.rngState)
  const second = provisioningBackoff(policy, 2, first.rngState)

  actor.send({ type: 'machine.provision', at: clock.now() })
  await flush()
  assert.equal(actor.getSnapshot().value, { lifecycle: 'provisioningBackoff', agent: 'agentUnknown' })
  clock.increment(first.delayMs - 1)
  await flush()
  assert.is(attempts.length, 1, 'not retried one millisecond early')
  clock.increment(1)
  await flush()
  assert.is(attempts.length, 2)
  clock.increment(second.delayMs)
  await flush()
  assert.equal(attempts.map(a => a.at - baseInput.now), [0, first.delayMs, first.delayMs + second.delayMs])
  assert.ok(second.delayMs >= 16_000 && second.delayMs <= 24_000, `second delay ${second.delayMs} within 20s ± 20%`)
  assert.equal(actor.getSnapshot().value, { lifecycle: 'provisioned', agent: 'agentUnknown' })
  actor.stop()
})

test('actor: retries exhausted stay in error with the reason until retryProvisioning succeeds', async () => {
  let failing = true
  let calls = 0
  const { clock, actor } = createMachine({ policy: { provisioningAttemptsMax: 2 } }, async () => {
    calls++
    if (failing) throw new Error('no matching image')
    return instance
  })
  actor.send({ type: 'machine.provision' })
  await flush()
  clock.increment(limits.provisioningRetryDelayMsMax)
  await flush()
  clock.increment(limits.provisioningRetryDelayMsMax * 10)
  await flush()
  assert.is(calls, 2)
  assert.equal(machineStatus(actor.getSnapshot()), {
    agentStatus: 'error',
    instanceStatus: 'provisioning error',
    message: 'failed to start machine 3 after 2 attempts: no matching image'
  })
  failing = false
  actor.send({ type: 'machine.retryProvisioning' })
  await flush()
  assert.is(calls, 3)
  assert.equal(actor.getSnapshot().value, { lifecycle: 'provisioned', agent: 'agentUnknown' })
  actor.stop()
})

test('actor: the agent shows down exactly machineAgentDownAfterMs after it was last heard, and recovers on a heartbeat', async () => {
  const { clock, actor } = createMachine({}, async () => instance)
  actor.send({ type: 'machine.provision' })
  await flush()
  actor.send({ type: 'agent.started', at: clock.now() })
  clock.increment(20_000)
  actor.send({ type: 'agent.heartbeat', at: clock.now() })
  const lastHeard = clock.now()
  clock.increment(limits.machineAgentDownAfterMs - 1)
  assert.is(machineStatus(actor.getSnapshot()).agentStatus, 'started')
  clock.increment(1)
  assert.equal(actor.getSnapshot().value, { lifecycle: 'started', agent: 'agentDown' })
  assert.equal(machineStatus(actor.getSnapshot()), {
    agentStatus: 'down', instanceStatus: 'running', message: 'agent not heard from for 1m0s', since: lastHeard + limits.machineAgentDownAfterMs
  })
  clock.increment(5_000)
  actor.send({ type: 'agent.heartbeat', at: clock.now() })
  assert.equal(machineStatus(actor.getSnapshot()), { agentStatus: 'started', instanceStatus: 'running', message: '', since: clock.now() })
  actor.stop()
})

test('actor: restored from a persisted snapshot, machine.resumed re-arms the down deadline for the time left', async () => {
  const { clock, actor } = createMachine({}, async () => instance)
  actor.send({ type: 'machine.provision' })
  await flush()
  actor.send({ type: 'agent.started', at: clock.now() })
  clock.increment(20_000)
  const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()))
  actor.stop()

  // The agent restarts 10 s later on a fresh clock at the same time base.
  const clock2 = new SimulatedClock()
  clock2.set(clock.now() + 10_000)
  const restored = createActor(machineMachine, { clock: clock2, snapshot: persisted, input: baseInput }).start()
  restored.send({ type: 'machine.resumed', at: clock2.now() })
  clock2.increment(limits.machineAgentDownAfterMs - 30_000 - 1)
  assert.is(machineStatus(restored.getSnapshot()).agentStatus, 'started')
  clock2.increment(1)
  assert.is(machineStatus(restored.getSnapshot()).agentStatus, 'down')
  restored.stop()
})

test('actor: a dying machine waits for its units before stopping the instance, then completes on removal', async () => {
  const stops: StopInstanceInput[] = []
  const { actor } = createMachine({ unitCount: 1 }, async () => instance, async input => { stops.push(input) })
  actor.send({ type: 'machine.provision' })
  await flush()
  actor.send({ type: 'agent.started', at: 2_000 })
  actor.send({ type: 'machine.destroy' })
  await flush()
  assert.equal(stops, [])
  assert.equal(actor.getSnapshot().value, { lifecycle: { dying: 'waitingForUnits' }, agent: 'agentAlive' })
  actor.send({ type: 'machine.unitsChanged', count: 0 })
  await flush()
  assert.equal(stops, [{ machineId: '3', instanceId: 'i-3', attempt: 1 }])
  assert.equal(actor.getSnapshot().value, { lifecycle: 'dead', agent: 'agentGone' })
  actor.send({ type: 'machine.removed' })
  assert.is(actor.getSnapshot().status, 'done')
})

test('actor: destroyed before provisioning, it is dead without touching the provider', async () => {
  let providerCalls = 0
  const { actor } = createMachine({}, async () => { providerCalls++; return instance }, async () => { providerCalls++ })
  actor.send({ type: 'machine.destroy' })
  await flush()
  assert.is(providerCalls, 0)
  assert.equal(machineStatus(actor.getSnapshot()).agentStatus, 'stopped')
  actor.send({ type: 'machine.provision' })
  await flush()
  assert.is(providerCalls, 0, 'a dead machine is never provisioned')
  actor.stop()
})

test('actor: without provided side effects the machine says what is missing instead of retrying', async () => {
  const clock = new SimulatedClock()
  const actor = createActor(machineMachine, { clock, input: baseInput }).start()
  actor.send({ type: 'machine.provision' })
  await flush()
  const status = machineStatus(actor.getSnapshot())
  assert.is(status.instanceStatus, 'provisioning error')
  assert.match(status.message, 'machine: actor "startInstance": not provided')
  actor.stop()
})

test.run()
