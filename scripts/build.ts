/**
 * `npm run build` (also run by `npm ci` through `prepare`, and by `npm test` first, so
 * the processes the tests start are the bundles that ship): bundles the client
 * (`dist/cantrip.mjs`) and the agent (`dist/cantripd.mjs`) with esbuild, each with the
 * libraries it uses, so that a command starts by reading a few files instead of
 * resolving and transpiling hundreds. Code loaded on use (the simulator, the inspector,
 * the diagram exporter) is split into chunks of its own, loaded only when a command
 * needs it. Every file sits directly in dist/. The simulator's swarm worker and engine are entry points too, since worker
 * threads load them by file.
 *
 * Left outside the bundle, resolved from node_modules at run time: packages with native
 * or platform binaries (classic-level's LevelDB binding, msgpackr's optional native
 * extension, esbuild itself, which the inspector's viewer runs) and the browser driver
 * only tests use.
 *
 *   node --import tsx scripts/build.ts [--quiet]
 */
import { build, type BuildOptions } from 'esbuild'
import { chmodSync, copyFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { ensureToolClient } from '../agent/hook-tools/client/build-client.ts'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..')
export const distDir = join(root, 'dist')

/** Entry points, by the file name each gets under dist/. */
const entryPoints = {
  cantrip: 'bin/cantrip.ts',
  cantripd: 'agent/cantripd.ts',
  'cantripd-stub': 'agent/cantripd-stub.ts',
  'sim-engine': 'sim/cli/sim-engine.ts',
  'sim-swarm-worker': 'sim/cli/sim-swarm-worker.ts',
  // The scenario swarms' worker (sim/swarm.ts): the swarm tests' threads load it instead of
  // transpiling the tree through tsx, each.
  'scenario-swarm-worker': 'sim/swarm-worker.ts'
}

/** Resolved from node_modules at run time: native bindings, platform binaries, test-only tools. */
const external = ['classic-level', 'msgpackr-extract', 'esbuild', 'playwright-core']

/**
 * Every file starts as an executable script (a hashbang is valid in any ES module), and
 * bundled CommonJS modules call `require`, which ESM output lacks, so each file gets one.
 */
const banner = "#!/usr/bin/env node\nimport { createRequire as __cantripCreateRequire } from 'node:module'; const require = __cantripCreateRequire(import.meta.url);"

export const buildOptions: BuildOptions = {
  absWorkingDir: root,
  entryPoints: Object.entries(entryPoints).map(([out, path]) => ({ in: path, out })),
  outdir: distDir,
  outExtension: { '.js': '.mjs' },
  // Flat: every bundled module's import.meta.url is in dist/, so siblings resolve alike from all.
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  banner: { js: banner },
  sourcemap: 'linked',
  // Every command compiles what it loads, and compiling is most of a short command's CPU
  // (issue 28: ~40 % of a one-shot \`cantrip status\`): whitespace and syntax minified
  // make about half the bytes to scan. Names are kept (no identifier minifying), so
  // stack traces and error and class names read as in the source; the source map maps back.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning'
}

/**
 * A chunk a running agent may still load on use is not deleted by the next build (a
 * controller started from the last build outlives it): only chunks this build did not
 * write and that are older than this.
 */
const staleChunkAgeMs = 24 * 3600_000

export async function buildDist (): Promise<void> {
  const result = await build({ ...buildOptions, metafile: true })
  for (const bin of ['cantrip', 'cantripd', 'cantripd-stub']) chmodSync(join(distDir, `${bin}.mjs`), 0o755)
  const written = new Set(Object.keys(result.metafile.outputs).map(output => join(root, output)))
  if (await buildToolClient()) written.add(join(distDir, toolClientName))
  for (const name of readdirSync(distDir)) {
    const path = join(distDir, name)
    if (!written.has(path) && Date.now() - statSync(path).mtimeMs > staleChunkAgeMs) rmSync(path, { recursive: true, force: true })
  }
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
