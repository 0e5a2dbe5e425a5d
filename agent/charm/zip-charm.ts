import { inflateRawSync } from 'node:zlib'
import { InvalidCharmArchiveError } from '../../runtime/charm/charm-error.ts'
import { limits } from '../../runtime/limits.ts'
import { entryPathProblem, type CharmArchiveEntry } from './charm-archive.ts'

/**
 * A pre-built charm archive (`.charm`, a zip file, as charmcraft and Juju write them)
 * read into archive entries as it is: Juju deploys such an archive unchanged, so the
 * mode of each file stays what the zip says (a hook stored 0644 stays not executable,
 * and fails when it runs), symlinks stay links, and no ignore rule applies.
 *
 * Modes come from the upper 16 bits of a member's external attributes when the zip was
 * made on Unix (as Go's archive/zip FileHeader.Mode reads them); otherwise a name ending
 * in `/` is a directory and anything else a 0644 file. Only stored and deflated members
 * are read; zip64, encryption and multi-disk archives are refused. Parent directories a
 * zip leaves implicit become directory entries. The entries still go through
 * readCharmArchive's checks when the charm is unpacked.
 */

const endOfCentralDirectory = 0x06054b50
const centralHeader = 0x02014b50
const localHeader = 0x04034b50
const endRecordBytes = 22
const commentBytesMax = 0xffff
const hostUnix = 3
const fileTypeMask = 0o170000
const typeDirectory = 0o040000
const typeSymlink = 0o120000
const typeRegular = 0o100000

export function readZipCharm (bytes: Uint8Array, label: string): CharmArchiveEntry[] {
  const subject = `cannot read charm archive ${JSON.stringify(label)}`
  const fail = (entry: string | undefined, expected: string, got: string): never => {
    throw new InvalidCharmArchiveError(subject, entry, expected, got)
  }
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const end = findEndRecord(buffer)
  if (end === -1) fail(undefined, 'a zip file (.charm)', 'no zip end-of-central-directory record')
  const count = buffer.readUInt16LE(end + 10)
  const directoryOffset = buffer.readUInt32LE(end + 16)
  if (buffer.readUInt16LE(end + 4) !== 0 || count !== buffer.readUInt16LE(end + 8)) fail(undefined, 'a single-disk zip file', 'a multi-disk archive')
  if (count === 0xffff || directoryOffset === 0xffffffff) fail(undefined, 'a zip file without zip64 records', 'a zip64 archive')
  if (count > limits.charmArchiveEntriesMax) fail(undefined, `at most ${limits.charmArchiveEntriesMax} entries`, `${count}`)

  const entries = new Map<string, CharmArchiveEntry>()
  let totalBytes = 0
  let at = directoryOffset
  for (let index = 0; index < count; index++) {
    if (at + 46 > buffer.length || buffer.readUInt32LE(at) !== centralHeader) fail(undefined, `central directory entry #${index}`, 'bytes that are not one')
    const madeBy = buffer.readUInt16LE(at + 4) >> 8
    const flags = buffer.readUInt16LE(at + 8)
    const method = buffer.readUInt16LE(at + 10)
    const compressedSize = buffer.readUInt32LE(at + 20)
    const size = buffer.readUInt32LE(at + 24)
    const nameLength = buffer.readUInt16LE(at + 28)
    const extraLength = buffer.readUInt16LE(at + 30)
    const commentLength = buffer.readUInt16LE(at + 32)
    const external = buffer.readUInt32LE(at + 38)
    const offset = buffer.readUInt32LE(at + 42)
    const rawName = buffer.subarray(at + 46, at + 46 + nameLength).toString('utf8')
    at += 46 + nameLength + extraLength + commentLength
    const isDirName = rawName.endsWith('/')
    const path = rawName.replace(/\/+$/, '')
    const pathProblem = entryPathProblem(path)
    if (pathProblem !== undefined) fail(rawName, pathProblem, JSON.stringify(rawName))
    if ((flags & 0x1) !== 0) fail(rawName, 'an unencrypted member', 'an encrypted one')
    const unixMode = madeBy === hostUnix ? external >>> 16 : 0
    const type = unixMode & fileTypeMask
    if (isDirName || type === typeDirectory) {
      entries.set(path, { path, dir: true })
      continue
    }
    if (type !== 0 && type !== typeRegular && type !== typeSymlink) fail(rawName, 'a regular file, directory or symlink', `file type 0o${type.toString(8)}`)
    totalBytes += size
    if (totalBytes > limits.charmArchiveBytesMax) fail(rawName, `at most ${limits.charmArchiveBytesMax} bytes of files in the charm`, `${totalBytes} bytes so far`)
    const data = memberData(buffer, offset, method, compressedSize, size, rawName, fail)
    if (type === typeSymlink) entries.set(path, { path, link: data.toString('utf8') })
    else entries.set(path, { path, mode: (unixMode & 0o111) !== 0 ? 0o755 : 0o644, data: new Uint8Array(data) })
  }
  addImplicitDirectories(entries)
  return [...entries.values()].sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
}

function findEndRecord (buffer: Buffer): number {
  const lowest = Math.max(0, buffer.length - endRecordBytes - commentBytesMax)
  for (let at = buffer.length - endRecordBytes; at >= lowest; at--) {
    if (buffer.readUInt32LE(at) === endOfCentralDirectory) return at
  }
  return -1
}

type Fail = (entry: string | undefined, expected: string, got: string) => never

function memberData (buffer: Buffer, offset: number, method: number, compressedSize: number, size: number, name: string, fail: Fail): Buffer {
  if (offset + 30 > buffer.length || buffer.readUInt32LE(offset) !== localHeader) fail(name, 'a local file header', 'bytes that are not one')
  const start = offset + 30 + buffer.readUInt16LE(offset + 26) + buffer.readUInt16LE(offset + 28)
  if (start + compressedSize > buffer.length) fail(name, `${compressedSize} bytes of data`, 'a truncated archive')
  const raw = buffer.subarray(start, start + compressedSize)
  let data: Buffer
  if (method === 0) data = raw
  else if (method === 8) {
    try {
      // Bounded by the size the directory claims, so a zip bomb cannot inflate further.
      data = inflateRawSync(raw, { maxOutputLength: Math.max(1, size) })
    } catch (cause) {
      return fail(name, 'deflated data', JSON.stringify((cause as Error).message))
    }
  } else return fail(name, 'a stored or deflated member', `compression method ${method}`)
  if (data.length !== size) fail(name, `${size} bytes once inflated`, `${data.length}`)
  return data
}

/** Zips may omit directory members; the archive format wants every parent as an entry. */
function addImplicitDirectories (entries: Map<string, CharmArchiveEntry>): void {
  for (const path of [...entries.keys()]) {
    let slash = path.lastIndexOf('/')
    while (slash > 0) {
      const parent = path.slice(0, slash)
      if (!entries.has(parent)) entries.set(parent, { path: parent, dir: true })
      slash = parent.lastIndexOf('/')
    }
  }
}
