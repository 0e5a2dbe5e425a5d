/**
 * Files reach providers only through this contract: the local provider's instance
 * directories (token, bootstrap data, pid file, the agent's log) and, later, what the
 * manual provider stages. Real: `NodeFileSystem` in agent/; simulated: `SimFileSystem`
 * in sim/, an in-memory tree the simulator can inspect and fault.
 *
 * Synchronous on purpose: the files are small and local, and the local provider's
 * bookkeeping (a phase read, then a token and a pid file read) must not interleave with
 * another of its operations between the reads, as it would at every `await`.
 *
 * Paths are absolute POSIX paths; nothing here resolves a relative one against a
 * working directory, which pure code does not have.
 */
export interface DirectoryEntry {
  readonly name: string
  readonly kind: 'file' | 'directory' | 'other'
}

export interface FileSystem {
  /** The file's bytes, or undefined when there is no such file. */
  readFile (path: string): Uint8Array | undefined
  /** The last `bytesMax` bytes of a file (a log's tail), or undefined when there is no such file. */
  readTail (path: string, bytesMax: number): Uint8Array | undefined
  /** Replaces the file's contents; a new file gets `mode`. The parent directory must exist. */
  writeFile (path: string, data: Uint8Array | string, mode: number): void
  /** Appends to the file, creating it with `mode`. The parent directory must exist. */
  appendFile (path: string, data: Uint8Array | string, mode: number): void
  /**
   * Makes a directory with `mode`. Without `recursive` its parent must exist and the
   * directory must not; with it, missing parents are made and an existing one is fine.
   */
  makeDirectory (path: string, options: { readonly mode: number, readonly recursive?: boolean }): void
  /** Removes a file or a whole directory tree; a path that does not exist is not an error. */
  remove (path: string): void
  /** The entries of a directory, by name; undefined when there is no such directory. */
  list (path: string): DirectoryEntry[] | undefined
  exists (path: string): boolean
  /** Moves a file over another atomically (a state file written whole, then renamed into place). */
  rename (from: string, to: string): void
}

/** Joins absolute POSIX path segments: `joinPath('/a/', 'b', 'c')` → `/a/b/c`. */
export function joinPath (first: string, ...rest: readonly string[]): string {
  let path = first
  for (const segment of rest) {
    if (segment === '') continue
    path = `${path.endsWith('/') ? path.slice(0, -1) : path}/${segment.startsWith('/') ? segment.slice(1) : segment}`
  }
  return path
}
