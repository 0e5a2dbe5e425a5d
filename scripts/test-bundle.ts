/**
 * A test job's files bundled by esbuild, for scripts/run-tests.ts to run under plain node
 * (the default; CANTRIP_TEST_BUNDLED=0 runs `node --import tsx` instead): tsx's module hooks run
 * off-thread in Node 20 for every module a job loads, node_modules' too, and a job that
 * loads libp2p spent ~1 CPU-s more to import its files under tsx than bundled (cli-e2e
 * 1.40 against 0.56 CPU-s, cantripd-deploy 1.70 against 0.55, cli-exec 0.43 against
 * 0.13). The sources are transpiled by the same esbuild tsx uses, one bundle per job with
 * shared chunks (a module is one instance across the job's files, as in one tsx
 * process), packages left external and resolved from node_modules, since the bundle is
 * written inside the repository (under `.cache/`, ignored by git).
 *
 * What a module reads of its own location is kept: `import.meta.url`, `.dirname` and
 * `.filename` are defined, in each source file that names them, as that file's own (an
 * esbuild transform of that file alone, so a string that holds the words is left as it
 * is), as tsx would have them: paths built from them (fixtures, the package root) and the
 * "run from source" test of agent/package-root.ts read as before. Each bundle has its
 * source map and the job runs with --enable-source-maps, so stack traces name the sources'
 * files and lines (which the chaos figures' record reads: chaos-scale.ts callerTestFile).
 *
 * Not the same: code splitting may run a shared chunk's top level before a test file's
 * own first import (esbuild's documented caveat); the one module every entry point must
 * run first, runtime/polyfill.ts, is run first by the job's entry point. A whole run
 * passed bundled before it became the default.
 */
import { build, transform, type Plugin } from 'esbuild'
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** One test file of the job: the name uvu prints for it (its path below test/) and the bundle to import. */
export interface BundledTest { name: string, file: string }

/**
 * The job's entry point: runtime/polyfill.ts first, as every entry point imports it (the
 * chunks esbuild splits out may run before a test file's own first import would), then
 * uvu's own runner (what uvu/bin.js calls once it has found the files) over the bundles
 * named in argv.
 */
const runnerSource = "import './polyfill.js'\nimport { run } from 'uvu/run'\nawait run(JSON.parse(process.argv[2]), { bail: false })\n"

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..')
/** The repository's TypeScript settings, which the bundle's own transform of every other file reads. */
const tsconfigRaw = readFileSync(join(repoRoot, 'tsconfig.json'), 'utf8')

/** Defines each source file's `import.meta.url`, `.dirname` and `.filename` as its own. */
const ownImportMeta: Plugin = {
  name: 'own-import-meta',
  setup (build) {
    build.onLoad({ filter: /\.[cm]?ts$/ }, async args => {
      const text = readFileSync(args.path, 'utf8')
      if (!text.includes('import.meta.')) return undefined
      const define = {
        'import.meta.url': JSON.stringify(pathToFileURL(args.path).href),
        'import.meta.dirname': JSON.stringify(dirname(args.path)),
        'import.meta.filename': JSON.stringify(args.path)
      }
      // With its own source map inline, which the bundle's map takes up: traces keep this file's lines.
      const js = await transform(text, { loader: 'ts', format: 'esm', target: 'node20', define, tsconfigRaw, sourcefile: args.path, sourcemap: 'inline' })
      return { contents: js.code, loader: 'js' }
    })
  }
}

/**
 * Bundles `files` (paths below `testDir`) into `outDir`, and answers the node arguments
 * that run them in the order given, as uvu would (its headers name the files as given).
 */
export async function bundleTests (testDir: string, files: readonly string[], outDir: string): Promise<string[]> {
  const polyfill = { in: join(repoRoot, 'runtime', 'polyfill.ts'), out: 'polyfill' }
  const entries = [polyfill, ...files.map((name, i) => ({ in: join(testDir, name), out: `t${i}` }))]
  await build({
    entryPoints: entries, outdir: outDir, bundle: true, splitting: true, format: 'esm', platform: 'node', target: 'node20',
    packages: 'external', sourcemap: 'linked', plugins: [ownImportMeta], logLevel: 'error'
  })
  const runner = join(outDir, 'run.js')
  writeFileSync(runner, runnerSource)
  const tests: BundledTest[] = files.map((name, i) => ({ name, file: join(outDir, `t${i}.js`) }))
  return ['--enable-source-maps', runner, JSON.stringify(tests)]
}
