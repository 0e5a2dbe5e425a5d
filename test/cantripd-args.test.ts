/**
 * cantripd refuses a bad environment before it starts anything: one line on stderr
 * naming what was expected and what arrived, exit 1.
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
    assert.is(lines[0], 'cantripd: expected CANTRIP_LOG_LEVEL to be one of trace, debug, info, warning, error, got "loud"')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
