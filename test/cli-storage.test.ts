/**
 * Storage for a machine charm through the CLI against real processes (`cantrip
 * bootstrap`, the local provider): a charm with filesystem storage deployed with
 * `--storage data=1G`
 *
 * - runs `data-storage-attached` before `install` (Juju's
 *   internal/worker/uniter/storage/resolver.go: storage hooks precede install on machines),
 *   with JUJU_STORAGE_ID set, and `storage-get location` names a real directory under the
 *   machine's directory that the hook writes a file into;
 * - `cantrip storage` lists it as Juju's `juju storage` does (cmd/juju/storage/list.go);
 * - `add-storage` gives a second instance whose hook runs when the unit is idle, and
 *   `detach-storage` runs its `-storage-detaching` and takes it out of the list;
 * - `storage-add` in config-changed asks for a third instance, attached in turn;
 * - `remove-unit` runs `data-storage-detaching` before `stop` (resolver.go: all storage
 *   of a dying unit is dying; the detaching hooks come before stop).
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

/** A bash charm whose every hook appends `<hook> <JUJU_STORAGE_ID>` to `log`. */
function writeCharm (dir: string, log: string): void {
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), [
    'name: store', 'summary: a charm with filesystem storage', 'description: test charm',
    'storage:', '  data:', '    type: filesystem', '    location: /srv/data', '    multiple:', '      range: 1-3', '    minimum-size: 512M', ''
  ].join('\n'))
  const hook = (name: string, body = ''): void => {
    const file = join(dir, 'hooks', name)
    writeFileSync(file, `#!/bin/bash\nset -e\necho "${name} \${JUJU_STORAGE_ID:-}" >> ${JSON.stringify(log)}\n${body}`)
    chmodSync(file, 0o755)
  }
  hook('install')
  hook('start', 'status-set active ready\n')
  hook('stop')
  hook('remove')
  hook('data-storage-attached', [
    'location=$(storage-get location)',
    'echo "written by $JUJU_STORAGE_ID" > "$location/hello"',
    `echo "location $JUJU_STORAGE_ID $location $(storage-get -s "$JUJU_STORAGE_ID" kind) $(storage-list data | tr '\\n' ' ')" >> ${JSON.stringify(log)}`,
    ''
  ].join('\n'))
  hook('data-storage-detaching')
  // config-changed asks for one more instance with the storage-add hook tool once grow=yes.
  writeFileSync(join(dir, 'config.yaml'), 'options:\n  grow:\n    type: string\n    default: "no"\n    description: add a data instance\n')
  hook('config-changed', 'if [ "$(config-get grow)" = yes ]; then storage-add data; fi\n')
}

/** The hooks run so far, `<hook>` or `<hook> <storage id>`. */
const hookLines = (log: string): string[] => existsSync(log) ? readFileSync(log, 'utf8').split('\n').map(line => line.trimEnd()).filter(line => line !== '' && !line.startsWith('location ')) : []

test('deploy --storage: storage-attached before install, a real location, detaching before stop', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-storage-'))
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  const log = join(home, 'hooks.log')
  const charm = join(home, 'store')
  writeCharm(charm, log)
  try {
    // Bad directives are refused with one line before anything is sent.
    assert.match(cantrip(home, ['deploy', charm, '--storage', 'data=0']).stderr,
      /^ERROR cantrip deploy: expected --storage NAME=\[COUNT,\]\[SIZE\] like "data=10G" or "data=2,10G" \(cannot parse constraints for storage "data": cannot parse count: count must be greater than zero, got "0"\), got "data=0"$/m)
    ok(home, 'bootstrap')
    const refused = cantrip(home, ['deploy', charm, '--storage', 'data=100M'])
    assert.match(refused.stderr, /cannot deploy "store": charm "store" store "data": minimum storage size is 512 MiB, 100 MiB specified/)
    ok(home, 'deploy', charm, '--storage', 'data=1G')
    ok(home, 'wait-for', 'application', 'store', '--status', 'active', '--timeout', '4m')

    const lines = hookLines(log)
    assert.equal(lines.slice(0, 2), ['data-storage-attached data/0', 'install'], lines.join('\n'))
    assert.ok(lines.indexOf('config-changed') > lines.indexOf('install') && lines.indexOf('start') > lines.indexOf('config-changed'), lines.join('\n'))
    const located = readFileSync(log, 'utf8').split('\n').find(line => line.startsWith('location data/0 '))!
    const [, , location, kind, ...listed] = located.trim().split(' ')
    assert.is(kind, 'filesystem')
    assert.equal(listed, ['data/0'])
    assert.ok(location!.startsWith(machinesDir + '/'), location)
    assert.is(readFileSync(join(location!, 'hello'), 'utf8'), 'written by data/0\n')

    const table = ok(home, 'storage')
    assert.match(table, /^Unit +Storage ID +Type +Pool +Mountpoint +Size +Status +Message\n/)
    assert.match(table, new RegExp(`^store/0 +data/0 +filesystem +rootfs +${location!.replaceAll('/', '\\/')} +1\\.0 GiB +attached$`, 'm'))

    // add-storage: a second instance, attached while the unit is idle.
    assert.is(ok(home, 'add-storage', 'store/0', 'data'), 'added storage data/1 to store/0\n')
    await waitFor('data/1 attached', () => hookLines(log).includes('data-storage-attached data/1'), () => hookLines(log).join('\n'))
    assert.is(ok(home, 'detach-storage', 'data/1'), 'detaching data/1\n')
    await waitFor('data/1 detached and gone', () => hookLines(log).includes('data-storage-detaching data/1') && !ok(home, 'storage').includes('data/1'), () => hookLines(log).join('\n'))
    assert.match(cantrip(home, ['detach-storage', 'data/0']).stderr, /would leave 0 instances of store "data", the charm requires at least 1/)

    // storage-add from the charm: the instance is asked for when the hook succeeds.
    ok(home, 'config', 'store', 'grow=yes')
    await waitFor('data/2 attached', () => hookLines(log).includes('data-storage-attached data/2'), () => hookLines(log).join('\n'))

    // remove-unit: detaching before stop, then remove.
    const before = hookLines(log).length
    ok(home, 'remove-unit', 'store/0')
    await waitFor('the remove hook', () => hookLines(log).includes('remove'), () => hookLines(log).join('\n'))
    assert.equal(hookLines(log).slice(before), ['data-storage-detaching data/0', 'data-storage-detaching data/2', 'stop', 'remove'])
  } finally {
    destroyLeftoverController(home, machinesDir)
    removeHome(home)
  }
})

test.run()
