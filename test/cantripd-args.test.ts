/**
 * cantripd refuses a bad environment before it starts anything: one line on stderr
 * naming what was expected and what arrived, exit 1. Asked for `--help` (or `-h`), it prints
 * its usage on stdout and exits 0, as jujud's commands do (juju/juju cmd/jujud/main.go runs
 * them through juju/cmd, whose `--help` prints the usage and succeeds).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { distProgram } from './support/dist.ts'

const root = join(import.meta.dirname, '..')

test('CANTRIP_LOG_LEVEL that is not a level: one line, exit 1, nothing started', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cantripd-args-'))
  try {
    const run = spawnSync(process.execPath, [distProgram('cantripd'), '--role', 'machine', '--machine-id', '0', '--data-dir', join(dir, 'data'), '--network-key', join(dir, 'missing.key'), '--controllers', 'x'], {
      cwd: root, env: { ...process.env, CANTRIP_LOG_LEVEL: 'loud' }, encoding: 'utf8', timeout: 60_000
    })
    const lines = run.stderr.trim().split('\n')
    assert.is(run.status, 1, run.stderr)
    assert.equal(lines, lines.slice(-1))
    assert.is(lines[0], 'cantripd: expected CANTRIP_LOG_LEVEL to be one of trace, debug, info, warning, error, critical, got "loud"')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('--help and -h print the usage on stdout and exit 0; an unknown flag is one line, exit 1', () => {
  for (const flag of ['--help', '-h']) {
    const run = spawnSync(process.execPath, [distProgram('cantripd'), flag], { cwd: root, encoding: 'utf8', timeout: 60_000 })
    assert.equal([run.status, run.stderr], [0, ''], flag)
    assert.match(run.stdout, /^usage: cantripd --role controller\|machine\|both /, flag)
    assert.match(run.stdout, /^ {7}cantripd --bootstrap FILE --data-dir DIR /m, flag)
    assert.match(run.stdout, /^ {7}cantripd --help\n$/m, flag)
  }
  const bad = spawnSync(process.execPath, [distProgram('cantripd'), '--hepl'], { cwd: root, encoding: 'utf8', timeout: 60_000 })
  assert.is(bad.status, 1)
  assert.is(bad.stdout, '')
  assert.match(bad.stderr, /^cantripd: Unknown option '--hepl'[^\n]*; usage: cantripd /)
  assert.is(bad.stderr.trim().split('\n').length, 3, 'the error line, then the usage\'s other lines')
})

test.run()
