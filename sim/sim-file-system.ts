/**
 * The simulated `FileSystem`: an in-memory tree of files and directories, with the
 * errors node:fs gives (ENOENT, EEXIST, ENOTDIR) so code that runs on it behaves as on
 * a disk. `mode()` and `paths()` let a simulation look at what was written, and
 * `failWith` makes chosen operations fail (a full disk, a read-only mount).
 */
import type { DirectoryEntry, FileSystem } from '../runtime/file-system.ts'

type SimEntry =
  | { kind: 'file', data: Uint8Array, mode: number }
  | { kind: 'directory', mode: number }

export type SimFileOperation = 'write' | 'append' | 'mkdir' | 'remove'

export class SimFileSystemError extends Error {
  constructor (readonly code: string, operation: string, path: string) {
    super(`${code}: ${operation} ${JSON.stringify(path)}`)
    this.name = 'SimFileSystemError'
  }
}

export class SimFileSystem implements FileSystem {
  readonly #entries = new Map<string, SimEntry>([['/', { kind: 'directory', mode: 0o755 }]])
  /** Decides whether an operation fails, and with which code (`ENOSPC`). */
  failWith: ((operation: SimFileOperation, path: string) => string | undefined) | undefined

  readFile (path: string): Uint8Array | undefined {
    const entry = this.#entries.get(normal(path))
    return entry?.kind === 'file' ? entry.data.slice() : undefined
  }

  readTail (path: string, bytesMax: number): Uint8Array | undefined {
    const data = this.readFile(path)
    return data?.subarray(Math.max(0, data.length - bytesMax))
  }

  writeFile (path: string, data: Uint8Array | string, mode: number): void {
    const key = this.#writable('write', path)
    const existing = this.#entries.get(key)
    this.#entries.set(key, { kind: 'file', data: bytes(data), mode: existing?.mode ?? mode })
  }

  appendFile (path: string, data: Uint8Array | string, mode: number): void {
    const key = this.#writable('append', path)
    const existing = this.#entries.get(key)
    const before = existing?.kind === 'file' ? existing.data : new Uint8Array()
    const added = bytes(data)
    const joined = new Uint8Array(before.length + added.length)
    joined.set(before)
    joined.set(added, before.length)
    this.#entries.set(key, { kind: 'file', data: joined, mode: existing?.mode ?? mode })
  }

  makeDirectory (path: string, options: { readonly mode: number, readonly recursive?: boolean }): void {
    const key = normal(path)
    this.#fault('mkdir', key)
    const existing = this.#entries.get(key)
    if (existing !== undefined) {
      if (options.recursive === true && existing.kind === 'directory') return
      throw new SimFileSystemError('EEXIST', 'mkdir', key)
    }
    const parent = parentOf(key)
    if (this.#entries.get(parent)?.kind !== 'directory') {
      if (options.recursive !== true || this.#entries.has(parent)) throw new SimFileSystemError(this.#entries.has(parent) ? 'ENOTDIR' : 'ENOENT', 'mkdir', key)
      this.makeDirectory(parent, options)
    }
    this.#entries.set(key, { kind: 'directory', mode: options.mode })
  }

  remove (path: string): void {
    const key = normal(path)
    this.#fault('remove', key)
    this.#entries.delete(key)
    const prefix = key === '/' ? '/' : `${key}/`
    for (const other of [...this.#entries.keys()]) if (other.startsWith(prefix) && other !== '/') this.#entries.delete(other)
  }

  list (path: string): DirectoryEntry[] | undefined {
    const key = normal(path)
    if (this.#entries.get(key)?.kind !== 'directory') return undefined
    const prefix = key === '/' ? '/' : `${key}/`
    const found: DirectoryEntry[] = []
    for (const [other, entry] of this.#entries) {
      if (other === key || !other.startsWith(prefix) || other.slice(prefix.length).includes('/')) continue
      found.push({ name: other.slice(prefix.length), kind: entry.kind })
    }
    return found.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  }

  exists (path: string): boolean {
    return this.#entries.has(normal(path))
  }

  rename (from: string, to: string): void {
    const source = normal(from)
    const entry = this.#entries.get(source)
    if (entry?.kind !== 'file') throw new SimFileSystemError('ENOENT', 'rename', source)
    const target = this.#writable('write', to)
    this.#entries.delete(source)
    this.#entries.set(target, entry)
  }

  /** The mode a path was made with, or undefined when there is none. */
  mode (path: string): number | undefined {
    return this.#entries.get(normal(path))?.mode
  }

  /** Every path under `root`, sorted: what a simulation's trace shows of the disk. */
  paths (root = '/'): string[] {
    const key = normal(root)
    const prefix = key === '/' ? '/' : `${key}/`
    return [...this.#entries.keys()].filter(path => path.startsWith(prefix) && path !== '/').sort()
  }

  #writable (operation: SimFileOperation, path: string): string {
    const key = normal(path)
    this.#fault(operation, key)
    if (this.#entries.get(key)?.kind === 'directory') throw new SimFileSystemError('EISDIR', operation, key)
    const parent = this.#entries.get(parentOf(key))
    if (parent === undefined) throw new SimFileSystemError('ENOENT', operation, key)
    if (parent.kind !== 'directory') throw new SimFileSystemError('ENOTDIR', operation, key)
    return key
  }

  #fault (operation: SimFileOperation, path: string): void {
    const code = this.failWith?.(operation, path)
    if (code !== undefined) throw new SimFileSystemError(code, operation, path)
  }
}

function normal (path: string): string {
  if (!path.startsWith('/')) throw new SimFileSystemError('EINVAL', 'resolve', path)
  const parts: string[] = []
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue
    if (part === '..') parts.pop()
    else parts.push(part)
  }
  return `/${parts.join('/')}`
}

function parentOf (key: string): string {
  const slash = key.lastIndexOf('/')
  return slash <= 0 ? '/' : key.slice(0, slash)
}

function bytes (data: Uint8Array | string): Uint8Array {
  return typeof data === 'string' ? new TextEncoder().encode(data) : data.slice()
}
