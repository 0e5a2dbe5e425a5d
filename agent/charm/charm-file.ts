import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { InvalidCharmArchiveError } from '../../runtime/charm/charm-error.ts'
import { limits } from '../../runtime/limits.ts'
import { generatedEntries, packEntries, unpackCharm, type PackedCharm } from './charm-archive.ts'
import { loadCharmDir, type LoadedCharm } from './load-charm.ts'
import { readZipCharm } from './zip-charm.ts'

/** Whether `path` names a pre-built charm archive rather than a charm directory. */
export function isCharmArchivePath (path: string): boolean {
  return /\.(charm|zip)$/i.test(path)
}

/**
 * A pre-built `.charm` as Juju deploys it: unchanged (zip-charm.ts), so its modes are
 * the archive's. It is unpacked into a temporary directory, with every check unpacking
 * makes, only to read its metadata, then removed.
 */
export async function loadCharmArchive (file: string): Promise<{ charm: LoadedCharm, packed: PackedCharm }> {
  const bytes = await readArchiveFile(file)
  const entries = readZipCharm(bytes, file)
  const packed = packEntries(entries)
  const temp = await mkdtemp(join(tmpdir(), 'cantrip-charm-'))
  try {
    const dir = join(temp, 'charm')
    await unpackCharm(packed.bytes, packed.hash, dir)
    const charm = { ...await loadCharmDir(dir), dir: file }
    // A .charm described only by charmcraft.yaml gets the files charmcraft would have packed.
    const extra = generatedEntries(entries, charm.generated)
    return { charm, packed: extra.length === 0 ? packed : packEntries([...entries, ...extra]) }
  } finally {
    await rm(temp, { recursive: true, force: true })
  }
}

/** The file, read to at most the archive limit (a zip is smaller than its content). */
async function readArchiveFile (file: string): Promise<Uint8Array> {
  const max = limits.charmArchiveBytesMax
  const handle = await open(file, 'r')
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw new InvalidCharmArchiveError(`cannot read charm archive ${JSON.stringify(file)}`, undefined, 'a regular file', 'another kind of file')
    if (info.size > max) throw new InvalidCharmArchiveError(`cannot read charm archive ${JSON.stringify(file)}`, undefined, `at most ${max} bytes`, `${info.size} bytes`)
    const buffer = new Uint8Array(info.size)
    let length = 0
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null)
      if (bytesRead === 0) break
      length += bytesRead
    }
    return buffer.subarray(0, length)
  } finally {
    await handle.close()
  }
}
