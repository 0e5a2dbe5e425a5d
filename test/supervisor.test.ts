/** Supervisor: restart back-off, intensity escalation, fatal errors and stopping, on a SimClock. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { limits } from '../runtime/limits.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import { FatalError, Supervisor, type SupervisorChild, type SupervisorInit, type Worker } from '../runtime/supervisor.ts'
import { SimClock } from '../sim/sim-clock.ts'

const test = suite('supervisor')

/** Lets every promise callback queued so far run; the supervisor never needs real time. */
async function settle (): Promise<void> {
  await new Promise<void>(resolve => setImmediate(resolve))
}

interface TestWorker extends Worker {
  fail (err: unknown): void
  complete (): void
  stopped: boolean
}

function testWorker (events: string[] = [], name = 'w', stopHangs = false): TestWorker {
  let resolve!: () => void
  let reject!: (err: unknown) => void
  const done = new Promise<void>((res, rej) => { resolve = res; reject = rej })
  const worker: TestWorker = {
    done,
    stopped: false,
    fail: err => reject(err),
    complete: () => resolve(),
    stop: async () => {
      events.push(`stop ${name}`)
      worker.stopped = true
      if (stopHangs) return await new Promise<void>(() => {})
      resolve()
    }
  }
  return worker
}

/** A child whose incarnations are kept, so a test can fail or complete the latest one. */
function recordingChild (name: string, events: string[] = [], extra: Partial<SupervisorChild> = {}): SupervisorChild & { workers: TestWorker[] } {
  const workers: TestWorker[] = []
  return {
    name,
    workers,
    start: () => {
      const w = testWorker(events, name)
      workers.push(w)
      events.push(`start ${name}`)
      return w
    },
    ...extra
  }
}

function setup (children: SupervisorChild[], policy: Partial<SupervisorInit> = {}) {
  const clock = new SimClock()
  const logger = createMemoryLogger('agent')
  const supervisor = new Supervisor({ clock, logger }, { name: 'machine-0', children, ...policy })
  let outcome: { ok: true } | { ok: false, err: unknown } | undefined
  supervisor.done.then(() => { outcome = { ok: true } }, err => { outcome = { ok: false, err } })
  return { clock, logger, supervisor, outcome: () => outcome }
}

test('a failed worker restarts after the restart delay', async () => {
  const child = recordingChild('uniter')
  const { clock, supervisor } = setup([child])
  supervisor.start()
  assert.is(supervisor.status().uniter!.state, 'running')
  child.workers[0]!.fail(new Error('hook socket closed'))
  await settle()
  const status = supervisor.status().uniter!
  assert.equal(status, { state: 'backing-off', restarts: 1, lastError: 'hook socket closed', nextStartAt: limits.supervisorRestartDelayMsMin })
  clock.advance(limits.supervisorRestartDelayMsMin - 1)
  assert.is(child.workers.length, 1)
  clock.advance(1)
  assert.is(child.workers.length, 2)
  assert.is(supervisor.status().uniter!.state, 'running')
  assert.is(supervisor.status().uniter!.nextStartAt, undefined)
})

test('back-off doubles per consecutive failure up to the cap', async () => {
  const child = recordingChild('uniter')
  const { clock, supervisor } = setup([child], { restartDelayMs: 1_000, restartDelayMsMax: 5_000, restartIntensityMax: 100 })
  supervisor.start()
  const delays: number[] = []
  for (let i = 0; i < 6; i++) {
    child.workers.at(-1)!.fail(new Error(`crash ${i}`))
    await settle()
    const { nextStartAt } = supervisor.status().uniter!
    delays.push(nextStartAt! - clock.now())
    clock.advanceTo(nextStartAt!)
    assert.is(supervisor.status().uniter!.state, 'running')
  }
  assert.equal(delays, [1_000, 2_000, 4_000, 5_000, 5_000, 5_000])
  assert.is(supervisor.status().uniter!.restarts, 6)
})

test('a worker that ran healthy long enough starts its back-off again from the first delay', async () => {
  const child = recordingChild('uniter')
  const { clock, supervisor } = setup([child], { restartDelayMs: 1_000, healthyAfterMs: 60_000, restartIntensityMax: 100 })
  supervisor.start()
  for (let i = 0; i < 3; i++) {
    child.workers.at(-1)!.fail(new Error('crash'))
    await settle()
    clock.advanceTo(supervisor.status().uniter!.nextStartAt!)
  }
  // Three quick failures: the next delay would be 8 s. Just short of healthy it still is.
  clock.advance(59_999)
  child.workers.at(-1)!.fail(new Error('crash'))
  await settle()
  assert.is(supervisor.status().uniter!.nextStartAt! - clock.now(), 8_000)
  clock.advanceTo(supervisor.status().uniter!.nextStartAt!)
  clock.advance(60_000)
  child.workers.at(-1)!.fail(new Error('crash after a healthy minute'))
  await settle()
  assert.is(supervisor.status().uniter!.nextStartAt! - clock.now(), 1_000)
})

test('more restarts than the intensity allows within the window escalate with a one-line reason', async () => {
  const events: string[] = []
  const other = recordingChild('api-caller', events)
  const child = recordingChild('uniter', events)
  const { clock, supervisor, logger, outcome } = setup([other, child], { restartDelayMs: 1_000, restartIntensityMax: 3, restartIntensityWindowMs: 60_000 })
  supervisor.start()
  for (let i = 0; i < 3; i++) {
    child.workers.at(-1)!.fail(new Error(`crash ${i}`))
    await settle()
    clock.advanceTo(supervisor.status().uniter!.nextStartAt!)
  }
  assert.is(supervisor.status().uniter!.restarts, 3)
  assert.is(outcome(), undefined)
  child.workers.at(-1)!.fail(new Error('permission denied\n  at /var/lib/juju'))
  await settle()
  const result = outcome()
  assert.ok(result !== undefined && !result.ok, 'done rejected')
  const err = (result as { err: Error }).err
  assert.is(err.name, 'RestartIntensityExceededError')
  assert.is(err.message, 'supervisor "machine-0": worker "uniter" failed after more than 3 restarts within 60000 ms; last error: permission denied at /var/lib/juju')
  assert.is(supervisor.state, 'failed')
  assert.is(supervisor.status().uniter!.state, 'failed')
  assert.is(supervisor.status()['api-caller']!.state, 'stopped')
  assert.ok(other.workers[0]!.stopped)
  assert.ok(logger.records.some(r => r.level === 'error' && r.message === err.message))
  assert.is(clock.pendingCount, 0)
})

test('restarts older than the window do not count towards the intensity', async () => {
  const child = recordingChild('uniter')
  const { clock, supervisor, outcome } = setup([child], { restartDelayMs: 1_000, restartDelayMsMax: 1_000, restartIntensityMax: 2, restartIntensityWindowMs: 10_000 })
  supervisor.start()
  for (let i = 0; i < 10; i++) {
    child.workers.at(-1)!.fail(new Error('crash'))
    await settle()
    clock.advanceTo(supervisor.status().uniter!.nextStartAt!)
    clock.advance(5_000) // two restarts per 12 s: never more than 2 in 10 s
  }
  assert.is(outcome(), undefined)
  assert.is(supervisor.status().uniter!.restarts, 10)
})

test('a transient worker that exceeds the intensity is given up without escalating', async () => {
  const child = recordingChild('metrics', [], { transient: true })
  const core = recordingChild('uniter')
  const { clock, supervisor, outcome } = setup([core, child], { restartDelayMs: 1_000, restartIntensityMax: 1 })
  supervisor.start()
  child.workers[0]!.fail(new Error('crash'))
  await settle()
  clock.advanceTo(supervisor.status().metrics!.nextStartAt!)
  child.workers[1]!.fail(new Error('crash again'))
  await settle()
  assert.is(supervisor.status().metrics!.state, 'failed')
  assert.is(supervisor.status().metrics!.lastError, 'crash again')
  assert.is(supervisor.status().uniter!.state, 'running')
  assert.is(supervisor.state, 'running')
  assert.is(outcome(), undefined)
  assert.is(clock.pendingCount, 0)
})

test('a fatal error stops every worker at once and rejects done with that error', async () => {
  const events: string[] = []
  const a = recordingChild('a', events)
  const b = recordingChild('b', events)
  const c = recordingChild('c', events)
  const { clock, supervisor, outcome } = setup([a, b, c])
  supervisor.start()
  a.workers[0]!.fail(new Error('crash')) // a is backing off when the fatal error comes
  await settle()
  const fatal = new FatalError('agent "machine-0": credentials revoked; run juju add-credential')
  b.workers[0]!.fail(fatal)
  await settle()
  const result = outcome()
  assert.ok(result !== undefined && !result.ok)
  assert.is((result as { err: unknown }).err, fatal)
  assert.equal(events, ['start a', 'start b', 'start c', 'stop c'])
  assert.equal(Object.fromEntries(Object.entries(supervisor.status()).map(([k, v]) => [k, v.state])), { a: 'stopped', b: 'failed', c: 'stopped' })
  assert.is(supervisor.status().b!.lastError, fatal.message)
  assert.is(clock.pendingCount, 0)
  clock.advance(1_000_000)
  assert.is(a.workers.length, 1, 'no restart after a fatal error')
})

test('a start that throws a fatal error stops the supervisor before later workers start', async () => {
  const later = recordingChild('later')
  const { supervisor, outcome } = setup([{ name: 'config', start: () => { throw new FatalError('config "agent.conf": missing controller address') } }, later])
  supervisor.start()
  await settle()
  assert.is(later.workers.length, 0)
  const result = outcome()
  assert.ok(result !== undefined && !result.ok)
  assert.is((result as { err: Error }).err.message, 'config "agent.conf": missing controller address')
})

test('a worker that completes normally is not restarted unless restart is always', async () => {
  const once = recordingChild('upgrader')
  const always = recordingChild('watcher', [], { restart: 'always' })
  const { clock, supervisor } = setup([once, always], { restartDelayMs: 1_000 })
  supervisor.start()
  once.workers[0]!.complete()
  always.workers[0]!.complete()
  await settle()
  assert.is(supervisor.status().upgrader!.state, 'stopped')
  assert.is(supervisor.status().upgrader!.restarts, 0)
  assert.is(supervisor.status().watcher!.state, 'backing-off')
  assert.is(supervisor.status().watcher!.lastError, undefined)
  clock.advance(1_000)
  assert.is(once.workers.length, 1)
  assert.is(always.workers.length, 2)
  assert.is(supervisor.status().watcher!.state, 'running')
  assert.is(supervisor.state, 'running')
})

test('stop during back-off cancels the pending restart', async () => {
  const child = recordingChild('uniter')
  const { clock, supervisor, outcome } = setup([child])
  supervisor.start()
  child.workers[0]!.fail(new Error('crash'))
  await settle()
  assert.is(clock.pendingCount, 1)
  await supervisor.stop()
  assert.is(clock.pendingCount, 0)
  assert.equal(supervisor.status().uniter, { state: 'stopped', restarts: 1, lastError: 'crash', nextStartAt: undefined })
  clock.advance(1_000_000)
  assert.is(child.workers.length, 1)
  await settle()
  assert.equal(outcome(), { ok: true })
  assert.is(supervisor.state, 'stopped')
})

test('stop stops workers in reverse start order, once, however often it is called', async () => {
  const events: string[] = []
  const children = ['api', 'deployer', 'uniter'].map(name => recordingChild(name, events))
  const { supervisor, outcome } = setup(children)
  supervisor.start()
  const first = supervisor.stop()
  const second = supervisor.stop()
  assert.is(first, second)
  await first
  await supervisor.stop()
  assert.equal(events, ['start api', 'start deployer', 'start uniter', 'stop uniter', 'stop deployer', 'stop api'])
  await settle()
  assert.equal(outcome(), { ok: true })
  assert.ok(Object.values(supervisor.status()).every(s => s.state === 'stopped'))
})

test('a worker failing while it is being stopped does not restart it', async () => {
  const child = recordingChild('uniter')
  const { clock, supervisor, outcome } = setup([child])
  supervisor.start()
  const stopping = supervisor.stop()
  child.workers[0]!.fail(new Error('killed'))
  await stopping
  await settle()
  assert.is(clock.pendingCount, 0)
  assert.equal(outcome(), { ok: true })
  assert.is(supervisor.status().uniter!.state, 'stopped')
})

test('a start that rejects counts as a failure and backs off', async () => {
  let attempts = 0
  const events: string[] = []
  const { clock, supervisor } = setup([{
    name: 'provisioner',
    start: async () => {
      attempts++
      if (attempts === 1) throw new Error('controller "0" not reachable')
      return testWorker(events, 'provisioner')
    }
  }], { restartDelayMs: 1_000 })
  supervisor.start()
  assert.is(supervisor.status().provisioner!.state, 'starting')
  await settle()
  assert.equal(supervisor.status().provisioner, { state: 'backing-off', restarts: 1, lastError: 'controller "0" not reachable', nextStartAt: 1_000 })
  clock.advance(1_000)
  await settle()
  assert.is(supervisor.status().provisioner!.state, 'running')
  assert.is(attempts, 2)
})

test('a synchronous throw in start does not crash the supervisor; the others keep running', async () => {
  let attempts = 0
  const other = recordingChild('uniter')
  const { clock, supervisor, outcome } = setup([{
    name: 'broken',
    start: () => {
      attempts++
      throw new TypeError('cannot read properties of undefined')
    }
  }, other], { restartDelayMs: 1_000 })
  supervisor.start()
  assert.is(supervisor.state, 'running')
  assert.is(other.workers.length, 1, 'later workers still start')
  assert.equal(supervisor.status().broken, { state: 'backing-off', restarts: 1, lastError: 'cannot read properties of undefined', nextStartAt: 1_000 })
  clock.advance(1_000)
  assert.is(attempts, 2)
  assert.is(supervisor.status().broken!.nextStartAt, 3_000)
  assert.is(outcome(), undefined)
  await supervisor.stop()
})

test('a start that returns something that is not a worker counts as a failure', async () => {
  const { supervisor } = setup([{ name: 'odd', start: () => ({ stop: async () => {} }) as unknown as Worker }])
  supervisor.start()
  await settle()
  const status = supervisor.status().odd!
  assert.is(status.state, 'backing-off')
  assert.match(status.lastError!, /worker "odd" start: expected a worker with done and stop\(\), got an object/)
  await supervisor.stop()
})

test('stop waits for a worker still starting and then stops it', async () => {
  const events: string[] = []
  let finishStart!: (w: Worker) => void
  const { supervisor } = setup([{ name: 'slow', start: () => new Promise<Worker>(resolve => { finishStart = resolve }) }])
  supervisor.start()
  let stopped = false
  void supervisor.stop().then(() => { stopped = true })
  await settle()
  assert.is(stopped, false)
  finishStart(testWorker(events, 'slow'))
  await settle()
  assert.is(stopped, true)
  assert.equal(events, ['stop slow'])
  assert.is(supervisor.status().slow!.state, 'stopped')
})

test('a worker whose stop hangs is abandoned after the stop timeout', async () => {
  const events: string[] = []
  const { clock, supervisor, logger } = setup([
    { name: 'first', start: () => testWorker(events, 'first') },
    { name: 'stuck', start: () => testWorker(events, 'stuck', true) }
  ], { stopTimeoutMs: 5_000 })
  supervisor.start()
  let stopped = false
  void supervisor.stop().then(() => { stopped = true })
  await settle()
  assert.equal(events, ['stop stuck'])
  clock.advance(4_999)
  await settle()
  assert.is(stopped, false)
  clock.advance(1)
  await settle()
  assert.is(stopped, true)
  assert.equal(events, ['stop stuck', 'stop first'])
  assert.ok(logger.records.some(r => r.message === 'worker "stuck" did not stop within 5000 ms; abandoned'))
})

test('configuration is checked: unique names and the children bound', () => {
  const clock = new SimClock()
  const logger = createMemoryLogger('agent')
  const child = recordingChild('a')
  assert.throws(() => new Supervisor({ clock, logger }, { children: [child, child] }), /worker "a" is named twice/)
  const many = Array.from({ length: limits.supervisorChildrenMax + 1 }, (_, i) => recordingChild(`w${i}`))
  assert.throws(() => new Supervisor({ clock, logger }, { children: many }), /exceed supervisorChildrenMax/)
  assert.throws(() => new Supervisor({ clock, logger }, { children: [], restartFactor: 0.5 }), /restartFactor must be finite and >= 1/)
  const s = new Supervisor({ clock, logger }, { children: [] })
  s.start()
  assert.throws(() => s.start(), /cannot start when running/)
})

test('defaults follow limits: 3 s first delay like Juju\'s dependency engine', async () => {
  const child = recordingChild('uniter')
  const { supervisor } = setup([child])
  supervisor.start()
  child.workers[0]!.fail(new Error('crash'))
  await settle()
  assert.is(supervisor.status().uniter!.nextStartAt, 3_000)
  await supervisor.stop()
})

test.run()
