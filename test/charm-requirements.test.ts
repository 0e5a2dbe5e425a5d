/**
 * A charm's `min-juju-version` and `assumes`, checked at deploy and refresh against the
 * Juju version hooks see (JUJU_VERSION), refused with both versions named in Juju's own
 * lines: juju/juju core/charm/minversion.go ("charm's min version (X) is higher than this
 * juju model's version (V)", its test minversion_test.go) and core/assumes/sat_checker.go
 * (features, `>=`/`<` constraints, any-of/all-of, "Charm feature requirements cannot be met").
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { prepareCharm } from '../agent/cli/commands/deploy.ts'
import { charmRequirementsProblem, providedJujuVersion } from '../runtime/charm/charm-requirements.ts'
import { rejects } from './support/rejects.ts'

const problem = (charm: { minJujuVersion?: string, assumes?: unknown[] }): string | undefined =>
  charmRequirementsProblem({ minJujuVersion: charm.minJujuVersion ?? null, assumes: charm.assumes ?? null }, '3.5.0')

test('cantrip presents Juju 3.5.0 to hooks and checks charms against it', () => {
  assert.is(providedJujuVersion, '3.5.0')
})

test('min-juju-version: at or below the version passes; above it is refused naming both', () => {
  assert.is(problem({ minJujuVersion: '2.9.0' }), undefined)
  assert.is(problem({ minJujuVersion: '3.5.0' }), undefined)
  assert.is(problem({ minJujuVersion: '3.6' }), 'charm\'s min version (3.6) is higher than this juju model\'s version (3.5.0)')
})

test('assumes: juju with >= and <, unknown features, any-of and all-of', () => {
  assert.is(problem({ assumes: ['juju'] }), undefined)
  assert.is(problem({ assumes: ['juju >= 3.1'] }), undefined)
  assert.is(problem({ assumes: ['juju < 4'] }), undefined)
  assert.is(problem({ assumes: ['juju >= 4.0'] }),
    'Charm feature requirements cannot be met: charm requires feature "juju" (version >= 4.0) but model currently supports version 3.5.0')
  assert.is(problem({ assumes: ['juju < 3.5'] }),
    'Charm feature requirements cannot be met: charm requires feature "juju" (version < 3.5) but model currently supports version 3.5.0')
  assert.is(problem({ assumes: ['k8s-api'] }),
    'Charm feature requirements cannot be met: charm requires feature "k8s-api" but model does not support it')
  assert.is(problem({ assumes: [{ 'any-of': ['k8s-api', 'juju >= 3.0'] }] }), undefined)
  assert.is(problem({ assumes: [{ 'all-of': ['juju >= 3.0', 'k8s-api'] }] }),
    'Charm feature requirements cannot be met: charm requires all of the following: charm requires feature "k8s-api" but model does not support it')
})

test('deploy and refresh refuse such a charm before anything is sent, naming it and both versions', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-requirements-'))
  try {
    cpSync('examples/charms/kv', join(dir, 'kv'), { recursive: true })
    const metadata = join(dir, 'kv', 'metadata.yaml')
    writeFileSync(metadata, `${readFileSync(metadata, 'utf8')}\nmin-juju-version: 9.1.0\n`)
    assert.is((await rejects(prepareCharm(join(dir, 'kv')), 'CantripError')).message,
      'cantrip deploy: charm "kv": charm\'s min version (9.1.0) is higher than this juju model\'s version (3.5.0)')
    assert.is((await rejects(prepareCharm(join(dir, 'kv'), 'cantrip refresh'), 'CantripError')).message,
      'cantrip refresh: charm "kv": charm\'s min version (9.1.0) is higher than this juju model\'s version (3.5.0)')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
