/**
 * The secret-* hook tools by their exact output and exit codes, after Juju 3's
 * internal/worker/uniter/runner/jujuc/secret-add.go, secret-get.go, secret-ids.go,
 * secret-info-get.go and their _test.go (usage errors exit 2, refusals exit 1 with
 * `ERROR <message>`; secret-get, secret-ids and secret-info-get default to YAML).
 * The context is the real UnitHookSecrets over an empty model, with a stand-in for the
 * controller's secret-content answer.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { HookContext } from '../agent/hook-tools/hook-context.ts'
import { UnitHookSecrets } from '../agent/uniter/unit-hook-secrets.ts'
import { emptyModel } from '../runtime/model/model-draft.ts'
import { FakeHookContext, runFake } from './support/fake-hook-context.ts'

const ok = (stdout: string): { code: number, stdout: string, stderr: string } => ({ code: 0, stdout, stderr: '' })
const fails = (code: 1 | 2, message: string): { code: number, stdout: string, stderr: string } => ({ code, stdout: '', stderr: `ERROR ${message}\n` })

function context (leader = true): HookContext {
  const model = emptyModel()
  const secrets = new UnitHookSecrets({
    unit: 'wordpress/0',
    application: 'wordpress',
    model: () => model,
    isLeader: async () => leader,
    // A secret this unit was never granted: the controller's answer (apiserver ErrPerm).
    secretContent: async () => ({ ok: false, error: 'permission denied' })
  })
  return Object.assign(new FakeHookContext(), { secrets })
}

test('secret-add prints the URI; usage errors exit 2 with Juju\'s words', async () => {
  const ctx = context()
  const added = await runFake(ctx, 'secret-add', ['--label', 'pw', '--description', 'd', 'password=one'])
  assert.is(added.code, 0)
  assert.match(added.stdout, /^secret:[0-9a-v]{20}\n$/)
  assert.equal(await runFake(ctx, 'secret-add'), fails(2, 'missing secret value or filename'))
  assert.equal(await runFake(ctx, 'secret-add', ['A=x']), fails(2, 'key "A" not valid'))
  assert.equal(await runFake(ctx, 'secret-add', ['--owner', 'bogus', 'key=x']), fails(2, 'secret owner "bogus" not valid'))
  assert.equal(await runFake(ctx, 'secret-add', ['--rotate', 'sometimes', 'key=x']), fails(2, 'rotate policy "sometimes" not valid'))
  assert.equal(await runFake(ctx, 'secret-add', ['--expire', 'soon', 'key=x']), fails(2, 'expire time or duration "soon" not valid'))
  assert.equal(await runFake(ctx, 'secret-add', ['--label', 'pw', 'other=x']), fails(1, 'secret with label "pw" already exists'))
  assert.equal(await runFake(context(false), 'secret-add', ['key=x']), fails(1, 'this unit is not the leader'))
  assert.is((await runFake(context(false), 'secret-add', ['--owner', 'unit', 'key=x'])).code, 0, 'a unit secret needs no leadership')
})

test('secret-get, secret-ids and secret-info-get see the hook\'s own secret; yaml by default, json on request', async () => {
  const ctx = context()
  const uri = (await runFake(ctx, 'secret-add', ['--label', 'pw', '--description', 'd', 'password=one'])).stdout.trim()
  const id = uri.slice('secret:'.length)
  assert.equal(await runFake(ctx, 'secret-get', [uri]), ok('password: one\n'))
  assert.equal(await runFake(ctx, 'secret-get', [uri, '--format', 'json']), ok('{"password":"one"}\n'))
  assert.equal(await runFake(ctx, 'secret-get', [uri, 'password']), ok('one\n'))
  assert.equal(await runFake(ctx, 'secret-get', [uri, 'password#base64']), ok('b25l\n'))
  assert.equal(await runFake(ctx, 'secret-get', ['--label', 'pw', '--format=json']), ok('{"password":"one"}\n'))
  await runFake(ctx, 'secret-set', [uri, 'password=two'])
  assert.equal(await runFake(ctx, 'secret-get', [uri, '--peek', 'password']), ok('two\n'), 'a pending update is what --peek sees')
  assert.equal(await runFake(ctx, 'secret-ids'), ok(`- ${uri}\n`))
  assert.equal(await runFake(ctx, 'secret-ids', ['--format', 'json']), ok(`["${uri}"]\n`))
  assert.equal(await runFake(ctx, 'secret-info-get', [uri, '--format', 'json']), ok(`{"${id}":{"revision":1,"label":"pw","owner":"application","description":"d"}}\n`))
  assert.equal(await runFake(ctx, 'secret-info-get', ['--label', 'pw']), ok(`${id}:\n  revision: 1\n  label: pw\n  owner: application\n  description: d\n`))
  await runFake(ctx, 'secret-remove', [uri])
  assert.equal(await runFake(ctx, 'secret-ids', ['--format', 'json']), ok('[]\n'))
  assert.equal(await runFake(ctx, 'secret-info-get', [uri]), fails(1, `secret "${id}" not found`))
})

test('secret-get refusals and usage errors', async () => {
  const ctx = context()
  assert.equal(await runFake(ctx, 'secret-get'), fails(2, 'require either a secret URI or label'))
  assert.equal(await runFake(ctx, 'secret-get', ['nope']), fails(2, 'secret URI "nope" not valid'))
  assert.equal(await runFake(ctx, 'secret-get', [`secret:${'a'.repeat(20)}`, '--peek', '--refresh']), fails(2, 'specify one of --peek or --refresh but not both'))
  assert.equal(await runFake(ctx, 'secret-get', [`secret:${'a'.repeat(20)}`]), fails(1, 'permission denied'))
  assert.equal(await runFake(ctx, 'secret-info-get', [`secret:${'a'.repeat(20)}`, '--label', 'x']), fails(2, 'specify either a secret URI or label but not both'))
  assert.equal(await runFake(ctx, 'secret-set', [`secret:${'a'.repeat(20)}`, 'k1x=v']), fails(1, `secret "${'a'.repeat(20)}" not found`))
  assert.equal(await runFake(ctx, 'secret-grant', [`secret:${'a'.repeat(20)}`]), fails(2, 'no relation id specified'))
})

test.run()
