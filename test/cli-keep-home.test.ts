/**
 * test/support/cli-process.ts `removeHome`: a CLI test's CANTRIP_HOME is removed when its
 * process exits with every test passed, and kept under CANTRIP_KEEP_LOGS_DIR (with a line
 * on stderr saying where) when one failed, so the agent and unit logs of a failure on a
 * busy machine can be read afterwards.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'

const root = mkdtempSync(join(tmpdir(), 'cli-keep-home-'))

/** Runs a one-test uvu file that makes a home with a log in it, hands it to removeHome and passes or fails. */
function runOne (name: string, passes: boolean): { status: number, stderr: string, home: string, kept: string } {
  const home = join(root, `${name}-home`)
  const kept = join(root, `${name}-kept`)
  const file = join(root, `${name}.test.ts`)
  writeFileSync(file, [
    "import { mkdirSync, writeFileSync } from 'node:fs'",
    // The file lives in a temp dir: the packages are named by their paths here.
    `import { test } from ${JSON.stringify(resolve('node_modules/uvu/dist/index.mjs'))}`,
    `import * as assert from ${JSON.stringify(resolve('node_modules/uvu/assert/index.mjs'))}`,
    `import { removeHome } from ${JSON.stringify(resolve('test/support/cli-process.ts'))}`,
    "test('one', () => {",
    `  mkdirSync(${JSON.stringify(join(home, 'machines'))}, { recursive: true })`,
    `  writeFileSync(${JSON.stringify(join(home, 'machines', 'agent.log'))}, 'hook failed\\n')`,
    '  try {',
    `    assert.ok(${String(passes)}, 'the verdict')`,
    '  } finally {',
    `    removeHome(${JSON.stringify(home)})`,
    '  }',
    '})',
    'test.run()'
  ].join('\n'))
  const run = spawnSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8', env: { ...process.env, CANTRIP_KEEP_LOGS_DIR: kept, CANTRIP_KEEP_LOGS: '' }, timeout: 120_000 })
  return { status: run.status ?? -1, stderr: run.stderr, home, kept }
}

test('a passing test: the home is removed and nothing kept', () => {
  const run = runOne('pass', true)
  assert.is(run.status, 0, run.stderr)
  assert.not.ok(existsSync(run.home))
  assert.not.ok(existsSync(run.kept))
})

test('a failing test: the home is moved under CANTRIP_KEEP_LOGS_DIR, and stderr says where', () => {
  const run = runOne('fail', false)
  assert.is(run.status, 1)
  assert.not.ok(existsSync(run.home))
  const kept = readdirSync(run.kept)[0] ?? ''
  assert.ok(kept?.endsWith('-fail-home'), String(kept))
  assert.is(readFileSync(join(run.kept, kept, 'machines', 'agent.log'), 'utf8'), 'hook failed\n')
  assert.ok(run.stderr.includes(`cli process: a test failed; CANTRIP_HOME ${run.home} is kept in ${join(run.kept, kept)}\n`), run.stderr)
})

test.after(() => { rmSync(root, { recursive: true, force: true }) })

test.run()
