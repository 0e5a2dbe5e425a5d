/**
 * Builds the C hook tool client (./cantrip-tool.c) with the system C compiler and
 * links it into a tools directory under every tool name.
 *
 * The binary is cached in the repository's git-ignored `.cache/` directory under a name
 * carrying a hash of the source and the compiler flags (which include the bounds from
 * runtime/limits.ts), so an edit to either builds a new binary and an unchanged tree
 * never recompiles. A build writes to a private temporary name and renames it into
 * place: concurrent builds in several processes each produce the same file and the
 * last rename wins, so no process ever sees a half-written binary and no lock is needed.
 */
import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { accessSync, constants } from 'node:fs'
import { access, mkdir, readdir, readFile, rename, rm, stat, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { CantripError } from '../../../runtime/errors.ts'
import { limits } from '../../../runtime/limits.ts'
import { packageRoot, runningBundled } from '../../package-root.ts'
import { hookToolNames } from './hook-tool-names.ts'

export { hookToolNames, type HookToolName } from './hook-tool-names.ts'

/** The C compiler is missing or failed; the message is one line naming what was expected. */
export class ToolClientBuildError extends CantripError {
  override name = 'ToolClientBuildError'
}

export interface ToolClientBuildOptions {
  /** The C compiler to run; `cc` from PATH by default. */
  compiler?: string
  /** Where binaries are cached; the repository's `.cache/` by default. */
  cacheDir?: string
}

export const toolClientSourcePath = join(packageRoot, 'agent', 'hook-tools', 'client', 'cantrip-tool.c')
export const toolClientCacheDir = join(packageRoot, '.cache')
/** Where the build puts the client it compiled, beside the agent bundle. */
export const prebuiltToolClientPath = join(packageRoot, 'dist', 'cantrip-tool')

function prebuiltClientReady (): boolean {
  try {
    accessSync(prebuiltToolClientPath, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** The file name the client is built under; the multiplexer form of the client matches this prefix. */
const binaryPrefix = 'cantrip-tool-'

const compilerFlags: readonly string[] = [
  '-std=c99', '-O2', '-Wall', '-Wextra', '-Werror',
  // The client's bounds come from runtime/limits.ts, so the agent and client agree on them.
  `-DCANTRIP_STDIN_BYTES_MAX=${limits.hookToolStdinBytesMax}u`,
  `-DCANTRIP_ARGS_BYTES_MAX=${limits.hookToolArgsBytesMax}u`,
  `-DCANTRIP_ARGS_COUNT_MAX=${limits.hookToolArgsCountMax}u`,
  `-DCANTRIP_OUTPUT_BYTES_MAX=${limits.hookToolOutputBytesMax}u`
]

/**
 * A compile of this one small file takes well under a second; a compiler still running
 * after a minute is stuck (a hung NFS mount, a wrapper waiting on a tty) and is killed.
 */
const compileTimeoutMs = 60_000
/** Compiler diagnostics kept for the error message. */
const compilerOutputBytesMax = 64 * 1024
/** Temporary files older than this were left by a build that crashed, and are removed. */
const staleTemporaryAgeMs = 10 * 60_000

/** Builds in flight in this process, so concurrent callers share one compile. */
const building = new Map<string, Promise<string>>()

/**
 * Returns the absolute path of the built client, compiling it first if the cache has
 * no binary for the current source and flags.
 */
export function ensureToolClient (options: ToolClientBuildOptions = {}): Promise<string> {
  // The bundle carries the client compiled where it was built (scripts/build.ts): no compiler needed here.
  if (runningBundled && options.compiler === undefined && options.cacheDir === undefined && prebuiltClientReady()) return Promise.resolve(prebuiltToolClientPath)
  const compiler = options.compiler ?? 'cc'
  const cacheDir = options.cacheDir ?? toolClientCacheDir
  const key = `${compiler}\0${cacheDir}`
  let pending = building.get(key)
  if (pending === undefined) {
    pending = build(compiler, cacheDir)
    building.set(key, pending)
    // A finished build is found on disk next time; a failed one may be retried.
    pending.then(() => { building.delete(key) }, () => { building.delete(key) })
  }
  return pending
}

async function build (compiler: string, cacheDir: string): Promise<string> {
  const source = await readFile(toolClientSourcePath)
  const hash = createHash('sha256').update(source).update('\0').update(compilerFlags.join('\0')).digest('hex').slice(0, 16)
  const binary = join(cacheDir, `${binaryPrefix}${hash}`)
  try {
    await access(binary, constants.X_OK)
    return binary
  } catch {
    // Not built yet (or not executable): build it below.
  }
  await mkdir(cacheDir, { recursive: true })
  await removeStaleTemporaries(cacheDir)
  const temporary = `${binary}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`
  try {
    await compile(compiler, ['-o', temporary, toolClientSourcePath])
    await rename(temporary, binary)
  } finally {
    await rm(temporary, { force: true })
  }
  return binary
}

function compile (compiler: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(compiler, [...compilerFlags, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    // Not spawn's own `timeout`: its timer outlives a compiler that failed to start.
    let timedOut = false
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL') }, compileTimeoutMs)
    const output: Buffer[] = []
    let outputBytes = 0
    const collect = (chunk: Buffer): void => {
      if (outputBytes >= compilerOutputBytesMax) return
      output.push(chunk)
      outputBytes += chunk.length
    }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    child.once('error', error => {
      clearTimeout(timer)
      const code = (error as NodeJS.ErrnoException).code
      const got = code === 'ENOENT' ? 'no such program' : error.message
      reject(new ToolClientBuildError(
        `hook tool client: expected a C compiler "${compiler}" on PATH to build ${toolClientSourcePath}, got ${got}; install one (apt-get install gcc)`,
        { cause: error }))
    })
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) { resolve(); return }
      const firstLine = Buffer.concat(output).toString('utf8').split('\n').find(line => line.trim() !== '') ?? ''
      const how = timedOut ? `no result within ${compileTimeoutMs} ms` : signal !== null ? `signal ${signal}` : `exit ${String(code)}`
      reject(new ToolClientBuildError(`hook tool client: expected "${compiler}" to compile ${toolClientSourcePath}, got ${how}${firstLine === '' ? '' : `: ${firstLine.trim()}`}`))
    })
  })
}

async function removeStaleTemporaries (cacheDir: string): Promise<void> {
  const now = Date.now()
  for (const entry of await readdir(cacheDir)) {
    if (!entry.startsWith(binaryPrefix) || !entry.includes('.tmp-')) continue
    const path = join(cacheDir, entry)
    try {
      if (now - (await stat(path)).mtimeMs > staleTemporaryAgeMs) await rm(path, { force: true })
    } catch {
      // Another process renamed or removed it meanwhile.
    }
  }
}

/**
 * Makes `toolsDir/<name>` a symlink to the client for every name, replacing links that
 * are already there (each atomically, by renaming a fresh link over the old one).
 * The client is built first unless `clientPath` is given.
 */
export async function installToolLinks (toolsDir: string, names: readonly string[] = hookToolNames, clientPath?: string): Promise<void> {
  for (const name of names) {
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
      throw new ToolClientBuildError(`hook tool client: expected a tool name without "/", got ${JSON.stringify(name)}`)
    }
  }
  const target = clientPath ?? await ensureToolClient()
  await mkdir(toolsDir, { recursive: true })
  for (const name of names) {
    const temporary = join(toolsDir, `.${name}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`)
    await symlink(target, temporary)
    try {
      await rename(temporary, join(toolsDir, name))
    } catch (error) {
      await rm(temporary, { force: true })
      throw error
    }
  }
}
