/**
 * `npm run build` (also run by `npm ci` through `prepare`, and by `npm test` first, so
 * the processes the tests start are the bundles that ship): bundles the client and the
 * agent with esbuild, each with the libraries it uses, so that a command starts by
 * reading a few files instead of resolving and transpiling hundreds.
 *
 * The client (bin/cantrip.ts) and the agent (agent/cantripd.ts) are each one CommonJS
 * script, `dist/cantrip.cjs` and `dist/cantripd.cjs`, run by a small ES-module loader,
 * `dist/cantrip.mjs` and `dist/cantripd.mjs` (what `bin` names and providers start),
 * through `vm.Script` with V8's code cache, which this build writes beside each bundle
 * (`<bundle>.v8cache`, agent/tools/cached-program.ts). Compiling was most of a short
 * command's CPU and much of an agent's start, and Node 20 has no compile cache for ES
 * modules. Code loaded on use (a command's own file, the simulator, the inspector) stays
 * inside the script but is evaluated only when it is imported, so a command runs only
 * its own module's top level.
 *
 * The simulator's engine and workers and the agent launcher stay ES modules with shared
 * chunks, since worker threads and the launcher load them by file. Every file sits
 * directly in dist/, and the build removes every file in dist/ it did not write.
 *
 * Left outside the bundles, resolved from node_modules at run time: packages with native
 * or platform binaries (classic-level's LevelDB binding, msgpackr's optional native
 * extension, esbuild itself, which the inspector's viewer runs) and the browser driver
 * only tests use.
 *
 *   node --import tsx scripts/build.ts [--quiet]
 */
import { build, type BuildOptions, type Metafile, type Plugin } from 'esbuild'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { ensureToolClient } from '../agent/hook-tools/client/build-client.ts'
import { cacheDigestBytes, dynamicImportName, importMetaNames } from '../agent/tools/cached-program.ts'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..')
export const distDir = join(root, 'dist')

/** The programs, each one CommonJS script `dist/<name>.cjs`, and their loaders, `dist/<name>.mjs`. */
const programs = {
  cantrip: { program: 'bin/cantrip.ts', loader: 'bin/cantrip-loader.ts', digestName: 'cantripBundleDigest' },
  cantripd: { program: 'agent/cantripd.ts', loader: 'agent/cantripd-loader.ts', digestName: 'cantripdBundleDigest' }
}

/** ES-module entry points with shared chunks, by the file name each gets under dist/. */
const moduleEntryPoints = {
  'cantripd-stub': 'agent/cantripd-stub.ts',
  'sim-engine': 'sim/cli/sim-engine.ts',
  'sim-swarm-worker': 'sim/cli/sim-swarm-worker.ts',
  // The scenario swarms' worker (sim/swarm.ts): the swarm tests' threads load it instead of
  // transpiling the tree through tsx, each.
  'scenario-swarm-worker': 'sim/swarm-worker.ts',
  // Loaded on use by the client, and large (the simulator; the diagrams' layout engine,
  // elkjs, 1.6 MB): ES modules of their own rather than part of the client's script and
  // its code cache, which every command reads (separateModules below).
  'sim-main': 'sim/cli/sim-main.ts',
  'export-statecharts': 'agent/export-statecharts.ts'
}

/** The modules above that the client's script imports on use, from dist/, instead of holding them. */
const separateModules = ['sim-main', 'export-statecharts'] as const

/** Resolves an import of one of separateModules' sources to its ES module beside the script. */
const separateModulesPlugin: Plugin = {
  name: 'cantrip-separate-modules',
  setup (build) {
    const byPath = new Map(separateModules.map(name => [join(root, moduleEntryPoints[name]), name]))
    build.onResolve({ filter: /\.ts$/ }, args => {
      const name = byPath.get(join(args.resolveDir, args.path))
      return name === undefined ? undefined : { path: `./${name}.mjs`, external: true }
    })
  }
}

/** Resolved from node_modules at run time: native bindings, platform binaries, test-only tools. */
const external = ['classic-level', 'msgpackr-extract', 'esbuild', 'playwright-core']

/**
 * A plugin that bundles a native package's JavaScript loader in place of the module
 * matched by `filter` (imported from an `importer` directory, when given): the same
 * `loader(packageDirectory)` call, with only `pkg`'s directory looked up at run time, where
 * its prebuilt libraries are. From node_modules those loaders were resolved, read and
 * compiled without the code cache by every process.
 */
function nativeLoaderPlugin (name: string, options: { filter: RegExp, importer?: RegExp, pkg: string, loader: string, resolveDir: string }): Plugin {
  const namespace = `cantrip-${name}`
  return {
    name: namespace,
    setup (build) {
      build.onResolve({ filter: options.filter }, args =>
        options.importer === undefined || options.importer.test(args.resolveDir) ? { path: name, namespace } : undefined)
      build.onResolve({ filter: new RegExp(`^${options.pkg}/package\\.json$`) }, args => ({ path: args.path, external: true }))
      build.onLoad({ filter: /.*/, namespace }, () => ({
        contents: `const { dirname } = require('node:path')\nmodule.exports = require(${JSON.stringify(options.loader)})(dirname(require.resolve('${options.pkg}/package.json')))\n`,
        resolveDir: options.resolveDir,
        loader: 'js'
      }))
    }
  }
}

/**
 * classic-level's JavaScript (and abstract-level's, which it builds on) is in the program
 * bundles, only its native binding outside: ~30 ms of a controller's start uncached (a
 * --cpu-prof of bench/process-cost.ts). Its binding.js becomes node-gyp-build (bundled
 * too) on classic-level's directory, so the prebuilt library is found beside the
 * package's own files (the agent bundle ships that package).
 */
const classicLevelBindingPlugin = nativeLoaderPlugin('classic-level-binding', {
  filter: /^\.\/binding(\.js)?$/, importer: /[\\/]node_modules[\\/]classic-level$/, pkg: 'classic-level', loader: 'node-gyp-build', resolveDir: join(root, 'node_modules', 'classic-level')
})

/**
 * msgpackr's native string extractor, loaded as its package does (node-gyp-build-optional-
 * packages picks the prebuilt for this platform, libc and ABI), with that loader and
 * detect-libc in the bundles (~10 ms a process uncached). If the lookup fails, msgpackr's
 * own guard falls back to its JavaScript decoder, as when the package is absent.
 */
const msgpackrExtractPlugin = nativeLoaderPlugin('msgpackr-extract', {
  filter: /^msgpackr-extract$/, pkg: 'msgpackr-extract', loader: 'node-gyp-build-optional-packages', resolveDir: root
})

/** Every executable file starts with a hashbang (valid in any ES module). */
const hashbang = '#!/usr/bin/env node'
/** Bundled CommonJS modules call `require`, which ESM output lacks, so each module file gets one. */
const moduleBanner = `${hashbang}\nimport { createRequire as __cantripCreateRequire } from 'node:module'; const require = __cantripCreateRequire(import.meta.url);`

const common: BuildOptions = {
  absWorkingDir: root,
  outdir: distDir,
  bundle: true,
  platform: 'node',
  target: 'node20',
  external,
  sourcemap: 'linked',
  // Whitespace and syntax minified make about half the bytes to scan and compile. Names
  // are kept (no identifier minifying), so stack traces and error and class names read
  // as in the source; the source map maps back.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning'
}

/** The simulator's engine and workers and the agent launcher: ES modules, shared chunks. */
export const buildOptions: BuildOptions = {
  ...common,
  entryPoints: Object.entries(moduleEntryPoints).map(([out, path]) => ({ in: path, out })),
  outExtension: { '.js': '.mjs' },
  // Flat: every bundled module's import.meta.url is in dist/, so siblings resolve alike from all.
  chunkNames: '[name]-[hash]',
  splitting: true,
  format: 'esm',
  banner: { js: moduleBanner }
}

/**
 * The client and the agent as one script each. `import.meta` becomes the loader's (an
 * ES module beside the script), and `import()` of a bundled module becomes its lazy
 * evaluation inside the script; an import() of an external (a package, or one of
 * separateModules) stays, and the loader resolves it as an ES module's beside the script.
 */
const programOptions: BuildOptions = {
  ...common,
  entryPoints: Object.entries(programs).map(([out, p]) => ({ in: p.program, out })),
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  external: external.filter(name => name !== 'classic-level' && name !== 'msgpackr-extract'),
  define: { 'import.meta.url': importMetaNames.url, 'import.meta.resolve': importMetaNames.resolve },
  plugins: [separateModulesPlugin, classicLevelBindingPlugin, msgpackrExtractPlugin]
}

export async function buildDist (): Promise<void> {
  const written = new Set<string>()
  const record = (metafile: Metafile): void => { for (const output of Object.keys(metafile.outputs)) written.add(join(root, output)) }
  record((await build({ ...buildOptions, metafile: true })).metafile)
  const programBuild = await build({ ...programOptions, metafile: true })
  record(programBuild.metafile)
  renameDynamicImports(programBuild.metafile)
  const define: Record<string, string> = {}
  for (const [name, p] of Object.entries(programs)) {
    const bundle = join(distDir, `${name}.cjs`)
    const digest = createHash('sha256').update(readFileSync(bundle)).digest()
    writeCodeCache(bundle, digest)
    written.add(`${bundle}.v8cache`)
    define[p.digestName] = JSON.stringify(digest.toString('hex'))
  }
  // Last, so a loader never names a bundle that is not yet written (test/support/dist.ts
  // also takes dist/cantrip.mjs's time as the build's).
  record((await build({
    ...common,
    entryPoints: Object.entries(programs).map(([out, p]) => ({ in: p.loader, out })),
    outExtension: { '.js': '.mjs' },
    format: 'esm',
    define,
    banner: { js: hashbang },
    metafile: true
  })).metafile)
  for (const bin of [...Object.keys(programs), 'cantripd-stub']) chmodSync(join(distDir, `${bin}.mjs`), 0o755)
  if (await buildToolClient()) written.add(join(distDir, toolClientName))
  // Chunks of earlier builds would ship in the package (files: dist/*.mjs) and in agent
  // bundles; a running agent holds its whole program in memory, so none needs them.
  for (const name of readdirSync(distDir)) {
    const path = join(distDir, name)
    if (!written.has(path)) rmSync(path, { recursive: true, force: true })
  }
}

/**
 * Every `import("…")` left in a program bundle (of an external package or one of
 * separateModules, as the metafile lists them) calls the loader's import instead
 * (agent/tools/cached-program.ts: a vm.Script's own needs a flag on Node 20). The build
 * fails if one the metafile names is not found, or an import( is left that it does not name.
 */
function renameDynamicImports (metafile: Metafile): void {
  for (const [output, meta] of Object.entries(metafile.outputs)) {
    if (!output.endsWith('.cjs')) continue
    const path = join(root, output)
    let text = readFileSync(path, 'utf8')
    for (const { path: specifier } of meta.imports.filter(i => i.kind === 'dynamic-import' && i.external === true)) {
      const call = `import(${JSON.stringify(specifier)})`
      if (!text.includes(call)) throw new Error(`build: expected ${call} in ${output}, found none`)
      text = text.replaceAll(call, `${dynamicImportName}(${JSON.stringify(specifier)})`)
    }
    const left = /(?<![\w$.])import\(/.exec(text)
    if (left !== null) throw new Error(`build: expected no import( left in ${output}, found one at ${left.index}: ${text.slice(left.index, left.index + 60)}`)
    writeFileSync(path, text)
  }
}

/**
 * V8's code cache of a program bundle, made in a Node of its own (the one running this
 * build, which is the one the tests and `npm ci`'s installation run): it compiles every
 * function eagerly, so the cache holds the code of every command and role, not only
 * what one run happened to call. The file starts with the bundle's digest, which the
 * loader checks before it hands the rest to V8.
 */
function writeCodeCache (bundle: string, digest: Buffer): void {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'code-cache.ts'), bundle, `${bundle}.v8cache`, digest.toString('hex')], { cwd: root, encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`build: expected the code cache of ${bundle}, got exit ${String(run.status)}: ${run.stderr}`)
  if (digest.length !== cacheDigestBytes) throw new Error(`build: expected a ${cacheDigestBytes}-byte digest, got ${digest.length}`)
}

/** The hook-tool client as the agent bundle ships it (agent/hook-tools/client/build-client.ts finds it there). */
const toolClientName = 'cantrip-tool'

/**
 * Compiles the hook-tool client here, once, so the agent built from this tree carries it
 * and a machine needs no compiler. Without a compiler the build goes on: the agent then
 * compiles the client on first use, as it did before, and says so if it cannot.
 */
async function buildToolClient (): Promise<boolean> {
  try {
    const built = await ensureToolClient({ cacheDir: join(tmpdir(), `cantrip-tool-build-${process.getuid?.() ?? 0}`) })
    const temporary = join(distDir, `.${toolClientName}.tmp-${process.pid}`)
    copyFileSync(built, temporary)
    chmodSync(temporary, 0o755)
    renameSync(temporary, join(distDir, toolClientName))
    return true
  } catch (error) {
    process.stderr.write(`build: hook-tool client not built (${error instanceof Error ? error.message : String(error)}); agents will compile it on first use\n`)
    return false
  }
}

const invokedDirectly = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]
if (invokedDirectly) {
  const started = performance.now()
  await buildDist()
  if (!process.argv.includes('--quiet')) process.stdout.write(`build: dist/ in ${Math.round(performance.now() - started)} ms\n`)
}
