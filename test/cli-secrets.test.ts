/**
 * Two real charms exchange a password through a Juju secret granted over their relation
 * (issue 29, done-when), on real processes (`cantrip bootstrap`, one controller):
 *
 * - vault's leader adds the secret, grants it on the relation and puts its URI in its
 *   application bag; app's relation-changed reads it with `secret-get` (revision 1);
 * - vault rotates it with `secret-set`; app gets `secret-changed` with JUJU_SECRET_ID and
 *   JUJU_SECRET_REVISION, where `secret-get --refresh` returns the new revision, and later
 *   reads keep returning it;
 * - app's refresh leaves revision 1 tracked by nobody: vault gets `secret-remove` for it
 *   (JUJU_SECRET_REVISION=1); a token added with `--expire 2s` gets `secret-expired`
 *   with its revision and label once the controllers' clock passes the deadline;
 * - vault revokes the grant; app's `secret-get` then fails with Juju's `ERROR permission
 *   denied`, exit 1.
 *
 * The canaries — a user secret's two values, the second granted to app and read there —
 * never appear in status, the status history, debug-log, any file the agents wrote
 * (LevelDB included), any agent's inspector stream with data shown
 * (`bootstrap --inspect-data`), nor in the mesh payloads vault's machine agent received
 * (`CANTRIP_WIRE_CAPTURE_DIR`), while app's, which was granted it, did receive it.
 *
 * Juju sources followed: internal/worker/uniter/runner/jujuc/secret-add.go, secret-get.go,
 * secret-grant.go, secret-revoke.go, secret-set.go; internal/worker/uniter/secrets/
 * resolver.go (secret-changed when the consumed revision moves; secret-expired and
 * secret-remove with JUJU_SECRET_REVISION); internal/worker/secretexpire; runner/context/context.go
 * (pending secret changes, owner label lookup); apiserver/facades/agent/secretsmanager
 * (consumer tracking, ErrPerm without a grant). Every process is stopped by pid
 * (destroy-controller) and the temporary directory removed.
 */
import '../runtime/polyfill.ts'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { createHash } from 'node:crypto'
import { WebSocket } from 'ws'
import type { ControllersFile } from '../agent/cli/cli-home.ts'
import { discoverInspectEndpoints } from '../agent/inspect/inspect-endpoints.ts'
import { cantrip, cantripOk as ok, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { waitFor } from './support/wait-for.ts'

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

function writeVault (dir: string, log: string): void {
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
    revoke: 'secret-revoke "$(state-get id)" -r "$(relation-ids creds)"',
    // A short-lived token: the controllers' clock fires secret-expired on the owner's leader.
    expiring: 'action-set id="$(secret-add --label short-lived --expire 2s token=t0k3n)"'
  }, {
    'secret-expired': [
      `echo "expired $JUJU_SECRET_ID $JUJU_SECRET_REVISION $JUJU_SECRET_LABEL" >> ${JSON.stringify(log)}`,
      'secret-remove "$JUJU_SECRET_ID" --revision "$JUJU_SECRET_REVISION"'
    ].join('\n'),
    // An obsolete revision (no consumer tracks it): this charm keeps it, and only says so.
    'secret-remove': `echo "remove $JUJU_SECRET_ID $JUJU_SECRET_REVISION" >> ${JSON.stringify(log)}`
  })
}

function writeApp (dir: string, log: string): void {
  const actionsYaml = (): void => {
    // read-token takes the secret's URI (Juju's action schemas refuse undeclared parameters).
    writeFileSync(join(dir, 'actions.yaml'), 'get:\n  description: get\nread-token:\n  description: read-token\n  params:\n    id:\n      type: string\n')
  }
  writeCharm(dir, ['name: app', 'summary: consumes a password', 'description: test charm', 'requires:', '  creds:', '    interface: password'], {
    get: 'out=$(secret-get "$(state-get id)" password 2>&1) && rc=0 || rc=$?; action-set rc="$rc" out="$out"',
    // Reads a user secret and shows only a digest of it, so the value itself stays off the record.
    'read-token': 'v=$(secret-get "$(action-get id)" token); action-set sha="$(printf %s "$v" | sha256sum | cut -c1-64)"'
  }, {
    'creds-relation-changed': [
      'id=$(relation-get --app secret-id vault)',
      '[ -z "$id" ] && exit 0',
      'state-set id="$id"',
      `echo "read $id $(secret-get "$id" password)" >> ${JSON.stringify(log)}`
    ].join('\n'),
    'secret-changed': `echo "changed $JUJU_SECRET_ID $JUJU_SECRET_REVISION $(secret-get "$JUJU_SECRET_ID" --refresh password)" >> ${JSON.stringify(log)}`
  })
  actionsYaml()
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

/** The task's document `run --format yaml` prints, keyed by unit (cmd/juju/action/common.go). */
function runDocument (home: string, unit: string, name: string, ...params: string[]): { status: string, results: Record<string, unknown> } {
  const doc = parse(ok(home, 'run', unit, name, ...params, '--wait', '3m', '--format', 'yaml')) as Record<string, { status: string, results: Record<string, unknown> }>
  assert.equal(Object.keys(doc), [unit])
  return doc[unit]!
}

/** An action's results, without the return code every run reports (checked 0, the task completed). */
function action (home: string, unit: string, name: string): Record<string, string> {
  const { status, results: { 'return-code': code, ...results } } = runDocument(home, unit, name)
  assert.equal([status, code], ['completed', 0])
  return results as Record<string, string>
}

test('two charms exchange a password through a secret granted over their relation', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-secrets-'))
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  const log = join(home, 'app.log')
  const wireDir = join(home, 'wire')
  const sockets: WebSocket[] = []
  const inspected: string[] = []
  const inspectErrors: string[] = []
  const vaultLog = join(home, 'vault.log')
  writeVault(join(home, 'vault'), vaultLog)
  writeApp(join(home, 'app'), log)
  try {
    // Every agent streams its actors with data shown, and captures every mesh payload it receives.
    const boot = cantrip(home, ['bootstrap', '--inspect-data'], { CANTRIP_WIRE_CAPTURE_DIR: wireDir })
    assert.is(boot.status, 0, boot.stderr)
    ok(home, 'deploy', join(home, 'vault'))
    ok(home, 'deploy', join(home, 'app'))
    ok(home, 'integrate', 'vault', 'app')
    ok(home, 'wait-for', 'unit', 'vault/0', '--status', 'active', '--timeout', '4m')
    ok(home, 'wait-for', 'unit', 'app/0', '--status', 'active', '--timeout', '4m')

    const entry = (parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as ControllersFile).controllers['local']!
    const endpoints = discoverInspectEndpoints(entry)
    assert.equal(endpoints.length, 3, JSON.stringify(endpoints))
    for (const endpoint of endpoints) {
      const socket = new WebSocket(endpoint.url)
      socket.on('message', data => { inspected.push(String(data)) })
      socket.on('error', error => { inspectErrors.push(`${endpoint.agent}: ${error.message}`) })
      sockets.push(socket)
    }

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

    // app now tracks revision 2, so revision 1 is obsolete: vault's leader runs secret-remove for it.
    await waitFor('secret-remove on vault/0', () => lines(vaultLog).some(line => line.startsWith('remove ')), () => lines(vaultLog).join('\n'))
    assert.equal(lines(vaultLog).filter(line => line.startsWith('remove ')), [`remove ${uri} 1`])

    // Expiry: secret-expired with the revision and label, at the deadline (plus the controllers' drift margin).
    const expiring = action(home, 'vault/0', 'expiring')['id']!
    await waitFor('secret-expired on vault/0', () => lines(vaultLog).some(line => line.startsWith('expired ')), () => lines(vaultLog).join('\n'))
    assert.equal(lines(vaultLog).filter(line => line.startsWith('expired ')), [`expired ${expiring} 1 short-lived`])

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
    // The granted unit reads the user secret: the canary travels to app's machine, and to no other agent.
    const digest = createHash('sha256').update(canaryTwo).digest('hex')
    assert.equal(runDocument(home, 'app/0', 'read-token', `id=${userUri}`).results, { 'return-code': 0, sha: digest })
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
    assert.equal(inspectErrors, [], 'every inspector stream stayed open')
    // Nor in any inspector stream, though the agents show data (--inspect-data, inherited by the machine agents).
    assert.match(readFileSync(join(entry.controllers[0]!['data-dir'], 'launch.json'), 'utf8'), /"--inspect-data"/)
    assert.ok(inspected.length > 0, 'the inspector streams were read')
    for (const canary of [canaryOne, canaryTwo]) assert.not.ok(inspected.some(line => line.includes(canary)), `${canary} in an inspector stream`)
    // Nor on the wire of vault's machine, which was never granted it; app's machine, granted, received it.
    const machineOf = (unit: string): string => (JSON.parse(ok(home, 'status', '--format', 'json')) as { applications: Record<string, { units: Record<string, { machine: string }> }> }).applications[unit.split('/')[0]!]!.units[unit]!.machine
    const wire = (machine: string): Buffer => readFileSync(join(wireDir, `machine-${machine}.wire`))
    assert.ok(machineOf('vault/0') !== machineOf('app/0'), 'vault and app on machines of their own')
    assert.ok(wire(machineOf('app/0')).includes(canaryTwo), 'the granted agent received the content (the capture sees payloads)')
    for (const canary of [canaryOne, canaryTwo]) assert.not.ok(wire(machineOf('vault/0')).includes(canary), `${canary} on the wire of vault's machine`)
    const files = filesUnder(join(home, 'controllers'))
    assert.ok(files.some(file => /\.(ldb|log)$/.test(file)), 'the scan reads LevelDB files')
    for (const file of files) {
      const bytes = readFileSync(file)
      for (const canary of [canaryOne, canaryTwo]) assert.not.ok(bytes.includes(canary), `${canary} in ${file}`)
    }
  } finally {
    for (const socket of sockets) socket.terminate()
    destroyLeftoverController(home, machinesDir)
    removeHome(home)
  }
})

test.run()
