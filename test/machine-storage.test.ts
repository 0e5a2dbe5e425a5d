/**
 * The local provider's storage instances (agent/uniter/machine-storage.ts): a directory
 * per filesystem instance and a sparse file of the requested size per block instance,
 * laid out as Juju's rootfs storage (`storage/<name>/<n>`) under the machine's directory,
 * made again idempotently after a restart with what the charm wrote kept.
 */
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { machineStorage } from '../agent/uniter/machine-storage.ts'

test('filesystem: a directory per instance, kept across provisioning again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-machine-storage-'))
  try {
    const effects = machineStorage(dir)
    const record = { id: 'data/3', name: 'data', kind: 'filesystem' as const, life: 'alive' as const, attached: false, location: '/srv/data', sizeMiB: 1024, pool: 'rootfs' }
    const location = await effects.provisionStorage('pg/0', record)
    assert.is(location, join(dir, 'storage', 'data', '3'))
    assert.ok(statSync(location).isDirectory())
    writeFileSync(join(location, 'kept'), 'yes')
    assert.is(await effects.provisionStorage('pg/0', record), location)
    assert.ok(existsSync(join(location, 'kept')))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('block: a sparse file of the requested size', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-machine-storage-'))
  try {
    const location = await machineStorage(dir).provisionStorage('pg/0', { id: 'wal/0', name: 'wal', kind: 'block', life: 'alive', attached: false, location: '', sizeMiB: 2048, pool: 'loop' })
    assert.is(location, join(dir, 'storage', 'wal', '0.img'))
    const stat = statSync(location)
    assert.ok(stat.isFile())
    assert.is(stat.size, 2048 * 1024 * 1024)
    assert.ok(stat.blocks * 512 < 1024 * 1024, 'sparse: no blocks written')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
