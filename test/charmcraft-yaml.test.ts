/**
 * The unified charmcraft.yaml stands in for metadata.yaml, config.yaml and actions.yaml
 * where they are absent, and the derived files go into the archive as `charmcraft pack`
 * writes them (canonical/charmcraft charmfiles: the metadata keys of
 * charmcraft/models/metadata.py), because Juju reads only the three files
 * (juju/juju internal/charm/charmdir.go ReadCharmDir).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { packCharm, readCharmArchive, unpackCharm } from '../agent/charm/charm-archive.ts'
import { loadCharmArchive } from '../agent/charm/charm-file.ts'
import { loadCharmDir } from '../agent/charm/load-charm.ts'
import { charmHookNames } from '../runtime/charm/charm-hook-names.ts'
import { rejects } from './support/rejects.ts'
import { zipFile } from './support/zip-file.ts'

const test = suite('charmcraft.yaml')

const charmcraft = `name: ops-app
type: charm
title: An ops application
summary: A Python charm on the ops framework
description: |
  Packed by charmcraft from one charmcraft.yaml.
bases:
  - build-on: [{name: ubuntu, channel: "22.04"}]
    run-on: [{name: ubuntu, channel: "22.04"}]
platforms:
  ubuntu@22.04:amd64:
parts:
  charm: {plugin: charm}
requires:
  db: {interface: pgsql}
provides:
  website: {interface: http}
peers:
  cluster: {interface: ops-app-peers}
storage:
  data: {type: filesystem, multiple: {range: 0-}}
config:
  options:
    port: {type: int, default: 8080, description: Where to listen.}
actions:
  backup:
    description: Take a backup.
    params:
      target: {type: string}
`

async function withDir<T> (files: Record<string, string>, run: (dir: string, base: string) => Promise<T>): Promise<T> {
  const base = await mkdtemp(join(tmpdir(), 'cantrip-charmcraft-'))
  try {
    const dir = join(base, 'ops-app')
    await mkdir(dir)
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true })
      await writeFile(join(dir, path), content)
    }
    return await run(dir, base)
  } finally {
    await rm(base, { recursive: true, force: true })
  }
}

test('a directory with only charmcraft.yaml loads, and packs with the three files charmcraft writes', async () => {
  await withDir({ 'charmcraft.yaml': charmcraft, dispatch: '#!/bin/sh\n' }, async (dir, base) => {
    const charm = await loadCharmDir(dir)
    assert.is(charm.summary.name, 'ops-app')
    assert.equal(Object.keys(charm.summary.requires ?? {}), ['db'])
    assert.equal(Object.keys(charm.summary.provides ?? {}), ['website'])
    assert.equal(Object.keys(charm.summary.peers ?? {}), ['cluster'])
    assert.equal(charm.summary.config, { port: { type: 'int', default: 8080 } })
    assert.equal(charm.summary.actions?.['backup']?.description, 'Take a backup.')
    assert.equal(Object.keys(charm.summary.actions ?? {}), ['backup'])
    assert.is(charm.summary.storage?.data?.countMin, 0)
    assert.is(charm.metadata.format, 2)
    assert.equal(Object.keys(charm.generated).sort(), ['actions.yaml', 'config.yaml', 'metadata.yaml'])

    const packed = await packCharm(dir, { hooks: charmHookNames(charm.summary), generated: charm.generated })
    assert.equal(readCharmArchive(packed.bytes, packed.hash).map(entry => entry.path), ['actions.yaml', 'charmcraft.yaml', 'config.yaml', 'dispatch', 'metadata.yaml'])
    const unpacked = join(base, 'unpacked')
    await unpackCharm(packed.bytes, packed.hash, unpacked)
    const again = await loadCharmDir(unpacked)
    assert.equal(again.summary, charm.summary, 'the unpacked charm reads the same from the generated files')
    assert.equal(again.generated, {})
    const metadata = await readFile(join(unpacked, 'metadata.yaml'), 'utf8')
    assert.match(metadata, /^display-name: An ops application$/m)
    assert.not.match(metadata, /^(bases|platforms|parts|type|config|actions):/m)
  })
})

test('files of its own win over charmcraft.yaml; the rest still comes from it', async () => {
  const metadata = 'name: ops-app\nsummary: s\ndescription: d\n'
  await withDir({ 'charmcraft.yaml': charmcraft, 'metadata.yaml': metadata, 'actions.yaml': 'other: {description: Its own.}\n' }, async dir => {
    const charm = await loadCharmDir(dir)
    assert.equal(charm.summary.requires, {}, 'metadata.yaml wins')
    assert.equal(charm.summary.actions?.['other']?.description, 'Its own.')
    assert.equal(Object.keys(charm.summary.actions ?? {}), ['other'])
    assert.equal(charm.summary.config, { port: { type: 'int', default: 8080 } }, 'config from charmcraft.yaml')
    assert.equal(Object.keys(charm.generated), ['config.yaml'])
  })
})

test('a charmcraft.yaml of another type, or with a bad field, is refused with one line', async () => {
  await withDir({ 'charmcraft.yaml': 'type: bundle\nname: b\n' }, async dir => {
    const error = await rejects(loadCharmDir(dir), 'InvalidCharmError')
    assert.is(error.message, 'charm "ops-app": charmcraft.yaml: field "type": expected "charm", got "bundle"')
  })
  await withDir({ 'charmcraft.yaml': 'name: ops-app\nsummary: s\ndescription: d\nrequires:\n  db: {interface: 7}\n' }, async dir => {
    const error = await rejects(loadCharmDir(dir), 'InvalidCharmError')
    assert.match(error.message, /^charm "ops-app": metadata.yaml: field "requires.db.interface": expected /)
  })
})

test('a packed .charm with only charmcraft.yaml gets the files charmcraft would have written', async () => {
  await withDir({}, async (_, base) => {
    const file = join(base, 'ops-app.charm')
    await writeFile(file, zipFile([{ name: 'charmcraft.yaml', data: charmcraft, deflate: true }, { name: 'dispatch', data: '#!/bin/sh\n', mode: 0o100755 }]))
    const { charm, packed } = await loadCharmArchive(file)
    assert.is(charm.summary.name, 'ops-app')
    assert.equal(readCharmArchive(packed.bytes, packed.hash).map(entry => entry.path), ['actions.yaml', 'charmcraft.yaml', 'config.yaml', 'dispatch', 'metadata.yaml'])
  })
})

test.run()
