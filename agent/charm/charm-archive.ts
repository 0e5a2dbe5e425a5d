import { sha256Hex } from './charm-chunks.ts'
import { constants } from 'node:fs'
import { chmod, lstat, mkdir, mkdtemp, open, readdir, readlink, rename, rm, stat, symlink } from 'node:fs/promises'
import { basename, dirname, join, posix, resolve, sep } from 'node:path'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { Packr } from 'msgpackr'
import { InvalidCharmArchiveError } from '../../runtime/charm/charm-error.ts'
import { describeValue } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import { JujuIgnore, JujuIgnoreError } from './jujuignore.ts'

/**
 * A charm directory as one content-addressed byte string, and back.
 *
 * The archive is a raw-deflated (RFC 1951, as in a zip) msgpack encoding of
 * `{format: 'cantrip-charm', version: 1, files}`, where `files` lists every directory, regular file and symlink under the charm root,
 * sorted by path:
 *   `{path, dir: true}`                   a directory (so empty ones survive);
 *   `{path, mode: 0o755 | 0o644, data}`   a file; only the executable bit is kept;
 *   `{path, link}`                        a symlink whose target stays inside the charm.
 * Nothing else about a file is kept (no owner, no mtime), so the same content always
 * gives the same bytes and the same sha256, whatever the mtimes or readdir order (and
 * the same zlib at the same level deflates them alike, so a re-run deploy resumes an
 * interrupted upload of the same archive). The sha256 of the compressed bytes is the
 * charm's identity, as Juju's is the sha256 of its .charm zip.
 *
 * Packing a directory does what Juju's directory archiver does (internal/charm/
 * charmdir.go): it leaves out what `.jujuignore` and Juju's default rules exclude
 * (jujuignore.ts), makes every file directly in `hooks/` whose name is a hook of the
 * charm executable (`hooks` option; Juju's Meta.Hooks), keeps symlinks as links, and
 * carries a root `revision` file as the integer Juju reads from it. Anything else it
 * cannot represent is refused rather than dropped. Unpacking checks
 * the hash, then the envelope, then every entry, all before writing anything, writes
 * into a temporary directory beside the destination and renames it into place, so a
 * refused or failed unpack leaves nothing behind.
 */

export const charmArchiveFormat = 'cantrip-charm'
export const charmArchiveVersion = 1
/** zlib's default level, as zip writers (Go's archive/zip, charmcraft's zipfile) use. */
const charmArchiveDeflateLevel = 6

export interface PackCharmOptions {
  /** The charm's hook names (charmHookNames): such files in `hooks/` are packed executable. */
  readonly hooks?: ReadonlySet<string>
  /**
   * Files to add at the charm's root, by name, as `charmcraft pack` adds the metadata.yaml,
   * config.yaml and actions.yaml it derives from charmcraft.yaml (LoadedCharm.generated).
   */
  readonly generated?: Readonly<Record<string, string>>
}

export type CharmArchiveEntry =
  | { readonly path: string, readonly dir: true }
  | { readonly path: string, readonly mode: 0o755 | 0o644, readonly data: Uint8Array }
  | { readonly path: string, readonly link: string }

export interface PackedCharm {
  readonly bytes: Uint8Array
  /** sha256 of `bytes`, lower-case hex: the charm's content address. */
  readonly hash: string
}

// Records would make the encoding depend on structures seen earlier; plain maps keep it
// a pure function of the entries.
const packr = new Packr({ useRecords: false })
const utf8 = new TextDecoder('utf-8', { fatal: true })
const hashPattern = /^[0-9a-f]{64}$/
/**
 * Envelope bytes beyond file content: each entry's path, link target and msgpack framing.
 * Archives larger than content plus this are refused before they are hashed or decoded.
 */
const envelopeBytesMax = limits.charmArchiveEntriesMax * (2 * limits.charmArchivePathBytesMax + 64) + 1024

type Fail = (entry: string | undefined, expected: string, got: string) => never

export function charmArchiveHash (bytes: Uint8Array): string {
  return sha256Hex(bytes)
}

/** Packs the directory `dir`; throws InvalidCharmArchiveError for anything it cannot represent faithfully. */
export async function packCharm (dir: string, options: PackCharmOptions = {}): Promise<PackedCharm> {
  const root = resolve(dir)
  const subject = `cannot pack charm ${JSON.stringify(root)}`
  const fail: Fail = (entry, expected, got) => {
    throw new InvalidCharmArchiveError(subject, entry, expected, got)
  }
  const rootStat = await stat(root).catch((cause: unknown) => { throw new InvalidCharmArchiveError(subject, undefined, 'a directory', errorCode(cause), { cause }) })
  if (!rootStat.isDirectory()) fail(undefined, 'a directory', 'a file')

  const ignore = await readJujuIgnore(root, fail)
  const entries: CharmArchiveEntry[] = []
  let totalBytes = 0
  const add = (entry: CharmArchiveEntry): void => {
    if (entries.length >= limits.charmArchiveEntriesMax) fail(entry.path, `at most ${limits.charmArchiveEntriesMax} entries in the charm`, 'more')
    entries.push(entry)
  }
  // Directories still to list, relative to the root; an explicit stack, since the tree is on disk.
  const pending: string[] = ['']
  try {
    await walk()
  } catch (error) {
    if (error instanceof InvalidCharmArchiveError) throw error
    throw new InvalidCharmArchiveError(subject, undefined, 'a readable charm directory', errorCode(error), { cause: error })
  }
  entries.push(...generatedEntries(entries, options.generated))
  entries.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  const bytes = encodeArchive(entries)
  return { bytes, hash: charmArchiveHash(bytes) }

  async function walk (): Promise<void> {
    while (pending.length > 0) {
      const relativeDir = pending.pop()!
      // Sorted, so which problem is reported first does not depend on readdir order.
      const names = (await readdir(join(root, relativeDir), { encoding: 'buffer' })).sort(Buffer.compare)
      for (const rawName of names) {
        let name: string
        try {
          name = utf8.decode(rawName)
        } catch {
          fail(posix.join(relativeDir, rawName.toString('latin1')), 'a file name in UTF-8', 'other bytes')
        }
        const path = relativeDir === '' ? name : `${relativeDir}/${name}`
        if (Buffer.byteLength(path) > limits.charmArchivePathBytesMax) fail(path, `a path of at most ${limits.charmArchivePathBytesMax} bytes`, `${Buffer.byteLength(path)} bytes`)
        const full = join(root, path)
        const info = await lstat(full)
        // Juju writes the revision itself, from the integer it read (charmdir.go writeArchive).
        if (path === 'revision' && info.isFile()) {
          add({ path, mode: 0o644, data: await revisionFile(full, fail) })
          continue
        }
        // An ignored directory is not descended into (charmdir.go: filepath.SkipDir).
        if (ignore.ignores(path, info.isDirectory())) continue
        if (info.isDirectory()) {
          add({ path, dir: true })
          pending.push(path)
        } else if (info.isSymbolicLink()) {
          const target = await readlink(full)
          const problem = linkTargetProblem(path, target)
          if (problem !== undefined) fail(path, problem, `a link to ${JSON.stringify(target)}`)
          add({ path, link: target })
        } else if (info.isFile()) {
          if (totalBytes + info.size > limits.charmArchiveBytesMax) fail(path, `at most ${limits.charmArchiveBytesMax} bytes of files in the charm`, `${totalBytes + info.size} bytes so far`)
          const data = await readBounded(full, limits.charmArchiveBytesMax - totalBytes)
          if (data === undefined) fail(path, `a regular file within ${limits.charmArchiveBytesMax} bytes of files in the charm`, 'a file that changed while it was read')
          totalBytes += data.length
          const hook = relativeDir === 'hooks' && options.hooks?.has(name) === true
          add({ path, mode: (info.mode & 0o111) !== 0 || hook ? 0o755 : 0o644, data })
        } else {
          fail(path, 'a regular file, directory or symlink', info.isFIFO() ? 'a FIFO' : info.isSocket() ? 'a socket' : 'a device')
        }
      }
    }
  }
}

/**
 * Checks `bytes` against `expectedHash` and returns the entries, without touching the
 * disk. Throws InvalidCharmArchiveError for a hash mismatch, a malformed envelope or any
 * entry that could escape the charm directory or exceed the limits.
 */
export function readCharmArchive (bytes: Uint8Array, expectedHash: string): CharmArchiveEntry[] {
  const subject = `cannot unpack charm archive ${JSON.stringify(typeof expectedHash === 'string' ? expectedHash.slice(0, 16) : expectedHash)}`
  const fail: Fail = (entry, expected, got) => {
    throw new InvalidCharmArchiveError(subject, entry, expected, got)
  }
  if (typeof expectedHash !== 'string' || !hashPattern.test(expectedHash)) fail(undefined, 'a sha256 hash in lower-case hex', describeValue(expectedHash))
  if (!(bytes instanceof Uint8Array)) fail(undefined, 'archive bytes', describeValue(bytes))
  if (bytes.length > limits.charmArchiveBytesMax + envelopeBytesMax) fail(undefined, `an archive of at most ${limits.charmArchiveBytesMax + envelopeBytesMax} bytes`, `${bytes.length} bytes`)
  const actualHash = charmArchiveHash(bytes)
  if (actualHash !== expectedHash) fail(undefined, `content with sha256 ${expectedHash}`, `sha256 ${actualHash}`)

  let inflated: Buffer
  try {
    // Bounded, so a small archive cannot inflate past what an honest one could hold.
    inflated = inflateRawSync(bytes, { maxOutputLength: limits.charmArchiveBytesMax + envelopeBytesMax })
  } catch (cause) {
    throw new InvalidCharmArchiveError(subject, undefined, `deflated data of at most ${limits.charmArchiveBytesMax + envelopeBytesMax} bytes once inflated`, JSON.stringify(cause instanceof Error ? cause.message : String(cause)), { cause })
  }
  let envelope: unknown
  try {
    envelope = packr.unpack(inflated)
  } catch (cause) {
    throw new InvalidCharmArchiveError(subject, undefined, 'a msgpack-encoded archive', JSON.stringify(cause instanceof Error ? cause.message : String(cause)), { cause })
  }
  if (!isRecord(envelope) || !isExactRecord(envelope, ['files', 'format', 'version'])) fail(undefined, 'a map with exactly "format", "version" and "files"', describeValue(envelope))
  if (envelope.format !== charmArchiveFormat) fail(undefined, `format ${JSON.stringify(charmArchiveFormat)}`, describeValue(envelope.format))
  if (envelope.version !== charmArchiveVersion) fail(undefined, `version ${charmArchiveVersion}`, describeValue(envelope.version))
  const files = envelope.files
  if (!Array.isArray(files)) fail(undefined, 'a list of files', describeValue(files))
  if (files.length > limits.charmArchiveEntriesMax) fail(undefined, `at most ${limits.charmArchiveEntriesMax} entries`, `${files.length}`)

  const entries: CharmArchiveEntry[] = []
  const kinds = new Map<string, 'dir' | 'file' | 'link'>()
  let totalBytes = 0
  for (const [index, raw] of files.entries()) {
    const path = isRecord(raw) && typeof raw.path === 'string' ? raw.path : undefined
    const label = path ?? `#${index}`
    if (path === undefined) fail(label, 'an entry with a string "path"', describeValue(raw))
    const pathProblem = entryPathProblem(path)
    if (pathProblem !== undefined) fail(label, pathProblem, JSON.stringify(path))
    if (kinds.has(path)) fail(label, 'each path once', 'a second entry with this path')
    const record = raw as Record<string, unknown>
    if (isExactRecord(record, ['dir', 'path']) && record.dir === true) {
      entries.push({ path, dir: true })
      kinds.set(path, 'dir')
    } else if (isExactRecord(record, ['data', 'mode', 'path'])) {
      if (record.mode !== 0o755 && record.mode !== 0o644) fail(label, 'mode 0o755 or 0o644', describeValue(record.mode))
      if (!(record.data instanceof Uint8Array)) fail(label, 'file data as bytes', describeValue(record.data))
      totalBytes += record.data.length
      if (totalBytes > limits.charmArchiveBytesMax) fail(label, `at most ${limits.charmArchiveBytesMax} bytes of files in the archive`, `${totalBytes} bytes so far`)
      entries.push({ path, mode: record.mode, data: record.data })
      kinds.set(path, 'file')
    } else if (isExactRecord(record, ['link', 'path']) && typeof record.link === 'string') {
      const linkProblem = linkTargetProblem(path, record.link)
      if (linkProblem !== undefined) fail(label, linkProblem, `a link to ${JSON.stringify(record.link)}`)
      entries.push({ path, link: record.link })
      kinds.set(path, 'link')
    } else {
      fail(label, 'a directory {path, dir}, a file {path, mode, data} or a symlink {path, link}', describeValue(raw))
    }
  }
  // Writing "a/b" must never go through a symlink or a file called "a": every parent is
  // a directory entry of the archive itself.
  for (const entry of entries) {
    const parent = posix.dirname(entry.path)
    if (parent !== '.' && kinds.get(parent) !== 'dir') {
      fail(entry.path, `its parent ${JSON.stringify(parent)} as a directory entry`, kinds.has(parent) ? `a ${kinds.get(parent)!}` : 'no entry')
    }
  }
  return entries.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
}

/**
 * Unpacks into `destDir`, which must not exist yet. Everything is checked first
 * (`readCharmArchive`); the files are written into a temporary directory beside
 * `destDir`, synced, and renamed into place, so `destDir` appears whole or not at all.
 */
export async function unpackCharm (bytes: Uint8Array, expectedHash: string, destDir: string): Promise<void> {
  const entries = readCharmArchive(bytes, expectedHash)
  const dest = resolve(destDir)
  const subject = `cannot unpack charm archive ${JSON.stringify(expectedHash.slice(0, 16))}`
  const existing = await lstat(dest).then(() => true, () => false)
  if (existing) throw new InvalidCharmArchiveError(subject, undefined, `a destination that does not exist yet (${JSON.stringify(dest)})`, 'an existing path')

  let temp: string
  try {
    temp = await mkdtemp(join(dirname(dest), `.${basename(dest)}.unpack-`))
  } catch (cause) {
    throw new InvalidCharmArchiveError(subject, undefined, `to write beside ${JSON.stringify(dest)}`, errorCode(cause), { cause })
  }
  try {
    for (const entry of entries) {
      const target = resolve(temp, entry.path)
      // Already implied by the path checks; repeated here against the real directory name.
      if (!target.startsWith(temp + sep)) throw new InvalidCharmArchiveError(subject, entry.path, 'a path inside the charm directory', JSON.stringify(target))
      if ('dir' in entry) {
        await mkdir(target, { mode: 0o755 })
        await chmod(target, 0o755)
      } else if ('link' in entry) {
        await symlink(entry.link, target)
      } else {
        // 'wx': never write through something already there.
        const handle = await open(target, 'wx', entry.mode)
        try {
          await handle.writeFile(entry.data)
          await handle.chmod(entry.mode) // The umask may have cleared bits of `mode`.
          await handle.sync()
        } finally {
          await handle.close()
        }
      }
    }
    await chmod(temp, 0o755)
    await rename(temp, dest)
  } catch (error) {
    await rm(temp, { recursive: true, force: true })
    if (error instanceof InvalidCharmArchiveError) throw error
    throw new InvalidCharmArchiveError(subject, undefined, `to write ${JSON.stringify(dest)}`, errorCode(error), { cause: error })
  }
  // Make the rename itself durable.
  const parent = await open(dirname(dest), 'r')
  try {
    await parent.sync()
  } finally {
    await parent.close()
  }
}

/** The `generated` files that `entries` lacks, as root-level 0644 files. */
export function generatedEntries (entries: readonly CharmArchiveEntry[], generated: Readonly<Record<string, string>> = {}): CharmArchiveEntry[] {
  const present = new Set(entries.map(entry => entry.path))
  return Object.keys(generated).sort().filter(name => !present.has(name))
    .map(name => ({ path: name, mode: 0o644 as const, data: new TextEncoder().encode(generated[name]!) }))
}

/** Entries read elsewhere (a pre-built .charm) as an archive; unpacking checks them as any other. */
export function packEntries (entries: readonly CharmArchiveEntry[]): PackedCharm {
  const sorted = [...entries].sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  const bytes = encodeArchive(sorted)
  return { bytes, hash: charmArchiveHash(bytes) }
}

function encodeArchive (entries: readonly CharmArchiveEntry[]): Uint8Array {
  // Fixed key order in every map: the encoding is a function of the entries alone.
  const files = entries.map(entry =>
    'dir' in entry
      ? { path: entry.path, dir: true }
      : 'link' in entry
        ? { path: entry.path, link: entry.link }
        : { path: entry.path, mode: entry.mode, data: entry.data })
  const packed = packr.pack({ format: charmArchiveFormat, version: charmArchiveVersion, files })
  const deflated = deflateRawSync(packed, { level: charmArchiveDeflateLevel })
  return new Uint8Array(deflated.buffer, deflated.byteOffset, deflated.byteLength)
}

/** Why `path` is not a plain relative path inside the charm, or undefined. */
export function entryPathProblem (path: string): string | undefined {
  const expected = 'a relative path of plain names separated by "/" (no "", "." or ".." segments)'
  if (path === '' || path.includes('\0')) return expected
  if (Buffer.byteLength(path) > limits.charmArchivePathBytesMax) return `a path of at most ${limits.charmArchivePathBytesMax} bytes`
  if (path.startsWith('/')) return expected
  if (path.split('/').some(segment => segment === '' || segment === '.' || segment === '..')) return expected
  return undefined
}

/** Why a symlink at `path` pointing to `target` could reach outside the charm, or undefined. */
function linkTargetProblem (path: string, target: string): string | undefined {
  const expected = 'a symlink to a relative path inside the charm'
  if (target === '' || target.includes('\0') || posix.isAbsolute(target)) return expected
  if (Buffer.byteLength(target) > limits.charmArchivePathBytesMax) return `a link target of at most ${limits.charmArchivePathBytesMax} bytes`
  const resolved = posix.normalize(posix.join(posix.dirname(path), target))
  if (resolved === '..' || resolved.startsWith('../')) return expected
  // Lexical resolution is only right if every ".." climbs a real directory. The link's
  // own ancestors are real directories, so ".." may lead the target; after a name it
  // might climb out of another symlink ("up/.." where up -> ..), so it is refused there.
  const segments = target.split('/')
  const firstName = segments.findIndex(segment => segment !== '..')
  if (firstName !== -1 && segments.slice(firstName).includes('..')) return `${expected}, with ".." only at its start`
  return undefined
}

/** Juju's defaults plus the charm's own `.jujuignore`, if it has one. */
async function readJujuIgnore (root: string, fail: Fail): Promise<JujuIgnore> {
  const path = join(root, '.jujuignore')
  const info = await lstat(path).catch(() => undefined)
  if (info === undefined) return JujuIgnore.parse(undefined)
  if (!info.isFile()) fail('.jujuignore', 'a regular file', info.isDirectory() ? 'a directory' : 'another kind of file')
  const data = await readBounded(path, limits.charmFileBytesMax)
  if (data === undefined) fail('.jujuignore', `a file of at most ${limits.charmFileBytesMax} bytes`, 'a larger one')
  try {
    return JujuIgnore.parse(utf8.decode(data))
  } catch (error) {
    if (error instanceof JujuIgnoreError) fail('.jujuignore', `a glob pattern on line ${error.line} (${error.reason})`, JSON.stringify(error.rule))
    fail('.jujuignore', 'UTF-8 text', 'other bytes')
  }
}

/** The root `revision` file as Juju re-writes it: the integer it starts with (Go's fmt.Fscan). */
async function revisionFile (path: string, fail: Fail): Promise<Uint8Array> {
  const data = await readBounded(path, limits.charmFileBytesMax)
  const text = data === undefined ? '' : new TextDecoder().decode(data)
  const match = /^\s*([+-]?\d+)/.exec(text)
  if (match === null) fail('revision', 'an integer (Juju: "invalid revision file")', JSON.stringify(text.slice(0, 40)))
  return new TextEncoder().encode(String(Number(match[1])))
}

/** The file's bytes, or undefined if it holds more than `max` (it may grow after stat). */
async function readBounded (path: string, max: number): Promise<Uint8Array | undefined> {
  // The entry was a regular file when listed; if it has since been swapped for a FIFO or
  // a symlink, opening must neither block nor follow it.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW)
  try {
    const info = await handle.stat()
    if (!info.isFile() || info.size > max) return undefined
    const buffer = new Uint8Array(info.size + 1)
    let length = 0
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null)
      if (bytesRead === 0) break
      length += bytesRead
    }
    if (length > info.size) return undefined
    return buffer.subarray(0, length)
  } finally {
    await handle.close()
  }
}

function isRecord (value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value) as unknown
  return prototype === Object.prototype || prototype === null
}

/** A plain map with exactly `keys` (sorted), so unknown fields are refused rather than ignored. */
function isExactRecord (value: unknown, keys: readonly string[]): boolean {
  if (!isRecord(value)) return false
  const actual = Object.keys(value).sort()
  return actual.length === keys.length && actual.every((key, i) => key === keys[i])
}

function errorCode (error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return code ?? (error instanceof Error ? JSON.stringify(error.message) : String(error))
}
