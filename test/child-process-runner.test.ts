/**
 * ChildProcessRunner behaviour that only a real operating system shows: process
 * groups reaching grandchildren, bounded memory under a flood of output, exec
 * permission, and descendants that outlive the process.
 */
import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { ChildProcessRunner } from '../agent/child-process-runner.ts'
import type { ProcessExit, ProcessSpec } from '../runtime/process-runner.ts'

const test = suite('child process runner')
const root = realpathSync(mkdtempSync(join(tmpdir(), 'cantrip-runner-')))
const graceMs = 300
const runner = new ChildProcessRunner({ timeoutKillGraceMs: graceMs, outputDrainMs: 150 })
const strays: number[] = []
/**
 * The children below sleep 100 s: ending well before that proves the timeout, the SIGKILL
 * or the drain ended them. How soon is no verdict here (a loaded machine stalls any
 * process for seconds); this bound only has to stay far below the 100 s.
 */
const endedEarlyMsMax = 30_000

test.after(() => {
  for (const pid of strays) {
    try { process.kill(pid, 'SIGKILL') } catch { /* already gone */ }
  }
  rmSync(root, { recursive: true, force: true })
})

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

function sh (script: string, overrides: Partial<ProcessSpec> = {}): ProcessSpec {
  return { command: '/bin/sh', args: ['-c', script], env: {}, cwd: root, timeoutMs: 10_000, outputBytesMax: 64 * 1024, ...overrides }
}

/**
 * Gone, or a zombie: this machine's PID 1 does not reap orphans, so a killed grandchild
 * can linger as an unreapable zombie. Either way it runs no more.
 */
function isDead (pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state === 'Z' || state === 'X'
  } catch {
    return true
  }
}

async function waitUntilDead (pid: number, withinMs: number): Promise<boolean> {
  const deadline = performance.now() + withinMs
  while (performance.now() < deadline) {
    if (isDead(pid)) return true
    await sleep(5)
  }
  return isDead(pid)
}

/** Starts a script whose first output line is the pid of a background grandchild. */
async function startWithGrandchild (script: string, overrides: Partial<ProcessSpec> = {}): Promise<{ exit: Promise<ProcessExit>, kill: (graceMs: number) => void, grandchild: number, startedAt: number }> {
  let reportPid: (pid: number) => void = () => {}
  const pidLine = new Promise<number>(resolve => { reportPid = resolve })
  const startedAt = performance.now()
  const running = runner.start(sh(script, {
    ...overrides,
    onOutput: (_stream, line) => { reportPid(Number(line)) }
  }))
  const grandchild = await pidLine
  assert.ok(Number.isInteger(grandchild) && grandchild > 0, `grandchild pid ${grandchild}`)
  strays.push(grandchild)
  assert.not.ok(isDead(grandchild), 'grandchild is running')
  return { exit: running.exit, kill: graceMs => { running.kill(graceMs) }, grandchild, startedAt }
}

test('a timeout kills the whole group, grandchildren included', async () => {
  const { exit, grandchild, startedAt } = await startWithGrandchild(
    '/bin/sleep 100 & echo $!; /bin/sleep 100', { timeoutMs: 200 })
  assert.equal(await exit, { kind: 'timed-out', outputBytes: String(grandchild).length + 1, outputTruncated: false })
  const elapsed = performance.now() - startedAt
  assert.ok(elapsed < endedEarlyMsMax, `timed out after ${elapsed} ms`)
  assert.ok(await waitUntilDead(grandchild, 100), `grandchild ${grandchild} survived the timeout`)
})

test('a grandchild that ignores SIGTERM dies by SIGKILL after the grace', async () => {
  const { exit, grandchild, startedAt } = await startWithGrandchild(
    "(trap '' TERM; exec /bin/sleep 100) & echo $!; /bin/sleep 100", { timeoutMs: 200 })
  const result = await exit
  const elapsed = performance.now() - startedAt
  assert.is(result.kind, 'timed-out')
  assert.ok(elapsed >= 200 + graceMs - 20, `ended after ${elapsed} ms, before the grace ran out`)
  assert.ok(elapsed < endedEarlyMsMax, `ended after ${elapsed} ms`)
  assert.ok(await waitUntilDead(grandchild, 100), `grandchild ${grandchild} survived SIGKILL`)
})

test('kill() reaches a grandchild that ignores SIGTERM', async () => {
  const { exit, kill, grandchild } = await startWithGrandchild("(trap '' TERM; exec /bin/sleep 100) & echo $!; /bin/sleep 100")
  const killedAt = performance.now()
  kill(100)
  const result = await exit
  assert.is(result.kind, 'signalled')
  assert.ok(performance.now() - killedAt < 100 + 300, `kill took ${performance.now() - killedAt} ms`)
  assert.ok(await waitUntilDead(grandchild, 100), `grandchild ${grandchild} survived kill()`)
})

test('100 MB of output keeps memory bounded and is counted exactly', async () => {
  const total = 100_000_000
  let keptLines = 0
  let keptBytes = 0
  const rssBefore = process.memoryUsage.rss()
  let rssPeak = rssBefore
  const sampler = setInterval(() => { rssPeak = Math.max(rssPeak, process.memoryUsage.rss()) }, 5)
  try {
    const running = runner.start(sh(`/usr/bin/yes 0123456789abcdef | /usr/bin/head -c ${total}`, {
      outputBytesMax: 64 * 1024,
      timeoutMs: 60_000,
      onOutput: (_stream, line) => { keptLines++; keptBytes += line.length + 1 }
    }))
    const exit = await running.exit
    assert.equal(exit, { kind: 'exited', exitCode: 0, outputBytes: total, outputTruncated: true })
  } finally {
    clearInterval(sampler)
  }
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss())
  assert.ok(keptBytes <= 64 * 1024 + 1, `kept ${keptBytes} bytes`)
  assert.is(keptLines, Math.ceil(64 * 1024 / 17))
  const growthMb = (rssPeak - rssBefore) / 1024 / 1024
  assert.ok(growthMb < 64, `RSS grew by ${growthMb.toFixed(1)} MB`)
})

test('a file without exec permission is a spawn failure naming EACCES', async () => {
  const path = join(root, 'not-executable')
  writeFileSync(path, '#!/bin/sh\nexit 0\n')
  chmodSync(path, 0o644)
  const exit = await runner.start({ ...sh(''), command: path, args: [] }).exit
  assert.is(exit.kind, 'spawn-failed')
  if (exit.kind === 'spawn-failed') assert.match(exit.reason, 'EACCES')
})

test('a missing cwd or a relative command is a spawn failure', async () => {
  const missingCwd = await runner.start(sh('exit 0', { cwd: join(root, 'nowhere') })).exit
  assert.is(missingCwd.kind, 'spawn-failed')
  if (missingCwd.kind === 'spawn-failed') assert.match(missingCwd.reason, 'nowhere')
  const relative = runner.start({ ...sh('exit 0'), command: 'sh' })
  assert.is(relative.pid, undefined)
  const exit = await relative.exit
  assert.is(exit.kind, 'spawn-failed')
  if (exit.kind === 'spawn-failed') assert.match(exit.reason, 'absolute path')
})

test('a NUL byte in the environment is a spawn failure, not a throw', async () => {
  const exit = await runner.start(sh('exit 0', { env: { BAD: 'a\u0000b' } })).exit
  assert.is(exit.kind, 'spawn-failed')
})

test('an executable script runs directly, with its arguments and no shell', async () => {
  const path = join(root, 'hook')
  writeFileSync(path, '#!/bin/sh\nprintf "%s|" "$@"; echo\nexit 7\n')
  chmodSync(path, 0o755)
  const lines: string[] = []
  const exit = await runner.start({ ...sh(''), command: path, args: ['a b', '$HOME', '*'], onOutput: (_s, line) => lines.push(line) }).exit
  assert.equal(lines, ['a b|$HOME|*|'])
  assert.is(exit.kind === 'exited' && exit.exitCode, 7)
})

test('a process killed by someone else is reported as signalled with that signal', async () => {
  const exit = await runner.start(sh('kill -KILL $$')).exit
  assert.equal(exit, { kind: 'signalled', signal: 'SIGKILL', outputBytes: 0, outputTruncated: false })
})

test('a daemon holding the output pipe does not hold the exit past the drain time', async () => {
  const lines: string[] = []
  const startedAt = performance.now()
  const exit = await runner.start(sh('/bin/sleep 100 & echo $!; echo done; exit 0', { onOutput: (_s, line) => lines.push(line) })).exit
  const elapsed = performance.now() - startedAt
  strays.push(Number(lines[0]))
  assert.equal(exit, { kind: 'exited', exitCode: 0, outputBytes: lines[0]!.length + 1 + 5, outputTruncated: false })
  assert.is(lines[1], 'done')
  assert.ok(elapsed < endedEarlyMsMax, `exit reported after ${elapsed} ms`)
})

test('a long line without a newline is delivered at exit', async () => {
  const lines: string[] = []
  await runner.start(sh("printf 'no newline'; printf 'err' >&2", { onOutput: (stream, line) => lines.push(`${stream}:${line}`) })).exit
  assert.equal(lines.sort(), ['stderr:err', 'stdout:no newline'])
})

test('multi-byte characters split across reads stay intact', async () => {
  const lines: string[] = []
  const word = 'h\u00e9llo \u{1F600}'
  await runner.start(sh(`i=0; while [ $i -lt 2000 ]; do printf '%s\\n' '${word}'; i=$((i + 1)); done`, {
    onOutput: (_s, line) => lines.push(line)
  })).exit
  assert.is(lines.length, 2000)
  assert.ok(lines.every(line => line === word))
})

test('an invalid timeout or output cap is refused at start', () => {
  assert.throws(() => runner.start(sh('exit 0', { timeoutMs: 0 })), /timeout/)
  assert.throws(() => runner.start(sh('exit 0', { outputBytesMax: -1 })), /output cap/)
  assert.throws(() => runner.start(sh('exit 0', { outputBytesMax: 1e12 })), /output cap/)
})

test.run()
