/**
 * Runs a program bundle (dist/cantrip.cjs, dist/cantripd.cjs: one CommonJS script each,
 * scripts/build.ts) with V8's code cache. Node 20 has no compile cache for ES modules, and
 * compiling the client's and the agent's code was most of what a short command or an
 * agent's start cost; a script compiled through `vm.Script` can take V8's cached code
 * instead. The build writes the cache next to the bundle, prefixed with the digest of the
 * bundle it was made from; a cache that is missing, unreadable, for another bundle, or
 * that V8 rejects (another Node, other flags) costs only the compile it would have saved.
 *
 * The bundle is wrapped as Node wraps a CommonJS module, with two more parameters that
 * stand for `import.meta.url` and `import.meta.resolve` (the build defines them so): they
 * are the loader's, an ES module in the same directory, so the bundle resolves its
 * siblings (workers, the package root, the tools) as the ES-module build did.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Script } from 'node:vm'

/** The names the build gives `import.meta.url` and `import.meta.resolve` inside a program bundle. */
export const importMetaNames = { url: '__cantripImportMetaUrl', resolve: '__cantripImportMetaResolve' } as const

/**
 * What the build renames the bundle's remaining `import(` calls to (of packages and
 * modules left outside it): Node 20 runs a vm.Script's own import() only with
 * --experimental-vm-modules, so the loader, an ES module, imports for it. As long as
 * `import`, so the source map's columns still hold.
 */
export const dynamicImportName = '__cImp'

const wrapperHead = `(function (exports, require, module, __filename, __dirname, ${importMetaNames.url}, ${importMetaNames.resolve}, ${dynamicImportName}) {`

/** The bundle's source as the script V8 compiles (the build makes the cache of exactly this). */
export function wrapProgram (source: string): string {
  return `${wrapperHead}${source}\n})`
}

/** Bytes of the digest at the head of a cache file (sha256). */
export const cacheDigestBytes = 32

export interface CachedProgram {
  /** The loader's `import.meta.url`: the bundle and its cache sit beside it. */
  readonly metaUrl: string
  readonly metaResolve: (specifier: string) => string
  /** The loader's import(): specifiers resolve from the loader's directory, the bundle's too. */
  readonly importModule: (specifier: string) => Promise<unknown>
  /** The bundle's file name, e.g. `cantrip.cjs`; its cache is `<name>.v8cache`. */
  readonly bundle: string
  /** The sha256 of the bundle the build wrote (hex), which the cache must carry. */
  readonly digest: string
}

/** The program bundle is not where its loader expects it (a partial install or build). */
export class ProgramBundleMissing extends Error {
  override name = 'ProgramBundleMissing'
}

/** Compiles and runs the bundle, from the cache when it fits; says whether V8 took the cache. */
export function runCachedProgram (program: CachedProgram): { cacheUsed: boolean } {
  const file = fileURLToPath(new URL(`./${program.bundle}`, program.metaUrl))
  let source: string
  try {
    source = readFileSync(file, 'utf8')
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error)
    throw new ProgramBundleMissing(`cantrip: expected the program bundle ${file} (npm run build writes it), got ${reason}`)
  }
  const cachedData = cacheFor(`${file}.v8cache`, program.digest)
  const script = new Script(wrapProgram(source), {
    filename: file,
    ...(cachedData === undefined ? {} : { cachedData })
  })
  const run = script.runInThisContext() as (...args: unknown[]) => void
  const module = { exports: {} }
  run(module.exports, createRequire(file), module, file, dirname(file), program.metaUrl, program.metaResolve, program.importModule)
  return { cacheUsed: cachedData !== undefined && !script.cachedDataRejected }
}

/** runCachedProgram for a loader: a missing bundle is one line on stderr and exit 1. */
export function startProgram (program: CachedProgram): void {
  try {
    runCachedProgram(program)
  } catch (error) {
    if (!(error instanceof ProgramBundleMissing)) throw error
    process.stderr.write(`${error.message}\n`)
    process.exitCode = 1
  }
}

/** The V8 data of the cache file, if it was made from the bundle with this digest. */
function cacheFor (path: string, digest: string): Buffer | undefined {
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch {
    return undefined
  }
  if (bytes.length <= cacheDigestBytes || bytes.subarray(0, cacheDigestBytes).toString('hex') !== digest) return undefined
  return bytes.subarray(cacheDigestBytes)
}
