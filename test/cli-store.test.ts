/**
 * The client's store on a read-only file system: a command that writes it checks first and
 * says `cannot write to "<home>": read-only file system` in one line, before anything is
 * started (bootstrap leaves no controller process or directory behind), instead of a raw
 * Node error about a mkdir. add-model's case (nothing created) is in cli-models.test.ts,
 * which has a controller. Commands that only read the store still work.
 */
import '../runtime/polyfill.ts'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantripHome } from '../agent/cli/cli-home.ts'
import { checkStoreWritable } from '../agent/cli/store-check.ts'
import { cantripReadOnly, readOnlySupported } from './support/read-only-home.ts'

test('checkStoreWritable: a writable home, or one not yet made under a writable directory, passes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-store-'))
  try {
    checkStoreWritable(dir)
    checkStoreWritable(join(dir, 'not', 'yet'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('an empty CANTRIP_HOME means the default store, not the current directory', () => {
  const saved = process.env['CANTRIP_HOME']
  try {
    process.env['CANTRIP_HOME'] = ''
    assert.ok(cantripHome().endsWith(join('.local', 'share', 'cantrip')), cantripHome())
    process.env['CANTRIP_HOME'] = '/srv/cantrip-home'
    assert.is(cantripHome(), '/srv/cantrip-home')
  } finally {
    if (saved === undefined) delete process.env['CANTRIP_HOME']
    else process.env['CANTRIP_HOME'] = saved
  }
})

test('a read-only home: bootstrap says so in one line and starts nothing; a reading command still answers', () => {
  if (!readOnlySupported()) {
    console.log('  (skipped: no mount namespaces here)')
    return
  }
  const home = mkdtempSync(join(tmpdir(), 'cantrip-ro-'))
  try {
    mkdirSync(join(home, 'controllers'))
    const run = cantripReadOnly(home, ['bootstrap'])
    assert.equal([run.status, run.stderr, run.stdout], [1, `ERROR cannot write to "${home}": read-only file system\n`, ''])
    assert.equal(readdirSync(join(home, 'controllers')), [], 'no controller directory')
    assert.not.ok(existsSync(join(home, 'controllers.yaml')))
    const add = cantripReadOnly(home, ['add-model', 'x'])
    assert.equal([add.status, add.stderr], [1, `ERROR cannot write to "${home}": read-only file system\n`])
    const list = cantripReadOnly(home, ['controllers'])
    assert.is(list.status, 0, list.stderr)
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
})

test.run()
