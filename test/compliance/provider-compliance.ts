/**
 * The `Provider` contract (providers/provider-contract.ts), run against SimProvider, the local
 * provider and the manual provider, the last two both on the real host and on the
 * simulator (simulated processes, files and ssh hosts). The suite knows nothing of any of them: the harness
 * makes a fresh provider per test, says what bootstrap bytes it accepts, and lets that
 * provider's time pass.
 *
 * Harness interface (what an implementation's test file passes to `providerCompliance`):
 *
 * ```ts
 * export interface ProviderHarness {
 *   name: string
 *   // A fresh provider holding no instances; `close` stops whatever the test left (called even when it fails).
 *   create (): Promise<ProviderWorld>   // ProviderWorld = { provider: Provider, close (): Promise<void> }
 *   // Valid bootstrap bytes for `machineId` on this provider.
 *   bootstrap (machineId: string): Uint8Array
 *   // Constraints every start carries; default {}.
 *   constraints?: ProviderConstraints
 *   // Placement for `machineId`'s start (manual: `ssh:user@host`); default none.
 *   placement? (machineId: string): string | undefined
 *   // Lets time pass so in-flight starts and stops progress (advance a SimClock and drain
 *   // microtasks). Without it the suite sleeps 20 ms of real time between checks.
 *   settle? (): Promise<void>
 *   // Real (wall-clock) ms one start, or one stop taking effect, may take; each wait is bounded by it.
 *   timeoutMs: number
 *   // Spec fields that make a start fail, and the failure the provider must answer
 *   // (for example `{ overrides: { constraints: { arch: 's390x' } }, failure: 'invalid' }`).
 *   // Without it the error test is skipped.
 *   failingStart? (machineId: string): { overrides: Partial<InstanceSpec>, failure: ProviderFailure }
 * }
 * ```
 *
 * Each provider from `create()` must be able to hold two instances at once. Machine ids
 * and tokens are unique per test (`c<n>-…`), so a provider shared behind `create()` works
 * as long as `close()` stops what the test started.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import {
  ProviderError,
  type InstanceInfo,
  type InstanceSpec,
  type Provider,
  type ProviderConstraints,
  type ProviderFailure,
  type StartedInstance,
  type StartProgress
} from '../../providers/provider-contract.ts'

export interface ProviderWorld {
  readonly provider: Provider
  /** Stops whatever the test left running. */
  close (): Promise<void>
}

export interface ProviderHarness {
  name: string
  create (): Promise<ProviderWorld>
  bootstrap (machineId: string): Uint8Array
  constraints?: ProviderConstraints
  placement? (machineId: string): string | undefined
  settle? (): Promise<void>
  timeoutMs: number
  failingStart? (machineId: string): { overrides: Partial<InstanceSpec>, failure: ProviderFailure }
}

const failures: readonly ProviderFailure[] = ['transient', 'deployment-failed', 'quota', 'no-capacity', 'invalid']

interface Tracked<T> {
  settled: boolean
  value?: T
  error?: unknown
}

/** Follows a promise without awaiting it, so the suite can drive time until it settles. */
function track<T> (promise: Promise<T>): Tracked<T> {
  const tracked: Tracked<T> = { settled: false }
  promise.then(value => {
    tracked.settled = true
    tracked.value = value
  }, (error: unknown) => {
    tracked.settled = true
    tracked.error = error
  })
  return tracked
}

/** Checks the shape every provider failure has, and returns it. */
export function assertProviderError (error: unknown, failure?: ProviderFailure): ProviderError {
  assert.instance(error, Error, `expected a ProviderError, got ${String(error)}`)
  const err = error as ProviderError
  assert.is(err.name, 'ProviderError', err.message)
  assert.instance(err, ProviderError, err.message)
  assert.ok(failures.includes(err.failure), `unknown failure kind ${JSON.stringify(err.failure)}`)
  assert.is(err.retryable, err.failure !== 'invalid')
  if (failure !== undefined) assert.is(err.failure, failure, err.message)
  return err
}

export function providerCompliance (harness: ProviderHarness): void {
  const test = suite(`provider compliance: ${harness.name}`)
  const { timeoutMs } = harness
  let worlds: ProviderWorld[] = []
  let testNumber = 0
  let prefix = 'c0'

  test.before.each(() => {
    testNumber++
    prefix = `c${testNumber}`
  })
  test.after.each(async () => {
    const closing = worlds
    worlds = []
    for (const world of closing) await world.close()
  })

  const create = async (): Promise<Provider> => {
    const world = await harness.create()
    worlds.push(world)
    return world.provider
  }

  const pause = async (): Promise<void> => {
    if (harness.settle !== undefined) await harness.settle()
    else await new Promise(resolve => setTimeout(resolve, 20))
  }

  /** Lets time pass until every promise settles, failing after `timeoutMs` of real time. */
  const drive = async (what: string, ...tracked: Array<Tracked<unknown>>): Promise<void> => {
    const deadline = Date.now() + timeoutMs
    while (!tracked.every(t => t.settled)) {
      if (Date.now() > deadline) assert.unreachable(`${harness.name}: ${what} did not settle within ${timeoutMs} ms`)
      await pause()
    }
  }

  const settled = async <T>(what: string, promise: Promise<T>): Promise<T> => {
    const tracked = track(promise)
    await drive(what, tracked)
    if (tracked.error !== undefined) throw tracked.error
    return tracked.value as T
  }

  /** Lets time pass until `check` holds, failing after `timeoutMs` of real time. */
  const eventually = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + timeoutMs
    while (!await check()) {
      if (Date.now() > deadline) assert.unreachable(`${harness.name}: ${what} within ${timeoutMs} ms`)
      await pause()
    }
  }

  const spec = (machine: string, token = `${machine}-token`): InstanceSpec => {
    const machineId = `${prefix}-${machine}`
    const placement = harness.placement?.(machineId)
    return {
      machineId,
      token: `${prefix}-${token}`,
      bootstrap: harness.bootstrap(machineId),
      constraints: harness.constraints ?? {},
      ...(placement === undefined ? {} : { placement })
    }
  }

  const instancesOf = async (provider: Provider, machineId: string): Promise<InstanceInfo[]> =>
    (await settled('allInstances', provider.allInstances())).filter(info => info.machineId === machineId)

  const start = async (provider: Provider, instanceSpec: InstanceSpec): Promise<StartedInstance> =>
    await settled(`start of machine "${instanceSpec.machineId}"`, provider.startInstance(instanceSpec))

  test('a started instance is listed as running with its machine id and token', async () => {
    const provider = await create()
    const s = spec('0')
    const started = await start(provider, s)
    assert.type(started.instanceId, 'string')
    assert.ok(started.instanceId.length > 0, 'empty instance id')
    assert.ok(Array.isArray(started.addresses), 'addresses is not an array')
    for (const address of started.addresses) assert.type(address, 'string')
    const listed = await instancesOf(provider, s.machineId)
    assert.is(listed.length, 1, JSON.stringify(listed))
    const info = listed[0]!
    assert.is(info.instanceId, started.instanceId)
    assert.is(info.token, s.token)
    assert.is(info.status, 'running')
    assert.type(info.message, 'string')
  })

  test('a second start with the same token answers the same instance', async () => {
    const provider = await create()
    const s = spec('0')
    const first = await start(provider, s)
    const second = await start(provider, s)
    assert.is(second.instanceId, first.instanceId)
    const listed = await instancesOf(provider, s.machineId)
    assert.equal(listed.map(info => info.instanceId), [first.instanceId])
  })

  test('starts with the same token while the first is in flight share one instance', async () => {
    const provider = await create()
    const s = spec('0')
    const first = track(provider.startInstance(s))
    const second = track(provider.startInstance(s))
    await drive('two starts with one token', first, second)
    assert.is(first.error, undefined, String(first.error))
    assert.is(second.error, undefined, String(second.error))
    assert.is(second.value!.instanceId, first.value!.instanceId)
    const third = await start(provider, s)
    assert.is(third.instanceId, first.value!.instanceId)
    const listed = await instancesOf(provider, s.machineId)
    assert.equal(listed.map(info => info.instanceId), [first.value!.instanceId])
  })

  test('different machines get different instances', async () => {
    const provider = await create()
    const a = spec('0')
    const b = spec('1')
    const first = track(provider.startInstance(a))
    const second = track(provider.startInstance(b))
    await drive('starts of two machines', first, second)
    assert.is(first.error, undefined, String(first.error))
    assert.is(second.error, undefined, String(second.error))
    assert.is.not(first.value!.instanceId, second.value!.instanceId)
    const all = await settled('allInstances', provider.allInstances())
    const ours = all.filter(info => info.machineId === a.machineId || info.machineId === b.machineId)
    assert.equal(ours.map(info => [info.machineId, info.instanceId, info.status]).sort(), [
      [a.machineId, first.value!.instanceId, 'running'],
      [b.machineId, second.value!.instanceId, 'running']
    ].sort())
  })

  test('a stopped instance leaves allInstances', async () => {
    const provider = await create()
    const a = spec('0')
    const b = spec('1')
    const first = await start(provider, a)
    const second = await start(provider, b)
    await settled('stopInstances', provider.stopInstances([first.instanceId]))
    const listed = await instancesOf(provider, a.machineId)
    for (const info of listed) {
      assert.ok(info.status === 'stopping' || info.status === 'stopped', `instance "${info.instanceId}" is ${info.status} after stopInstances`)
    }
    await eventually(`instance "${first.instanceId}" still listed after it was stopped`,
      async () => (await instancesOf(provider, a.machineId)).length === 0)
    const others = await instancesOf(provider, b.machineId)
    assert.equal(others.map(info => [info.instanceId, info.status]), [[second.instanceId, 'running']])
  })

  test('stopping unknown ids, nothing, or the same instance twice is not an error', async () => {
    const provider = await create()
    await settled('stopInstances of nothing', provider.stopInstances([]))
    await settled('stopInstances of unknown ids', provider.stopInstances([`${prefix}-no-such-instance`, 'node-999999']))
    const s = spec('0')
    const started = await start(provider, s)
    await settled('first stop', provider.stopInstances([started.instanceId]))
    await settled('second stop', provider.stopInstances([started.instanceId]))
    await eventually(`instance "${started.instanceId}" still listed after it was stopped`,
      async () => (await instancesOf(provider, s.machineId)).length === 0)
    await settled('stop after it is gone', provider.stopInstances([started.instanceId]))
  })

  test('a machine started again with a new token after a stop gets a running instance', async () => {
    const provider = await create()
    const first = spec('0', 'first')
    const started = await start(provider, first)
    await settled('stopInstances', provider.stopInstances([started.instanceId]))
    await eventually(`instance "${started.instanceId}" still listed after it was stopped`,
      async () => (await instancesOf(provider, first.machineId)).length === 0)
    const again = await start(provider, spec('0', 'second'))
    const listed = await instancesOf(provider, first.machineId)
    assert.equal(listed.map(info => [info.instanceId, info.status]), [[again.instanceId, 'running']])
  })

  test('progress, when reported, comes in order and before the start resolves', async () => {
    const provider = await create()
    const progress: Array<{ event: StartProgress, afterResolve: boolean }> = []
    let resolved = false
    const promise = provider.startInstance(spec('0'), event => progress.push({ event, afterResolve: resolved }))
    const started = track(promise.then(value => {
      resolved = true
      return value
    }))
    await drive('start with progress', started)
    assert.is(started.error, undefined, String(started.error))
    const instanceId = started.value!.instanceId
    await pause()
    for (const { event, afterResolve } of progress) assert.not.ok(afterResolve, `progress ${JSON.stringify(event)} came after the start resolved`)
    const types = progress.map(p => p.event.type)
    const firstAllocated = types.indexOf('allocated')
    const firstDeploying = types.indexOf('deploying')
    if (firstDeploying >= 0) assert.ok(firstAllocated >= 0 && firstAllocated < firstDeploying, `progress out of order: ${types.join(', ')}`)
    for (const { event } of progress) {
      if (event.type === 'allocated') assert.is(event.instanceId, instanceId)
      else assert.type(event.message, 'string')
    }
  })

  test('a failing start rejects with a ProviderError and leaves nothing behind', async () => {
    if (harness.failingStart === undefined) return
    const provider = await create()
    const good = spec('0')
    const { overrides, failure } = harness.failingStart(good.machineId)
    const bad: InstanceSpec = { ...good, ...overrides }
    const attempt = track(provider.startInstance(bad))
    await drive('failing start', attempt)
    assert.ok(attempt.error !== undefined, `start of machine "${bad.machineId}" resolved; expected ${failure}`)
    assertProviderError(attempt.error, failure)
    await eventually(`failed start of machine "${bad.machineId}" still listed`,
      async () => (await instancesOf(provider, bad.machineId)).length === 0)
  })

  test.run()
}
