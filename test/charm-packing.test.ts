/**
 * A charm packed as Juju packs it. A directory (Juju's internal/charm/charmdir.go
 * writeArchive and zipPacker.visit, jujuignore.go and jujuignore_test.go): the files
 * directly in hooks/ named as one of the charm's hooks (meta.go Meta.Hooks: unit, secret,
 * relation hooks per endpoint, storage hooks per storage) are made executable, other
 * files keep their mode (dispatch too: Juju's visit only looks in hooks/), symlinks stay
 * links, `.jujuignore` and Juju's defaults (`.git`, `.svn`, `.hg`, `.bzr`, `.tox`,
 * `/build/`, `/revision`, `/version`, `.jujuignore`) decide what is left out, and the
 * root `revision` is re-written as the integer Juju reads. A pre-built .charm (a zip) is
 * taken as it is, modes and all.
 */
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { packCharm, readCharmArchive, unpackCharm } from '../agent/charm/charm-archive.ts'
import { loadCharmArchive } from '../agent/charm/charm-file.ts'
import { JujuIgnore } from '../agent/charm/jujuignore.ts'
import { readZipCharm } from '../agent/charm/zip-charm.ts'
import { charmHookNames } from '../runtime/charm/charm-hook-names.ts'
import { rejects } from './support/rejects.ts'
import { zipFile } from './support/zip-file.ts'

const test = suite('charm packing as Juju')

async function withTemp<T> (run: (base: string) => Promise<T>): Promise<T> {
  const base = await mkdtemp(join(tmpdir(), 'cantrip-charm-packing-'))
  try {
    return await run(base)
  } finally {
    await rm(base, { recursive: true, force: true })
  }
}

async function writeFiles (root: string, files: Record<string, string>, mode = 0o644): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true })
    await writeFile(join(root, path), content)
    await chmod(join(root, path), mode)
  }
}

/** path → mode (octal) or `-> target` or `dir`, for every archive entry. */
function modes (bytes: Uint8Array, hash: string): Record<string, string> {
  return Object.fromEntries(readCharmArchive(bytes, hash).map(entry =>
    [entry.path, 'dir' in entry ? 'dir' : 'link' in entry ? `-> ${entry.link}` : entry.mode.toString(8)]))
}

const metadata = 'name: db-app\nsummary: s\ndescription: d\nrequires:\n  db: pgsql\npeers:\n  cluster: ring\nstorage:\n  data:\n    type: filesystem\n'
const hooks = charmHookNames({ requires: { db: 'pgsql' }, peers: { cluster: 'ring' }, storage: { data: { type: 'filesystem' } } })

test('the hook names Juju knows: unit and secret hooks, five per endpoint, two per storage', () => {
  for (const name of ['install', 'start', 'config-changed', 'upgrade-charm', 'stop', 'remove', 'leader-elected', 'leader-deposed',
    'leader-settings-changed', 'update-status', 'secret-changed', 'secret-expired', 'secret-remove', 'secret-rotate',
    'db-relation-created', 'db-relation-joined', 'db-relation-changed', 'db-relation-departed', 'db-relation-broken',
    'cluster-relation-joined', 'data-storage-attached', 'data-storage-detaching']) assert.ok(hooks.has(name), name)
  assert.is(hooks.size, 10 + 4 + 2 * 5 + 2)
  assert.not.ok(hooks.has('website-relation-joined'))
})

test('a directory with 0644 hooks: known hooks become executable, other files keep their mode, symlinks stay links', async () => {
  await withTemp(async base => {
    const dir = join(base, 'charm')
    await writeFiles(dir, {
      'metadata.yaml': metadata,
      'hooks/install': '#!/bin/sh\n',
      'hooks/db-relation-joined': '#!/bin/sh\n',
      'hooks/cluster-relation-changed': '#!/bin/sh\n',
      'hooks/data-storage-attached': '#!/bin/sh\n',
      'hooks/website-relation-joined': '#!/bin/sh\n',
      'hooks/otherdata': 'x\n',
      'hooks/subdir/install': '#!/bin/sh\n',
      'dispatch': '#!/bin/sh\n',
      'src/install': '#!/bin/sh\n'
    })
    await symlink('install', join(dir, 'hooks', 'config-changed'))
    const packed = await packCharm(dir, { hooks })
    assert.equal(modes(packed.bytes, packed.hash), {
      dispatch: '644',
      hooks: 'dir',
      'hooks/cluster-relation-changed': '755',
      'hooks/config-changed': '-> install',
      'hooks/data-storage-attached': '755',
      'hooks/db-relation-joined': '755',
      'hooks/install': '755',
      'hooks/otherdata': '644',
      'hooks/subdir': 'dir',
      'hooks/subdir/install': '644',
      'hooks/website-relation-joined': '644',
      'metadata.yaml': '644',
      src: 'dir',
      'src/install': '644'
    })
    // Unpacked, the hooks run: the unit's copy has the execute bits.
    const dest = join(base, 'unpacked')
    await unpackCharm(packed.bytes, packed.hash, dest)
    assert.is((await lstat(join(dest, 'hooks', 'install'))).mode & 0o777, 0o755)
    assert.is(await readlink(join(dest, 'hooks', 'config-changed')), 'install')
    // Without hook names (a plain copy), modes are kept as they are.
    const plain = await packCharm(dir)
    assert.is(modes(plain.bytes, plain.hash)['hooks/install'], '644')
  })
})

test('Juju\'s default ignore rules with no .jujuignore; the root revision is re-written as its integer', async () => {
  await withTemp(async base => {
    const dir = join(base, 'charm')
    await writeFiles(dir, {
      'metadata.yaml': metadata,
      '.git/HEAD': 'ref\n', 'src/.git/HEAD': 'ref\n', '.svn/x': '', '.hg/x': '', '.bzr/x': '', '.tox/x': '', 'lib/.tox/x': '',
      'build/out': '', 'lib/build/kept': '', revision: ' 42\nextra', version: 'v1\n', 'lib/revision': 'kept', 'lib/version': 'kept',
      '.gitignore': 'kept\n'
    })
    const packed = await packCharm(dir, { hooks })
    assert.equal(Object.keys(modes(packed.bytes, packed.hash)), [
      '.gitignore', 'lib', 'lib/build', 'lib/build/kept', 'lib/revision', 'lib/version', 'metadata.yaml', 'revision', 'src'
    ])
    const revision = readCharmArchive(packed.bytes, packed.hash).find(entry => entry.path === 'revision')
    assert.is(new TextDecoder().decode((revision as { data: Uint8Array }).data), '42')
    await writeFile(join(dir, 'revision'), 'seven\n')
    const error = await rejects(packCharm(dir, { hooks }), 'InvalidCharmArchiveError')
    assert.match(error.message, /entry "revision": expected an integer \(Juju: "invalid revision file"\), got "seven\\n"$/)
  })
})

test('.jujuignore: gitignore-like rules after the defaults, the last match winning, ignored directories not entered', async () => {
  await withTemp(async base => {
    const dir = join(base, 'charm')
    await writeFiles(dir, {
      'metadata.yaml': metadata,
      '.jujuignore': '# comment\n\n*.pyc\n/docs/\n!/docs/keep\ntests/\n!important.pyc\nsrc/**/gen\n  /notes.txt  \n\\#hash\n',
      'a.pyc': '', 'lib/b.pyc': '', 'lib/important.pyc': '', 'docs/keep': '', 'docs/x': '', 'lib/docs/y': '',
      'tests/t': '', 'lib/tests/t': '', 'src/gen': '', 'src/a/b/gen': '', 'src/other': '', 'notes.txt': '', 'lib/notes.txt': '', '#hash': ''
    })
    const packed = await packCharm(dir, { hooks })
    assert.equal(Object.keys(modes(packed.bytes, packed.hash)), [
      'lib', 'lib/docs', 'lib/docs/y', 'lib/important.pyc', 'lib/notes.txt', 'metadata.yaml', 'src', 'src/a', 'src/a/b', 'src/other'
    ])
    // The rule engine on its own, as jujuignore_test.go exercises it.
    const rules = JujuIgnore.parse('foo/bar\n/anchored\n*.{a,b}\nfile[0-9]\n!file7\ndir/**/deep\n')
    assert.ok(rules.ignores('foo/bar', false) && rules.ignores('x/foo/bar', false))
    assert.ok(rules.ignores('anchored', false) && !rules.ignores('x/anchored', false))
    assert.ok(rules.ignores('x.a', false) && rules.ignores('y/x.b', false) && !rules.ignores('x.c', false))
    assert.ok(rules.ignores('file3', false) && !rules.ignores('file7', false))
    assert.ok(rules.ignores('dir/deep', false) && rules.ignores('dir/1/2/deep', false))
  })
})

test('a .jujuignore that cannot be read is one line naming the file, the line and the rule', async () => {
  await withTemp(async base => {
    const dir = join(base, 'charm')
    await writeFiles(dir, { 'metadata.yaml': metadata, '.jujuignore': '*.pyc\nbad[\n' })
    const error = await rejects(packCharm(dir, { hooks }), 'InvalidCharmArchiveError')
    assert.match(error.message, /^cannot pack charm ".*": entry "\.jujuignore": expected a glob pattern on line 2 \(unclosed "\["\), got "bad\["$/)
  })
})

test('a pre-built .charm keeps its modes: a 0644 hook stays 0644; symlinks and implicit directories are kept', async () => {
  await withTemp(async base => {
    const file = join(base, 'db-app.charm')
    await writeFile(file, zipFile([
      { name: 'metadata.yaml', data: metadata, deflate: true },
      { name: 'hooks/install', data: '#!/bin/sh\n', mode: 0o100644 },
      { name: 'hooks/start', data: '#!/bin/sh\necho started\n', mode: 0o100755, deflate: true },
      { name: 'hooks/config-changed', data: 'start', mode: 0o120777 },
      { name: '.git/HEAD', data: 'kept as it is\n' },
      { name: 'empty/' }
    ]))
    const { charm, packed } = await loadCharmArchive(file)
    assert.is(charm.summary.name, 'db-app')
    assert.equal(modes(packed.bytes, packed.hash), {
      '.git': 'dir', '.git/HEAD': '644', empty: 'dir', hooks: 'dir', 'hooks/config-changed': '-> start',
      'hooks/install': '644', 'hooks/start': '755', 'metadata.yaml': '644'
    })
    const dest = join(base, 'unpacked')
    await unpackCharm(packed.bytes, packed.hash, dest)
    assert.is(await readFile(join(dest, 'hooks', 'start'), 'utf8'), '#!/bin/sh\necho started\n')
    assert.equal((await readdir(dest)).sort(), ['.git', 'empty', 'hooks', 'metadata.yaml'])
  })
})

test('a file that is not a zip, or a member that escapes, is refused with one line', async () => {
  assert.throws(() => readZipCharm(new TextEncoder().encode('not a zip at all, just text padding it out'), 'x.charm'),
    /^cannot read charm archive "x\.charm": expected a zip file \(\.charm\), got no zip end-of-central-directory record$/)
  await withTemp(async base => {
    const file = join(base, 'bad.charm')
    await writeFile(file, zipFile([{ name: 'metadata.yaml', data: metadata }, { name: '../escape', data: 'x' }]))
    const error = await rejects(loadCharmArchive(file), 'InvalidCharmArchiveError')
    assert.match(error.message, /^cannot read charm archive ".*bad\.charm": entry "\.\.\/escape": expected a relative path of plain names/)
  })
})

test.run()
