/**
 * What a user sees of charm packing and the hook tools, on real processes: `cantrip
 * bootstrap` (one controller, the local provider), then
 *
 * - a charm directory whose hooks are all 0644 in the source, with a `.jujuignore` and a
 *   `.git` directory, deploys and reaches active/idle: packing made its hooks executable
 *   and left out what Juju's archiver leaves out (internal/charm/charmdir.go), which its
 *   install hook checks in the unit's copy; the hook tools print nothing for an empty
 *   relation-ids and opened-ports (relation-list_test.go "no members"); JUJU_MODEL_UUID is the
 *   model's random v4 UUID, as `models` shows it;
 * - an action exiting 3 fails with `exit status 3` and `return-code: 3` and its output in
 *   the results, one exiting 0 has `return-code: 0` (runner.go updateActionResults);
 * - a pre-built .charm whose install hook is 0644 fails that hook as Juju does (the
 *   archive is deployed as it is), show-status-log shows the error's data
 *   (cmd/juju/status/history.go), and after `refresh --force-units` to a fixed archive
 *   and `resolved`, the unit goes on to active;
 * - a 3 MB charm of random content with only a charmcraft.yaml and `dispatch` deploys
 *   (uploaded in chunks, checked, unpacked whole) and reaches active/idle.
 *
 * One controller for the whole file; every process is stopped by pid (destroy-controller
 * stops the agents) and the temporary directory removed.
 */
import '../runtime/polyfill.ts'
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { cantrip, cantripOk as ok, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { zipFile } from './support/zip-file.ts'

const metadata = (name: string): string => `name: ${name}\nsummary: s\ndescription: d\npeers:\n  ring: ring\n`

/** A charm directory as it might sit in git: every hook 0644. */
function writePlainCharm (dir: string): void {
  const files: Record<string, string> = {
    'metadata.yaml': metadata('plain'),
    'actions.yaml': 'exit-nonzero:\n  description: fails\nhello:\n  description: greets\nsoft-fail:\n  description: fails by action-fail\n',
    '.jujuignore': 'secret.txt\n/notes/\n',
    'secret.txt': 'not for the unit\n',
    'notes/todo': 'x\n',
    '.git/HEAD': 'ref: refs/heads/main\n',
    'hooks/install': [
      '#!/bin/bash',
      'set -e',
      // What the unit received: no ignored files, hooks executable.
      'for f in secret.txt notes .git .jujuignore; do if [ -e "$CHARM_DIR/$f" ]; then echo "$f packed" >&2; exit 1; fi; done',
      'test -x "$CHARM_DIR/hooks/start"',
      'printf "%s|" "$(opened-ports)" "$(relation-ids nonexistent-endpoint 2>/dev/null || true)" > "$CHARM_DIR/../empty-answers"',
      'opened-ports --format json >> "$CHARM_DIR/../empty-answers"',
      'printf "%s" "$JUJU_MODEL_UUID" > "$CHARM_DIR/../model-uuid"',
      ''
    ].join('\n'),
    'hooks/start': '#!/bin/bash\nstatus-set active ready\n',
    'actions/exit-nonzero': '#!/bin/bash\necho partial\necho broken >&2\nexit 3\n',
    'actions/hello': '#!/bin/bash\necho hi\n',
    'actions/soft-fail': '#!/bin/bash\naction-set why=busy\naction-fail "not today"\n'
  }
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), content)
    chmodSync(join(dir, path), path.startsWith('actions/') ? 0o755 : 0o644)
  }
}

/**
 * A charm of real size kept as charmcraft keeps one: only charmcraft.yaml (no
 * metadata.yaml), a `dispatch` script, and `bytes` of random (incompressible) content
 * under venv/, which its install checks byte for byte by sha256 in the unit's copy.
 */
function writeLargeCharm (dir: string, bytes: number): void {
  const blob = randomBytes(bytes)
  const digest = createHash('sha256').update(blob).digest('hex')
  mkdirSync(join(dir, 'venv'), { recursive: true })
  writeFileSync(join(dir, 'venv', 'blob.bin'), blob)
  writeFileSync(join(dir, 'charmcraft.yaml'), 'name: large\ntype: charm\nsummary: s\ndescription: d\nbases:\n  - {name: ubuntu, channel: "22.04"}\nconfig:\n  options:\n    greeting: {type: string, default: hi}\n')
  writeFileSync(join(dir, 'dispatch'), [
    '#!/bin/bash',
    'set -e',
    'case "$JUJU_DISPATCH_PATH" in',
    `  hooks/install) echo "${digest}  $CHARM_DIR/venv/blob.bin" | sha256sum -c --status; test -f "$CHARM_DIR/metadata.yaml" ;;`,
    '  hooks/start) status-set active "$(config-get greeting)" ;;',
    'esac',
    ''
  ].join('\n'), { mode: 0o755 })
}

/** A pre-built .charm: install as `installMode`, start sets active. */
function writeZippedCharm (file: string, installMode: number): void {
  writeFileSync(file, zipFile([
    { name: 'metadata.yaml', data: metadata('zipped'), deflate: true },
    { name: 'hooks/install', data: '#!/bin/bash\necho installed\n', mode: 0o100000 | installMode },
    { name: 'hooks/start', data: '#!/bin/bash\nstatus-set active fixed\n', mode: 0o100755 }
  ]))
}

test('a 0644 charm directory deploys; actions report return-code; a 0644 hook in a .charm fails until fixed', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-charm-tools-'))
  // The workload says active from inside its start hook; the agent is idle only after it.
  const activeAndIdle = 'workload-status=="active" && agent-status=="idle"'
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  try {
    const plain = join(home, 'plain')
    writePlainCharm(plain)
    ok(home, 'bootstrap')
    ok(home, 'deploy', plain)
    ok(home, 'wait-for', 'unit', 'plain/0', '--query', activeAndIdle, '--timeout', '4m')
    const status = JSON.parse(ok(home, 'status', '--format', 'json')) as { applications: Record<string, { units: Record<string, { 'workload-status': { current: string }, 'juju-status': { current: string } }> }> }
    const unit = status.applications.plain!.units['plain/0']!
    assert.equal([unit['workload-status'].current, unit['juju-status'].current], ['active', 'idle'])
    const agentDir = join(machinesDir, 'machine-0', 'agent', 'agents', 'unit-plain-0')
    // opened-ports and relation-ids of an endpoint without relations print nothing; json prints [].
    assert.is(readFileSync(join(agentDir, 'empty-answers'), 'utf8'), '||[]\n')
    // JUJU_MODEL_UUID is the model's random v4 UUID, the one `models` shows.
    const uuid = readFileSync(join(agentDir, 'model-uuid'), 'utf8')
    assert.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const models = JSON.parse(ok(home, 'models', '--format', 'json')) as { models: Array<{ 'short-name': string, 'model-uuid': string }> }
    assert.is(models.models.find(m => m['short-name'] === 'default')?.['model-uuid'], uuid)

    // `run` prints as Juju 3.6's by default (cmd/juju/action/common.go printPlainOutput,
    // processOperationResults; run_test.go): an action exiting 3 says it failed, prints
    // the charm's stdout and stderr, and exits 1 with Juju's list of failed tasks.
    const failed = cantrip(home, ['run', 'plain/0', 'exit-nonzero', '--wait', '2m'])
    const [, taskId] = /\n {2}- task (\d+) on unit-plain-0\n/.exec(failed.stderr) ?? []
    assert.equal([failed.status, failed.stdout], [1, `Action id ${taskId} failed: exit status 3\n\npartial\nbroken\n`], failed.stderr)
    assert.ok(failed.stderr.endsWith(`\nERROR the following task failed:\n - id "${taskId}" with return code 3\n\nuse 'cantrip show-task' to inspect the failure\n`), failed.stderr)
    // The runner's keys (return-code, stdout, stderr) are in the task's document: --format yaml.
    const shown = parse(cantrip(home, ['show-task', taskId!, '--format', 'yaml']).stdout) as { results: unknown }
    assert.equal(shown.results, { 'return-code': 3, stdout: 'partial\n', stderr: 'broken\n' })
    const hello = parse(ok(home, 'run', 'plain/0', 'hello', '--wait', '2m', '--format', 'yaml')) as Record<string, { results: unknown, status: string, unit: string }>
    assert.equal(hello['plain/0'], { ...hello['plain/0']!, results: { 'return-code': 0, stdout: 'hi\n' }, status: 'completed', unit: 'plain/0' })
    assert.is(ok(home, 'run', 'plain/0', 'hello', '--wait', '2m'), '\nhi\n')
    // Failed by action-fail while its process exits 0: said, with its results, and exit 0.
    const soft = cantrip(home, ['run', 'plain/0', 'soft-fail', '--wait', '2m'])
    assert.equal([soft.status, soft.stdout.replace(/^Action id \d+ /, 'Action id N ')], [0, 'Action id N failed: not today\nwhy: busy\n\n'], soft.stderr)

    // A pre-built archive is deployed as it is: its 0644 install hook fails.
    const broken = join(home, 'zipped.charm')
    writeZippedCharm(broken, 0o644)
    ok(home, 'deploy', broken)
    ok(home, 'wait-for', 'unit', 'zipped/0', '--status', 'error', '--timeout', '4m')
    const history = parse(ok(home, 'show-status-log', 'zipped/0', '--format', 'yaml')) as Array<{ status: string, message: string, data?: Record<string, unknown> }>
    const error = history.find(row => row.status === 'error')
    assert.ok(error !== undefined, JSON.stringify(history))
    assert.equal([error.message, error.data], ['hook failed: "install"', { hook: 'install' }])

    // Refreshed to a fixed archive (forced: the unit is in error) and resolved, it goes on.
    const fixed = join(home, 'zipped-fixed.charm')
    writeZippedCharm(fixed, 0o755)
    ok(home, 'refresh', 'zipped', '--path', fixed, '--force-units')
    cantrip(home, ['resolved', 'zipped/0']) // May find the automatic retry already moved it on.
    ok(home, 'wait-for', 'unit', 'zipped/0', '--status', 'active', '--timeout', '4m')

    // A 3 MB charm with only charmcraft.yaml: uploaded in chunks (over the 1 MiB request
    // maximum), unpacked whole on the machine, the files charmcraft would write present.
    const large = join(home, 'large')
    writeLargeCharm(large, 3_000_000)
    ok(home, 'deploy', large)
    ok(home, 'wait-for', 'unit', 'large/0', '--query', activeAndIdle, '--timeout', '4m')
    const after = JSON.parse(ok(home, 'status', '--format', 'json')) as typeof status
    const largeUnit = after.applications.large!.units['large/0']!
    assert.equal([largeUnit['workload-status'].current, largeUnit['juju-status'].current], ['active', 'idle'])
  } finally {
    destroyLeftoverController(home, machinesDir)
    removeHome(home)
  }
})

test.run()
