/**
 * The `ProcessRunner` contract, run against ChildProcessRunner (real /bin/sh scripts)
 * and SimProcessRunner (scripted outcomes on simulated time). The suite describes what
 * a process should do as a `Behaviour`; each harness turns that into a spec its runner
 * will carry out.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { FileSystem } from '../../runtime/file-system.ts'
import type { DetachedProcessSpec, ProcessExit, ProcessRunner, ProcessSpec } from '../../runtime/process-runner.ts'

export type Behaviour =
  | { kind: 'exit', exitCode: number, stdout?: string[], stderr?: string[] }
  /** Runs for about `ms`, then exits with the code. */
  | { kind: 'sleep-then-exit', ms: number, exitCode: number }
  /** Never exits by itself. */
  | { kind: 'hang' }
  /** One line per name: `NAME=value`, or `NAME unset`. */
  | { kind: 'print-env', names: string[] }
  /** One line: the working directory. */
  | { kind: 'print-cwd' }
  /** `lines` lines of `width - 1` 'x' characters and a newline each. */
  | { kind: 'print-lines', lines: number, width: number }
  /** A command that does not exist. */
  | { kind: 'missing' }
  /** Copies stdin to stdout. */
  | { kind: 'echo-stdin' }

export interface ProcessRunnerHarness {
  name: string
  runner: ProcessRunner
  /** The working directory specs run in, as the process itself would print it. */
  cwd: string
  spec (behaviour: Behaviour, overrides?: Partial<ProcessSpec>): ProcessSpec
  /** Drives time as needed and returns the exit; fails if it never comes. */
  settle <T> (exit: Promise<T>): Promise<T>
  /** Lets `ms` pass on the runner's clock. */
  wait (ms: number): Promise<void>
  now (): number
  /** How much later than the ideal a real process may end (spawning, signals). */
  slackMs: number
  /** Detached processes: specs carry `marker` as an argument, and log into `logDir` on `files`. */
  detached: {
    spec (behaviour: Behaviour, marker: string, logFile: string): DetachedProcessSpec
    logDir: string
    files: FileSystem
  }
}

interface Captured { stream: 'stdout' | 'stderr', line: string }

/** A variable the test process has and children must not inherit. */
const parentOnly = 'CANTRIP_COMPLIANCE_PARENT_ONLY'

export function processRunnerCompliance (harness: ProcessRunnerHarness): void {
  const test = suite(`process runner compliance: ${harness.name}`)
  test.before(() => { process.env[parentOnly] = 'leaked' })
  test.after(() => { Reflect.deleteProperty(process.env, parentOnly) })

  const run = async (behaviour: Behaviour, overrides: Partial<ProcessSpec> = {}): Promise<{ exit: ProcessExit, output: Captured[] }> => {
    const output: Captured[] = []
    const spec = harness.spec(behaviour, { onOutput: (stream, line) => output.push({ stream, line }), ...overrides })
    const exit = await harness.settle(harness.runner.start(spec).exit)
    return { exit, output }
  }
  const stdout = (output: Captured[]): string[] => output.filter(o => o.stream === 'stdout').map(o => o.line)
  const stderr = (output: Captured[]): string[] => output.filter(o => o.stream === 'stderr').map(o => o.line)

  test('exit codes are reported', async () => {
    assert.equal((await run({ kind: 'exit', exitCode: 0 })).exit, { kind: 'exited', exitCode: 0, outputBytes: 0, outputTruncated: false })
    assert.equal((await run({ kind: 'exit', exitCode: 3 })).exit, { kind: 'exited', exitCode: 3, outputBytes: 0, outputTruncated: false })
  })

  test('output arrives as lines, per stream, in order, and is counted', async () => {
    const { exit, output } = await run({ kind: 'exit', exitCode: 1, stdout: ['one', 'two words', ''], stderr: ['oops'] })
    assert.equal(stdout(output), ['one', 'two words', ''])
    assert.equal(stderr(output), ['oops'])
    assert.equal(exit, { kind: 'exited', exitCode: 1, outputBytes: 4 + 10 + 1 + 5, outputTruncated: false })
  })

  test('the environment is exactly spec.env; nothing is inherited', async () => {
    const { output } = await run({ kind: 'print-env', names: ['JUJU_UNIT_NAME', 'EMPTY', parentOnly, 'HOME', 'USER'] },
      { env: { JUJU_UNIT_NAME: 'web/0', EMPTY: '' } })
    assert.equal(stdout(output), ['JUJU_UNIT_NAME=web/0', 'EMPTY=', `${parentOnly} unset`, 'HOME unset', 'USER unset'])
  })

  test('the process runs in spec.cwd', async () => {
    const { exit, output } = await run({ kind: 'print-cwd' })
    assert.equal(stdout(output), [harness.cwd])
    assert.is(exit.kind, 'exited')
  })

  test('output beyond outputBytesMax is counted, dropped and flagged', async () => {
    const { exit, output } = await run({ kind: 'print-lines', lines: 100, width: 100 }, { outputBytesMax: 1000 })
    assert.equal(exit, { kind: 'exited', exitCode: 0, outputBytes: 10_000, outputTruncated: true })
    assert.equal(stdout(output), new Array(10).fill('x'.repeat(99)))
  })

  test('a line cut by the cap is delivered up to the cap', async () => {
    const { exit, output } = await run({ kind: 'print-lines', lines: 20, width: 100 }, { outputBytesMax: 1050 })
    assert.equal(exit, { kind: 'exited', exitCode: 0, outputBytes: 2000, outputTruncated: true })
    assert.equal(stdout(output), [...new Array(10).fill('x'.repeat(99)), 'x'.repeat(50)])
  })

  test('output exactly at the cap is not truncated', async () => {
    const { exit, output } = await run({ kind: 'print-lines', lines: 10, width: 100 }, { outputBytesMax: 1000 })
    assert.equal(exit, { kind: 'exited', exitCode: 0, outputBytes: 1000, outputTruncated: false })
    assert.is(stdout(output).length, 10)
  })

  test('a cap of 0 keeps nothing and still counts', async () => {
    const { exit, output } = await run({ kind: 'exit', exitCode: 0, stdout: ['abc'] }, { outputBytesMax: 0 })
    assert.equal(exit, { kind: 'exited', exitCode: 0, outputBytes: 4, outputTruncated: true })
    assert.equal(output, [])
  })

  test('stdin bytes reach the process, and without them stdin is empty', async () => {
    const given = await run({ kind: 'echo-stdin' }, { stdin: { bytes: new TextEncoder().encode('bootstrap line\nsecond\n') } })
    assert.equal(stdout(given.output), ['bootstrap line', 'second'])
    const none = await run({ kind: 'echo-stdin' })
    assert.equal(stdout(none.output), [])
    assert.is(none.exit.kind, 'exited')
  })

  test('a process that ends before its timeout is not timed out', async () => {
    const started = harness.now()
    const { exit } = await run({ kind: 'sleep-then-exit', ms: 50, exitCode: 4 }, { timeoutMs: 5000 })
    assert.equal(exit, { kind: 'exited', exitCode: 4, outputBytes: 0, outputTruncated: false })
    const elapsed = harness.now() - started
    assert.ok(elapsed >= 45 && elapsed < 50 + harness.slackMs, `took ${elapsed} ms`)
  })

  test('a hanging process is stopped at its timeout and reported as timed out', async () => {
    const started = harness.now()
    const { exit } = await run({ kind: 'hang' }, { timeoutMs: 300 })
    const elapsed = harness.now() - started
    assert.equal(exit, { kind: 'timed-out', outputBytes: 0, outputTruncated: false })
    assert.ok(elapsed >= 295 && elapsed < 300 + harness.slackMs, `timed out after ${elapsed} ms`)
  })

  test('kill() stops a running process and the exit says signalled', async () => {
    const running = harness.runner.start(harness.spec({ kind: 'hang' }, { timeoutMs: 60_000 }))
    assert.type(running.pid, 'number')
    await harness.wait(50)
    const killedAt = harness.now()
    running.kill(1000)
    const exit = await harness.settle(running.exit)
    assert.equal(exit, { kind: 'signalled', signal: 'SIGTERM', outputBytes: 0, outputTruncated: false })
    assert.ok(harness.now() - killedAt < harness.slackMs, `kill took ${harness.now() - killedAt} ms`)
  })

  test('kill() after the exit changes nothing', async () => {
    const running = harness.runner.start(harness.spec({ kind: 'exit', exitCode: 2 }))
    const exit = await harness.settle(running.exit)
    running.kill(0)
    running.kill(0)
    assert.equal(exit, { kind: 'exited', exitCode: 2, outputBytes: 0, outputTruncated: false })
    assert.equal(await running.exit, exit)
  })

  test('a missing command is a spawn failure, not an exception', async () => {
    const running = harness.runner.start(harness.spec({ kind: 'missing' }))
    assert.is(running.pid, undefined)
    const exit = await harness.settle(running.exit)
    assert.is(exit.kind, 'spawn-failed')
    if (exit.kind === 'spawn-failed') {
      assert.ok(exit.reason.length > 0)
      assert.is(exit.missing, true, 'a command that does not exist is reported as missing')
    }
    running.kill(0)
  })

  let markers = 0
  const detached = (behaviour: Behaviour): { spec: DetachedProcessSpec, marker: string } => {
    const marker = `cantrip-compliance-marker-${markers++}-${harness.name.replace(/\W/g, '')}`
    return { spec: harness.detached.spec(behaviour, marker, `${harness.detached.logDir}/${marker}.log`), marker }
  }

  test('a detached process runs until signalled, and the process table knows it meanwhile', async () => {
    const { spec, marker } = detached({ kind: 'hang' })
    const started = harness.runner.startDetached(spec)
    const pid = started.pid
    assert.type(pid, 'number')
    if (pid === undefined) return
    await harness.wait(50)
    const identity = harness.runner.identify(pid)
    assert.is(identity?.pid, pid)
    assert.equal(harness.runner.identify(pid), identity, 'the same process is identified the same way twice')
    assert.equal(harness.runner.findByArgument(marker), [pid])
    harness.runner.signalGroup(pid, 'SIGTERM')
    assert.equal(await harness.settle(started.exit), { kind: 'signalled', signal: 'SIGTERM' })
    assert.is(harness.runner.identify(pid), undefined, 'an ended process is not identified')
    assert.equal(harness.runner.findByArgument(marker), [])
    harness.runner.signalGroup(pid, 'SIGKILL')
  })

  test('a detached process writes its output to its log file and its exit is reported', async () => {
    const { spec } = detached({ kind: 'exit', exitCode: 3, stdout: ['agent: bad bootstrap'], stderr: ['agent: giving up'] })
    const started = harness.runner.startDetached(spec)
    assert.equal(await harness.settle(started.exit), { kind: 'exited', exitCode: 3 })
    const log = new TextDecoder().decode(harness.detached.files.readFile(spec.logFile))
    assert.is(log, 'agent: bad bootstrap\nagent: giving up\n')
  })

  test('a detached process that cannot start has no pid and says why', async () => {
    const started = harness.runner.startDetached(detached({ kind: 'missing' }).spec)
    assert.is(started.pid, undefined)
    const exit = await harness.settle(started.exit)
    assert.is(exit.kind, 'spawn-failed')
    if (exit.kind === 'spawn-failed') assert.is(exit.missing, true)
  })

  test.run()
}
