/** SimProcessRunner beyond the contract: exact simulated timings of exits, hangs and kills. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { SimClock } from '../sim/sim-clock.ts'
import { SimProcessRunner, type SimProcessOutcome } from '../sim/sim-process-runner.ts'
import type { ProcessExit, ProcessSpec } from '../runtime/process-runner.ts'

const test = suite('sim process runner')

function setup (outcome: SimProcessOutcome, options: { timeoutKillGraceMs?: number } = {}): { clock: SimClock, runner: SimProcessRunner, specs: ProcessSpec[] } {
  const clock = new SimClock()
  const specs: ProcessSpec[] = []
  const runner = new SimProcessRunner(clock, spec => { specs.push(spec); return outcome }, options)
  return { clock, runner, specs }
}

const spec = (overrides: Partial<ProcessSpec> = {}): ProcessSpec => ({
  command: '/var/lib/cantrip/charm/hooks/install', args: [], env: { JUJU_UNIT_NAME: 'web/0' }, cwd: '/charm', timeoutMs: 10_000, outputBytesMax: 1024, ...overrides
})

/** The exit if it has settled by now, else undefined. */
async function peek (exit: Promise<ProcessExit>): Promise<ProcessExit | undefined> {
  return await Promise.race([exit, new Promise<undefined>(resolve => setImmediate(() => resolve(undefined)))])
}

test('the exit comes after exactly durationMs of simulated time', async () => {
  const { clock, runner, specs } = setup({ durationMs: 1500, exitCode: 1, output: ['installing'] })
  const lines: string[] = []
  const running = runner.start(spec({ onOutput: (_s, line) => lines.push(line) }))
  assert.equal(specs.map(s => s.env), [{ JUJU_UNIT_NAME: 'web/0' }])
  assert.is(runner.runningCount, 1)
  clock.advance(1499)
  assert.is(await peek(running.exit), undefined)
  assert.equal(lines, [])
  clock.advance(1)
  assert.equal(await peek(running.exit), { kind: 'exited', exitCode: 1, outputBytes: 11, outputTruncated: false })
  assert.equal(lines, ['installing'])
  assert.is(runner.runningCount, 0)
  assert.is(clock.pendingCount, 0)
})

test('pids are deterministic', () => {
  const { runner } = setup({ durationMs: 1 })
  assert.equal([runner.start(spec()).pid, runner.start(spec()).pid], [1000, 1001])
})

test('a hang lasts until the timeout, which reports timed-out at exactly timeoutMs', async () => {
  const { clock, runner } = setup({ durationMs: 0, hang: true })
  const running = runner.start(spec({ timeoutMs: 300_000 }))
  clock.advance(299_999)
  assert.is(await peek(running.exit), undefined)
  clock.advance(1)
  assert.equal(await peek(running.exit), { kind: 'timed-out', outputBytes: 0, outputTruncated: false })
})

test('finishing at exactly the timeout counts as finishing', async () => {
  const { clock, runner } = setup({ durationMs: 100 })
  const running = runner.start(spec({ timeoutMs: 100 }))
  clock.advance(100)
  assert.is((await peek(running.exit))?.kind, 'exited')
})

test('a process that ignores SIGTERM outlives the timeout by the grace', async () => {
  const { clock, runner } = setup({ durationMs: 0, hang: true, ignoresSigterm: true }, { timeoutKillGraceMs: 5000 })
  const running = runner.start(spec({ timeoutMs: 1000 }))
  clock.advance(5999)
  assert.is(await peek(running.exit), undefined)
  clock.advance(1)
  assert.is((await peek(running.exit))?.kind, 'timed-out')
})

test('kill ends a hang at once with SIGTERM, or after the grace with SIGKILL', async () => {
  const polite = setup({ durationMs: 0, hang: true })
  const first = polite.runner.start(spec())
  polite.clock.advance(10)
  first.kill(1000)
  assert.equal(await peek(first.exit), { kind: 'signalled', signal: 'SIGTERM', outputBytes: 0, outputTruncated: false })

  const stubborn = setup({ durationMs: 0, hang: true, ignoresSigterm: true })
  const second = stubborn.runner.start(spec())
  second.kill(1000)
  second.kill(1)
  stubborn.clock.advance(999)
  assert.is(await peek(second.exit), undefined)
  stubborn.clock.advance(1)
  assert.equal(await peek(second.exit), { kind: 'signalled', signal: 'SIGKILL', outputBytes: 0, outputTruncated: false })
  assert.is(stubborn.clock.pendingCount, 0)
})

test('an outcome with a signal ends signalled; a spawn failure never starts', async () => {
  const oom = setup({ durationMs: 50, signal: 'SIGKILL' })
  const running = oom.runner.start(spec())
  oom.clock.advance(50)
  assert.equal(await peek(running.exit), { kind: 'signalled', signal: 'SIGKILL', outputBytes: 0, outputTruncated: false })

  const missing = setup({ durationMs: 0, spawnFailure: 'hook not executable' })
  const failed = missing.runner.start(spec())
  assert.is(failed.pid, undefined)
  assert.equal(await failed.exit, { kind: 'spawn-failed', reason: 'hook not executable', missing: false })
  assert.is(missing.runner.runningCount, 0)
})

test('output is capped by UTF-8 bytes, stdout before stderr', async () => {
  const { clock, runner } = setup({ durationMs: 1, output: ['h\u00e9', 'abc'], stderr: ['err'] })
  const lines: string[] = []
  const running = runner.start(spec({ outputBytesMax: 6, onOutput: (stream, line) => lines.push(`${stream}:${line}`) }))
  clock.advance(1)
  assert.equal(await peek(running.exit), { kind: 'exited', exitCode: 0, outputBytes: 12, outputTruncated: true })
  assert.equal(lines, ['stdout:h\u00e9', 'stdout:ab'])
})

test.run()
