/**
 * Two real charms exchange a password through a Juju secret granted over their relation
 * (issue 29, done-when), on real processes (`cantrip bootstrap`, one controller):
 *
 * - vault's leader adds the secret, grants it on the relation and puts its URI in its
 *   application bag; app's relation-changed reads it with `secret-get` (revision 1);
 * - vault rotates it with `secret-set`; app gets `secret-changed` with JUJU_SECRET_ID and
 *   JUJU_SECRET_REVISION, where `secret-get --refresh` returns the new revision, and later
 *   reads keep returning it;
 * - vault revokes the grant; app's `secret-get` then fails with Juju's `ERROR permission
 *   denied`, exit 1.
 *
 * Juju sources followed: internal/worker/uniter/runner/jujuc/secret-add.go, secret-get.go,
 * secret-grant.go, secret-revoke.go, secret-set.go; internal/worker/uniter/secrets/
 * resolver.go (secret-changed when the consumed revision moves); runner/context/context.go
 * (pending secret changes, owner label lookup); apiserver/facades/agent/secretsmanager
 * (consumer tracking, ErrPerm without a grant). Every process is stopped by pid
 * (destroy-controller) and the temporary directory removed.
 */
import '../runtime/polyfill.ts'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { cantrip, cantripOk as ok, destroyLeftoverController } from './support/cli-process.ts'
import { waitFor } from './support/cantripd-cluster.ts'

function writeCharm (dir: string, metadata: string[], actions: Record<string, string>, hooks: Record<string, string>): void {
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  mkdirSync(join(dir, 'actions'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), [...metadata, ''].join('\n'))
  writeFileSync(join(dir, 'actions.yaml'), Object.keys(actions).map(name => `${name}:\n  description: ${name}\n`).join(''))
  const script = (path: string, body: string): void => {
    writeFileSync(path, `#!/bin/bash\nset -eu\n${body}\n`)
    chmodSync(path, 0o755)
  }
  script(join(dir, 'hooks', 'start'), 'status-set active ready')
  for (const [name, body] of Object.entries(hooks)) script(join(dir, 'hooks', name), body)
  for (const [name, body] of Object.entries(actions)) script(join(dir, 'actions', name), body)
}

function writeVault (dir: string): void {
  writeCharm(dir, ['name: vault', 'summary: owns a password', 'description: test charm', 'provides:', '  creds:', '    interface: password'], {
    share: [
      'rel=$(relation-ids creds)',
      'id=$(secret-add --label db-password --description "the database password" password=s3cret-one)',
      'secret-grant "$id" -r "$rel"',
      'relation-set -r "$rel" --app secret-id="$id"',
      'state-set id="$id"',
      'action-set id="$id" info="$(secret-info-get --label db-password --format=json)"'
    ].join('\n'),
    rotate: 'secret-set "$(state-get id)" password=s3cret-two',
    revoke: 'secret-revoke "$(state-get id)" -r "$(relation-ids creds)"'
  }, {})
}

function writeApp (dir: string, log: string): void {
  writeCharm(dir, ['name: app', 'summary: consumes a password', 'description: test charm', 'requires:', '  creds:', '    interface: password'], {
    get: 'out=$(secret-get "$(state-get id)" password 2>&1) && rc=0 || rc=$?; action-set rc="$rc" out="$out"'
  }, {
    'creds-relation-changed': [
      'id=$(relation-get --app secret-id vault)',
      '[ -z "$id" ] && exit 0',
      'state-set id="$id"',
      `echo "read $id $(secret-get "$id" password)" >> ${JSON.stringify(log)}`
    ].join('\n'),
    'secret-changed': `echo "changed $JUJU_SECRET_ID $JUJU_SECRET_REVISION $(secret-get "$JUJU_SECRET_ID" --refresh password)" >> ${JSON.stringify(log)}`
  })
}

/** Values no charm ever reads or prints: they may appear nowhere but in `show-secret --reveal`. */
const canaryOne = 'canary-7f3a91c2e5'
const canaryTwo = 'canary-b04d6e18aa'

/** Every file under `dir`, recursively (LevelDB tables and logs, agent logs, crash files, key files). */
function filesUnder (dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...filesUnder(path))
    else if (entry.isFile()) out.push(path)
  }
  return out
}

function lines (log: string): string[] {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(line => line !== '') : []
}

/** An action's results, without the return code every run reports. */
function action (home: string, unit: string, name: string): Record<string, string> {
  const { 'return-code': code, ...results } = parse(ok(home, 'run', unit, name, '--wait', '3m')) as Record<string, string>
  assert.is(code, 0)
  return results
}

test('two charms exchange a password through a secret granted over their relation', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-secrets-'))
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  const log = join(home, 'app.log')
  writeVault(join(home, 'vault'))
  writeApp(join(home, 'app'), log)
  try {
    ok(home, 'bootstrap')
    ok(home, 'deploy', join(home, 'vault'))
    ok(home, 'deploy', join(home, 'app'))
    ok(home, 'integrate', 'vault', 'app')
    ok(home, 'wait-for', 'unit', 'vault/0', '--status', 'active', '--timeout', '4m')
    ok(home, 'wait-for', 'unit', 'app/0', '--status', 'active', '--timeout', '4m')

    const shared = action(home, 'vault/0', 'share')
    const uri = shared['id']!
    assert.match(uri, /^secret:[0-9a-v]{20}$/)
    const id = uri.slice('secret:'.length)
    // secret-info-get in the hook that added it: revision 1, the owner's label (Juju's metadataDisplay).
    assert.equal(JSON.parse(shared['info']!), { [id]: { revision: 1, label: 'db-password', owner: 'application', description: 'the database password' } })

    await waitFor('app read the secret', () => lines(log).some(line => line.startsWith('read ')), () => lines(log).join('\n'))
    assert.equal(lines(log)[0], `read ${uri} s3cret-one`)
    assert.equal(action(home, 'app/0', 'get'), { rc: '0', out: 's3cret-one' })

    action(home, 'vault/0', 'rotate')
    await waitFor('secret-changed on app/0', () => lines(log).some(line => line.startsWith('changed ')), () => lines(log).join('\n'))
    assert.equal(lines(log).find(line => line.startsWith('changed ')), `changed ${uri} 2 s3cret-two`)
    // --refresh in secret-changed made revision 2 the tracked one.
    assert.equal(action(home, 'app/0', 'get'), { rc: '0', out: 's3cret-two' })

    action(home, 'vault/0', 'revoke')
    assert.equal(action(home, 'app/0', 'get'), { rc: '1', out: 'ERROR permission denied' })
    assert.is(lines(log).filter(line => line.startsWith('changed ')).length, 1, 'one secret-changed for one new revision')

    // User secrets (cmd/juju/secrets): add prints the URI; listings never show content.
    const userUri = ok(home, 'add-secret', 'api-token', `token=${canaryOne}`, '--info', 'for the api').trim()
    assert.match(userUri, /^secret:[0-9a-v]{20}$/)
    const userId = userUri.slice('secret:'.length)
    const listed = JSON.parse(ok(home, 'secrets', '--format', 'json')) as Record<string, { owner: string, revision: number, name?: string, label?: string }>
    assert.equal(Object.keys(listed).sort(), [id, userId].sort())
    assert.equal([listed[userId]!.owner, listed[userId]!.name, listed[userId]!.revision], ['<model>', 'api-token', 1])
    assert.equal([listed[id]!.owner, listed[id]!.label, listed[id]!.revision], ['vault', 'db-password', 2])
    const table = ok(home, 'secrets')
    assert.match(table, /^ID\s+Name\s+Owner\s+Rotation\s+Revision\s+Last updated$/m)
    assert.not.match(table + JSON.stringify(listed), new RegExp(`${canaryOne}|s3cret`), 'no content in listings')
    assert.not.match(ok(home, 'show-secret', 'api-token'), new RegExp(canaryOne))
    ok(home, 'update-secret', 'api-token', `token=${canaryTwo}`)
    ok(home, 'grant-secret', 'api-token', 'app')
    const shown = parse(ok(home, 'show-secret', userUri, '--reveal')) as Record<string, { revision: number, content: Record<string, string> }>
    assert.equal([shown[userId]!.revision, shown[userId]!.content], [2, { token: canaryTwo }])
    assert.equal((parse(ok(home, 'show-secret', id, '--reveal', '--revision', '1')) as Record<string, { content: Record<string, string> }>)[id]!.content, { password: 's3cret-one' })
    ok(home, 'revoke-secret', 'api-token', 'app')
    ok(home, 'remove-secret', 'api-token')
    assert.equal(Object.keys(JSON.parse(ok(home, 'secrets', '--format', 'json')) as object), [id])
    assert.match(cantrip(home, ['show-secret', 'api-token']).stderr, /cantrip show-secret.*"api-token"/)

    // The canary: never in status, the status history, debug-log, nor any file the
    // controller and the machine agents wrote (LevelDB tables and logs, agent logs).
    const seen = [
      ok(home, 'status', '--format', 'json'), ok(home, 'show-status-log', 'app/0', '-n', '100'),
      ok(home, 'debug-log', '--replay', '--no-tail', '-n', '10000')
    ].join('\n')
    for (const canary of [canaryOne, canaryTwo]) assert.not.ok(seen.includes(canary), `${canary} in status or logs`)
    const files = filesUnder(join(home, 'controllers'))
    assert.ok(files.some(file => /\.(ldb|log)$/.test(file)), 'the scan reads LevelDB files')
    for (const file of files) {
      const bytes = readFileSync(file)
      for (const canary of [canaryOne, canaryTwo]) assert.not.ok(bytes.includes(canary), `${canary} in ${file}`)
    }
  } finally {
    destroyLeftoverController(home, machinesDir)
    rmSync(home, { recursive: true, force: true })
  }
})

test.run()
