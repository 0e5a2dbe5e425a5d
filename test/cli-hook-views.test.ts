/**
 * What an ops-framework charm relies on, through the CLI against real processes (one
 * `cantrip bootstrap`, the local provider, shared by the whole file):
 *
 * - relation views: inside `cluster-relation-created` (peer) and `db-relation-created`
 *   the hook's relation is listed by relation-ids and `relation-list -r <id>` prints `[]`
 *   (it used to fail with "relation not found"); inside `db-relation-broken` after
 *   remove-relation, relation-ids leaves it out while JUJU_RELATION_ID still names it and
 *   `relation-list -r` prints `[]` (Juju's runner/context: contextfactory.go
 *   getContextRelations, context.go RelationIds/Relation);
 * - optional storage: a store with `multiple: {range: 0-}` gets no instance, and the unit
 *   installs with none (Juju's state/storage.go takes the range's minimum as the count);
 * - logs: a 5 KB multi-line `juju-log --log-level DEBUG -- <msg>` (as ops writes it) and a
 *   failing hook's traceback on stderr reach `debug-log` whole, every line, in Juju's
 *   format (`unit-<app>-<n>: <time> <LEVEL> unit.<app>/<n>.juju-log <message>`; hook
 *   stderr at WARNING under `unit.<app>/<n>.<hook>`), the exception line included.
 *
 * Every process started is stopped by pid (destroy-controller stops the agents); the
 * temporary directory is removed.
 */
import '../runtime/polyfill.ts'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantrip, cantripOk as ok, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { waitFor } from './support/wait-for.ts'

function writeCharm (dir: string, metadata: string, hooks: Record<string, string>): void {
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), metadata)
  for (const [name, body] of Object.entries(hooks)) {
    writeFileSync(join(dir, 'hooks', name), `#!/bin/bash\n${body}\n`)
    chmodSync(join(dir, 'hooks', name), 0o755)
  }
}

/** Records, per hook, the relation tools' exact output and exit codes into `<views>/<hook>`. */
function viewHook (views: string): string {
  return [
    `out=${JSON.stringify(views)}/$JUJU_HOOK_NAME`,
    '{',
    '  echo "id=$JUJU_RELATION_ID"',
    '  echo "ids=$(relation-ids "$JUJU_RELATION" --format json)"',
    '  echo "list=$(relation-list -r "$JUJU_RELATION_ID" --format json 2>&1) rc=$?"',
    '  echo "smart=[$(relation-list -r "$JUJU_RELATION_ID")]"',
    '} > "$out.tmp" && mv "$out.tmp" "$out"'
  ].join('\n')
}

const bigMessage = Array.from({ length: 100 }, (_, i) => `line ${String(i).padStart(3, '0')}: ${'x'.repeat(40)}`).join('\n')

test('relation views in -created and -broken, optional storage, whole multi-line logs', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-hook-views-'))
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  const views = join(home, 'views')
  mkdirSync(views)
  const viewer = join(home, 'viewer')
  writeCharm(viewer, [
    'name: viewer', 'summary: records relation views', 'description: test charm',
    'peers:', '  cluster:', '    interface: viewer-peers',
    'requires:', '  db:', '    interface: views-db',
    'storage:', '  cache:', '    type: filesystem', '    multiple:', '      range: 0-', ''
  ].join('\n'), {
    install: `echo "storage=[$(storage-list cache)]" > ${JSON.stringify(join(views, 'install'))}`,
    start: 'status-set active ready',
    'cluster-relation-created': viewHook(views),
    'db-relation-created': viewHook(views),
    'db-relation-broken': viewHook(views)
  })
  const provider = join(home, 'provider')
  writeCharm(provider, 'name: provider\nsummary: provides db\ndescription: test charm\nprovides:\n  db:\n    interface: views-db\n', {
    start: 'status-set active ready'
  })
  const crasher = join(home, 'crasher')
  writeFileSync(join(home, 'big-message'), bigMessage)
  writeCharm(crasher, 'name: crasher\nsummary: logs and fails\ndescription: test charm\n', {
    install: [
      `juju-log --log-level DEBUG -- "$(cat ${JSON.stringify(join(home, 'big-message'))})"`,
      'echo "Traceback (most recent call last):" >&2',
      'for i in $(seq 1 40); do echo "  File \\"/var/lib/juju/charm/src/charm.py\\", line $i, in frame_$i" >&2; done',
      'echo "RuntimeError: the exception line survives" >&2',
      'exit 1'
    ].join('\n')
  })
  try {
    ok(home, 'bootstrap')
    // Hook output is logged at DEBUG, which Juju's default logging-config (<root>=INFO) leaves out.
    ok(home, 'model-config', 'logging-config=<root>=INFO;unit=DEBUG')
    ok(home, 'deploy', viewer)
    ok(home, 'deploy', provider)
    ok(home, 'deploy', crasher)
    ok(home, 'wait-for', 'application', 'viewer', '--status', 'active', '--timeout', '4m')

    // range 0-: no storage instance, and install ran without waiting for one.
    assert.is(readFileSync(join(views, 'install'), 'utf8'), 'storage=[]\n')
    assert.not.match(ok(home, 'storage'), /viewer\//)

    // The peer relation's -created ran with the unit: its own relation visible, no members.
    const peer = readFileSync(join(views, 'cluster-relation-created'), 'utf8')
    const peerId = /^id=(cluster:\d+)$/m.exec(peer)?.[1]
    assert.ok(peerId !== undefined, peer)
    assert.is(peer, `id=${peerId}\nids=["${peerId}"]\nlist=[] rc=0\nsmart=[]\n`)

    ok(home, 'integrate', 'viewer', 'provider')
    await waitFor('db-relation-created', () => existsSync(join(views, 'db-relation-created')))
    const created = readFileSync(join(views, 'db-relation-created'), 'utf8')
    const dbId = /^id=(db:\d+)$/m.exec(created)?.[1]
    assert.ok(dbId !== undefined, created)
    assert.is(created, `id=${dbId}\nids=["${dbId}"]\nlist=[] rc=0\nsmart=[]\n`)

    ok(home, 'wait-for', 'application', 'provider', '--status', 'active', '--timeout', '4m')
    ok(home, 'remove-relation', 'viewer', 'provider')
    await waitFor('db-relation-broken', () => existsSync(join(views, 'db-relation-broken')))
    assert.is(readFileSync(join(views, 'db-relation-broken'), 'utf8'), `id=${dbId}\nids=[]\nlist=[] rc=0\nsmart=[]\n`)

    // The crasher's install: its whole juju-log message, then every stderr line, in debug-log.
    const replay = (): string => cantrip(home, ['debug-log', '--replay', '--no-tail', '--include', 'crasher/0']).stdout
    await waitFor('the traceback in debug-log', () => replay().includes('RuntimeError: the exception line survives'), replay)
    const log = replay()
    const logged = new RegExp(`^unit-crasher-0: \\d\\d:\\d\\d:\\d\\d DEBUG unit\\.crasher/0\\.juju-log ${bigMessage.split('\n')[0]!}$`, 'm').exec(log)
    assert.ok(logged !== null, log.slice(0, 2_000))
    assert.ok(log.slice(logged.index).startsWith(`${logged[0].slice(0, logged[0].length - bigMessage.split('\n')[0]!.length)}${bigMessage}\n`), 'the message whole, its lines kept')
    assert.match(log, /^unit-crasher-0: \d\d:\d\d:\d\d WARNING unit\.crasher\/0\.install Traceback \(most recent call last\):$/m)
    assert.match(log, /^unit-crasher-0: \d\d:\d\d:\d\d WARNING unit\.crasher\/0\.install {3}File "\/var\/lib\/juju\/charm\/src\/charm\.py", line 40, in frame_40$/m)
    assert.match(log, /^unit-crasher-0: \d\d:\d\d:\d\d WARNING unit\.crasher\/0\.install RuntimeError: the exception line survives$/m)
    assert.not.match(log, /truncated/)
  } finally {
    destroyLeftoverController(home, machinesDir)
    removeHome(home)
  }
})

test.run()
