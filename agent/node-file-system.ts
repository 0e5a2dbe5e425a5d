/**
 * The real `FileSystem` (runtime/file-system.ts) on node:fs, synchronous as the
 * contract is.
 */
import * as fs from 'node:fs'
import type { DirectoryEntry, FileSystem } from '../runtime/file-system.ts'

export class NodeFileSystem implements FileSystem {
  readFile (path: string): Uint8Array | undefined {
    try {
      return fs.readFileSync(path)
    } catch (error) {
      if (isMissing(error)) return undefined
      throw error
    }
  }

  readTail (path: string, bytesMax: number): Uint8Array | undefined {
    let fd: number
    try {
      fd = fs.openSync(path, 'r')
    } catch (error) {
      if (isMissing(error)) return undefined
      throw error
    }
    try {
      const size = fs.fstatSync(fd).size
      const length = Math.min(size, bytesMax)
      const buffer = Buffer.alloc(length)
      fs.readSync(fd, buffer, 0, length, size - length)
      return buffer
    } finally {
      fs.closeSync(fd)
    }
  }

  writeFile (path: string, data: Uint8Array | string, mode: number): void {
    fs.writeFileSync(path, data, { mode })
  }

  appendFile (path: string, data: Uint8Array | string, mode: number): void {
    fs.appendFileSync(path, data, { mode })
  }

  makeDirectory (path: string, options: { readonly mode: number, readonly recursive?: boolean }): void {
    fs.mkdirSync(path, { mode: options.mode, recursive: options.recursive ?? false })
  }

  remove (path: string): void {
    fs.rmSync(path, { recursive: true, force: true })
  }

  list (path: string): DirectoryEntry[] | undefined {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(path, { withFileTypes: true })
    } catch (error) {
      if (isMissing(error)) return undefined
      throw error
    }
    return entries.map(entry => ({ name: entry.name, kind: entry.isDirectory() ? 'directory' : entry.isFile() ? 'file' : 'other' }))
  }

  exists (path: string): boolean {
    return fs.existsSync(path)
  }

  rename (from: string, to: string): void {
    fs.renameSync(from, to)
  }
}

function isMissing (error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
