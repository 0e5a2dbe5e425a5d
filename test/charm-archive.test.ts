import { execFileSync } from 'node:child_process'
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, truncate, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateRawSync } from 'node:zlib'
import { Packr } from 'msgpackr'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { charmArchiveHash, packCharm, readCharmArchive, unpackCharm } from '../agent/charm/charm-archive.ts'
import { limits } from '../runtime/limits.ts'
import { rejects } from './support/rejects.ts'

const test = suite('charm archive')

/** A scratch directory for one test, removed afterwards. */
async function withTemp<T> (run: (base: string) => Promise<T>): Promise<T> {
  const base = await mkdtemp(join(tmpdir(), 'cantrip-charm-archive-'))
  try {
    return await run(base)
  } finally {
    await rm(base, { recursive: true, force: true })
  }
}

interface FileSpec { content: string, mode?: number }

async function writeTree (root: string, files: Record<string, string | FileSpec>, order: 'forward' | 'reverse' = 'forward'): Promise<void> {
  const entries = Object.entries(files)
  if (order === 'reverse') entries.reverse()
  await mkdir(root, { recursive: true })
  for (const [path, spec] of entries) {
    const { content, mode } = typeof spec === 'string' ? { content: spec, mode: 0o644 } : { content: spec.content, mode: spec.mode ?? 0o644 }
    await mkdir(join(root, path, '..'), { recursive: true })
    await writeFile(join(root, path), content)
    await chmod(join(root, path), mode)
  }
}

/** Every entry under `root` as `path kind mode/target/content`, sorted. */
async function listTree (root: string): Promise<string[]> {
  const out: string[] = []
  const pending = ['']
  while (pending.length > 0) {
    const dir = pending.pop()!
    for (const name of await readdir(join(root, dir))) {
      const path = dir === '' ? name : `${dir}/${name}`
      const info = await lstat(join(root, path))
      if (info.isDirectory()) {
        out.push(`${path} dir ${(info.mode & 0o777).toString(8)}`)
        pending.push(path)
      } else if (info.isSymbolicLink()) {
        out.push(`${path} -> ${await readlink(join(root, path))}`)
      } else {
        out.push(`${path} ${(info.mode & 0o777).toString(8)} ${await readFile(join(root, path), 'utf8')}`)
      }
    }
  }
  return out.sort()
}

const charmFiles: Record<string, string | FileSpec> = {
  'metadata.yaml': 'name: web\nsummary: s\ndescription: d\n',
  'config.yaml': 'options: {}\n',
  'hooks/install': { content: '#!/bin/sh\necho installed\n', mode: 0o755 },
  'hooks/start': { content: '#!/bin/sh\n', mode: 0o700 },
  'dispatch': { content: '#!/bin/sh\n', mode: 0o775 },
  'src/lib/helper.py': 'print(1)\n',
  'README.md': { content: 'readme\n', mode: 0o600 }
}

// Envelopes built by hand, for archives a packer would never produce.
const packr = new Packr({ useRecords: false })
function archiveOf (files: unknown[], envelope: Record<string, unknown> = {}): { bytes: Uint8Array, hash: string } {
  const packed = deflateRawSync(packr.pack({ format: 'cantrip-charm', version: 1, files, ...envelope }))
  const bytes = new Uint8Array(packed.buffer, packed.byteOffset, packed.byteLength)
  return { bytes, hash: charmArchiveHash(bytes) }
}
const file = (path: string, content = 'x'): Record<string, unknown> => ({ path, mode: 0o644, data: new TextEncoder().encode(content) })

/** Unpacking must be refused with this message, leaving neither the destination nor a temporary directory behind. */
async function refusedUnpack (bytes: Uint8Array, hash: string, message: string | RegExp): Promise<void> {
  await withTemp(async base => {
    const dest = join(base, 'charm')
    const error = await rejects(unpackCharm(bytes, hash, dest), 'InvalidCharmArchiveError')
    if (typeof message === 'string') assert.is(error.message, message)
    else assert.match(error.message, message)
    assert.not.match(error.message, /\n/)
    assert.equal(await readdir(base), [], 'nothing written')
  })
}

// ---------------------------------------------------------------------------------

test('a round trip keeps content, the executable bit, symlinks inside the charm and empty directories', async () => {
  await withTemp(async base => {
    const source = join(base, 'source')
    await writeTree(source, charmFiles)
    await mkdir(join(source, 'empty'))
    await symlink('install', join(source, 'hooks', 'config-changed'))
    await symlink('../src/lib', join(source, 'hooks', 'lib'))
    await mkdir(join(source, '.git', 'objects'), { recursive: true })
    await writeFile(join(source, '.git', 'HEAD'), 'ref: refs/heads/main\n')

    const packed = await packCharm(source)
    assert.match(packed.hash, /^[0-9a-f]{64}$/)
    assert.is(packed.hash, charmArchiveHash(packed.bytes))
    const dest = join(base, 'dest')
    await unpackCharm(packed.bytes, packed.hash, dest)
    assert.equal(await listTree(dest), [
      'README.md 644 readme\n',
      'config.yaml 644 options: {}\n',
      'dispatch 755 #!/bin/sh\n',
      'empty dir 755',
      'hooks dir 755',
      'hooks/config-changed -> install',
      'hooks/install 755 #!/bin/sh\necho installed\n',
      'hooks/lib -> ../src/lib',
      'hooks/start 755 #!/bin/sh\n',
      'metadata.yaml 644 name: web\nsummary: s\ndescription: d\n',
      'src dir 755',
      'src/lib dir 755',
      'src/lib/helper.py 644 print(1)\n'
    ])
    assert.equal(readCharmArchive(packed.bytes, packed.hash).map(entry => entry.path), [
      'README.md', 'config.yaml', 'dispatch', 'empty', 'hooks', 'hooks/config-changed', 'hooks/install', 'hooks/lib', 'hooks/start',
      'metadata.yaml', 'src', 'src/lib', 'src/lib/helper.py'
    ], 'entries sorted by path; .git skipped')
    // Packing the unpacked tree gives the same archive.
    assert.is((await packCharm(dest)).hash, packed.hash)
  })
})

test('content-addressed: the same content gives the same bytes whatever the mtimes, creation order or permissions beyond x', async () => {
  await withTemp(async base => {
    await writeTree(join(base, 'a'), charmFiles, 'forward')
    await writeTree(join(base, 'b'), Object.fromEntries(Object.entries(charmFiles).map(([path, spec]) =>
      [path, typeof spec === 'string' ? { content: spec, mode: 0o600 } : { content: spec.content, mode: (spec.mode ?? 0o644) & 0o111 ? 0o711 : 0o640 }])), 'reverse')
    await utimes(join(base, 'b', 'metadata.yaml'), new Date(0), new Date(0))
    const a = await packCharm(join(base, 'a'))
    const b = await packCharm(join(base, 'b'))
    assert.is(a.hash, b.hash)
    assert.equal(a.bytes, b.bytes)

    await chmod(join(base, 'b', 'README.md'), 0o755)
    assert.is.not((await packCharm(join(base, 'b'))).hash, a.hash, 'the executable bit is content')
    await chmod(join(base, 'b', 'README.md'), 0o600)
    await writeFile(join(base, 'b', 'README.md'), 'readme!\n')
    assert.is.not((await packCharm(join(base, 'b'))).hash, a.hash)
  })
})

test('packing refuses symlinks that leave the charm, absolute symlinks and special files', async () => {
  await withTemp(async base => {
    const source = join(base, 'charm')
    await writeTree(source, { 'metadata.yaml': 'name: web\n' })
    await symlink('../../etc/passwd', join(source, 'hooks-link'))
    let error = await rejects(packCharm(source), 'InvalidCharmArchiveError')
    assert.is(error.message, `cannot pack charm ${JSON.stringify(source)}: entry "hooks-link": expected a symlink to a relative path inside the charm, got a link to "../../etc/passwd"`)
    await rm(join(source, 'hooks-link'))

    await mkdir(join(source, 'd'))
    await symlink('..', join(source, 'd', 'up'))
    await symlink('d/up/..', join(source, 'sneaky'))
    error = await rejects(packCharm(source), 'InvalidCharmArchiveError')
    assert.is(error.message, `cannot pack charm ${JSON.stringify(source)}: entry "sneaky": expected a symlink to a relative path inside the charm, with ".." only at its start, got a link to "d/up/.."`)
    await rm(join(source, 'sneaky'))
    await rm(join(source, 'd'), { recursive: true })

    await symlink(join(source, 'metadata.yaml'), join(source, 'abs'))
    error = await rejects(packCharm(source), 'InvalidCharmArchiveError')
    assert.match(error.message, /entry "abs": expected a symlink to a relative path inside the charm, got a link to "\//)
    await rm(join(source, 'abs'))

    execFileSync('mkfifo', [join(source, 'pipe')])
    error = await rejects(packCharm(source), 'InvalidCharmArchiveError')
    assert.is(error.message, `cannot pack charm ${JSON.stringify(source)}: entry "pipe": expected a regular file, directory or symlink, got a FIFO`)
  })
})

test('packing refuses a charm over charmArchiveBytesMax before reading it', async () => {
  await withTemp(async base => {
    const source = join(base, 'charm')
    await writeTree(source, { 'metadata.yaml': 'name: web\n' })
    // Sparse: costs no disk, and the size alone refuses it.
    await writeFile(join(source, 'big.bin'), '')
    await truncate(join(source, 'big.bin'), limits.charmArchiveBytesMax + 1)
    const error = await rejects(packCharm(source), 'InvalidCharmArchiveError')
    assert.is(error.message, `cannot pack charm ${JSON.stringify(source)}: entry "big.bin": expected at most ${limits.charmArchiveBytesMax} bytes of files in the charm, got ${limits.charmArchiveBytesMax + 1} bytes so far`)
  })
})

test('packing refuses paths over charmArchivePathBytesMax', async () => {
  await withTemp(async base => {
    const source = join(base, 'charm')
    let path = ''
    // Each segment stays under NAME_MAX; together they pass the archive limit.
    while (Buffer.byteLength(path) <= limits.charmArchivePathBytesMax) path += (path === '' ? '' : '/') + 'd'.repeat(200)
    await mkdir(join(source, path), { recursive: true })
    const error = await rejects(packCharm(source), 'InvalidCharmArchiveError')
    assert.match(error.message, new RegExp(`expected a path of at most ${limits.charmArchivePathBytesMax} bytes, got \\d+ bytes$`))
  })
})

test('unpacking checks the hash before anything else', async () => {
  const { bytes, hash } = archiveOf([file('a')])
  const wrong = '0'.repeat(64)
  await refusedUnpack(bytes, wrong, `cannot unpack charm archive "0000000000000000": expected content with sha256 ${wrong}, got sha256 ${hash}`)
  await refusedUnpack(bytes, hash.toUpperCase(), /expected a sha256 hash in lower-case hex, got "[0-9A-F]{57}\.\.\."$/)
  const tampered = bytes.slice()
  tampered[tampered.length - 1]! ^= 1
  await refusedUnpack(tampered, hash, /^cannot unpack charm archive "[0-9a-f]{16}": expected content with sha256 [0-9a-f]{64}, got sha256 [0-9a-f]{64}$/)
})

test('unpacking refuses paths that could escape: "..", absolute, empty segments, NUL', async () => {
  const cases: Array<[string, string]> = [
    ['../x', '"../x"'],
    ['a/../../x', '"a/../../x"'],
    ['/etc/passwd', '"/etc/passwd"'],
    ['./x', '"./x"'],
    ['a//b', '"a//b"'],
    ['a/', '"a/"'],
    ['', '""'],
    ['a\0b', '"a\\u0000b"']
  ]
  for (const [path, rendered] of cases) {
    const { bytes, hash } = archiveOf([{ path: 'a', dir: true }, file(path)])
    await refusedUnpack(bytes, hash, `cannot unpack charm archive ${JSON.stringify(hash.slice(0, 16))}: entry ${JSON.stringify(path)}: expected a relative path of plain names separated by "/" (no "", "." or ".." segments), got ${rendered}`)
  }
})

test('unpacking refuses symlinks that resolve outside the charm, and writing through a symlink', async () => {
  let archive = archiveOf([{ path: 'hooks', dir: true }, { path: 'hooks/install', link: '../../bin/sh' }])
  await refusedUnpack(archive.bytes, archive.hash, /entry "hooks\/install": expected a symlink to a relative path inside the charm, got a link to "\.\.\/\.\.\/bin\/sh"$/)
  archive = archiveOf([{ path: 'x', link: '/etc' }])
  await refusedUnpack(archive.bytes, archive.hash, /entry "x": expected a symlink to a relative path inside the charm, got a link to "\/etc"$/)
  // A link inside the charm is fine, but nothing may be written through it.
  archive = archiveOf([{ path: 'lib', dir: true }, { path: 'out', link: 'lib' }, file('out/evil')])
  await refusedUnpack(archive.bytes, archive.hash, /entry "out\/evil": expected its parent "out" as a directory entry, got a link$/)
  // Lexically inside, but "up" climbs out first: ".." after a name is refused.
  archive = archiveOf([{ path: 'd', dir: true }, { path: 'd/up', link: '..' }, { path: 'x', link: 'd/up/..' }])
  await refusedUnpack(archive.bytes, archive.hash, /entry "x": expected a symlink to a relative path inside the charm, with "\.\." only at its start, got a link to "d\/up\/\.\."$/)
  archive = archiveOf([file('missing-parent/x')])
  await refusedUnpack(archive.bytes, archive.hash, /entry "missing-parent\/x": expected its parent "missing-parent" as a directory entry, got no entry$/)
})

test('unpacking refuses duplicate paths, bad modes and malformed entries', async () => {
  let archive = archiveOf([file('a', 'one'), file('a', 'two')])
  await refusedUnpack(archive.bytes, archive.hash, /entry "a": expected each path once, got a second entry with this path$/)
  archive = archiveOf([{ path: 'a', dir: true }, file('a')])
  await refusedUnpack(archive.bytes, archive.hash, /entry "a": expected each path once, got a second entry with this path$/)
  archive = archiveOf([{ path: 'a', mode: 0o4755, data: new Uint8Array() }])
  await refusedUnpack(archive.bytes, archive.hash, /entry "a": expected mode 0o755 or 0o644, got 2541$/)
  archive = archiveOf([{ path: 'a', mode: 0o644, data: 'text' }])
  await refusedUnpack(archive.bytes, archive.hash, /entry "a": expected file data as bytes, got "text"$/)
  archive = archiveOf([{ ...file('a'), owner: 'root' }])
  await refusedUnpack(archive.bytes, archive.hash, /entry "a": expected a directory \{path, dir\}, a file \{path, mode, data\} or a symlink \{path, link\}, got an object/)
  archive = archiveOf([{ name: 'a' }])
  await refusedUnpack(archive.bytes, archive.hash, /entry "#0": expected an entry with a string "path", got an object with keys \["name"\]$/)
})

test('unpacking refuses envelopes that are not cantrip-charm version 1', async () => {
  let archive = archiveOf([], { format: 'tar' })
  await refusedUnpack(archive.bytes, archive.hash, /expected format "cantrip-charm", got "tar"$/)
  archive = archiveOf([], { version: 2 })
  await refusedUnpack(archive.bytes, archive.hash, /expected version 1, got 2$/)
  archive = archiveOf([], { extra: true })
  await refusedUnpack(archive.bytes, archive.hash, /expected a map with exactly "format", "version" and "files", got an object/)
  const garbage = new Uint8Array(deflateRawSync(new Uint8Array([0xc1, 0xc1])))
  await refusedUnpack(garbage, charmArchiveHash(garbage), /expected a msgpack-encoded archive, got ".*"$/)
  // Not deflated at all: refused before msgpack sees it.
  const raw = new Uint8Array([0xff, 0xff, 0xff])
  await refusedUnpack(raw, charmArchiveHash(raw), /expected deflated data of at most \d+ bytes once inflated, got ".*"$/)
})

test(`unpacking refuses more than charmArchiveEntriesMax entries, before writing any`, async () => {
  const files = [{ path: 'd', dir: true }, ...Array.from({ length: limits.charmArchiveEntriesMax }, (_, i) => file(`d/f${i}`))]
  const archive = archiveOf(files)
  await refusedUnpack(archive.bytes, archive.hash, `cannot unpack charm archive ${JSON.stringify(archive.hash.slice(0, 16))}: expected at most ${limits.charmArchiveEntriesMax} entries, got ${limits.charmArchiveEntriesMax + 1}`)
})

test(`unpacking refuses more than charmArchiveBytesMax of content, before writing any`, async () => {
  const half = new Uint8Array(limits.charmArchiveBytesMax / 2 + 1)
  const archive = archiveOf([{ path: 'a', mode: 0o644, data: half }, { path: 'b', mode: 0o644, data: half }])
  await refusedUnpack(archive.bytes, archive.hash, new RegExp(`entry "b": expected at most ${limits.charmArchiveBytesMax} bytes of files in the archive, got ${limits.charmArchiveBytesMax + 2} bytes so far$`))
})

test('unpacking refuses an existing destination and leaves it untouched', async () => {
  await withTemp(async base => {
    const dest = join(base, 'charm')
    await mkdir(dest)
    await writeFile(join(dest, 'keep'), 'mine')
    const { bytes, hash } = archiveOf([file('a')])
    const error = await rejects(unpackCharm(bytes, hash, dest), 'InvalidCharmArchiveError')
    assert.match(error.message, /expected a destination that does not exist yet .*, got an existing path$/)
    assert.equal(await readdir(base), ['charm'])
    assert.equal(await readdir(dest), ['keep'])
  })
})

test('a failure while writing removes the temporary directory', async () => {
  // A name longer than the filesystem's NAME_MAX passes the archive's checks (it is a
  // plain name within charmArchivePathBytesMax) but fails when written, after "a" was.
  const { bytes, hash } = archiveOf([file('a'), file('n'.repeat(300))])
  await refusedUnpack(bytes, hash, new RegExp(`expected to write ".*charm", got ENAMETOOLONG$`))
})

test.run()
