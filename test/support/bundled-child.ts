/**
 * A test's child-process program (a TypeScript file under test/ that imports the sources)
 * as one ES module bundled by esbuild, for plain `node FILE` instead of
 * `node --import tsx FILE`. The child runs the same sources, transpiled by the same
 * esbuild tsx uses; what it no longer pays is tsx's start and its module hooks, which
 * run off-thread for every module the child loads (libp2p is hundreds): a Libp2pTransport
 * child took 1.3-1.5 CPU-s to print its address under tsx and 0.5-0.6 bundled, the unit
 * agent fixture 1.1-1.4 and 0.25 (each measured at load ~40).
 *
 * Packages stay outside the bundle (native bindings, and the code that ships them is
 * node_modules' own), so the bundle is written inside the repository, in a directory of
 * this process's own under `.cache/` (ignored by git), where node resolves them as it
 * does for the sources; the directory is removed when this process exits. A bundle's
 * `import.meta.url` is its own file: the sources take paths from the package root
 * (agent/package-root.ts), found by walking up, and a `.js` bundle counts as running from
 * source there, as under tsx. Stack traces in a child's output name the bundle's lines.
 */
import { buildSync } from 'esbuild'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { basename, extname, join } from 'node:path'
import { repoRoot } from './dist.ts'

/** The bundles made by this process, by entry file. */
const bundles = new Map<string, string>()
let outDir: string | undefined

/** `entry` (absolute, or relative to the repository) bundled once per process: the file to run with `node`. */
export function bundledChild (entry: string): string {
  const source = join(entry.startsWith('/') ? '' : repoRoot, entry)
  const made = bundles.get(source)
  if (made !== undefined) return made
  if (outDir === undefined) {
    mkdirSync(join(repoRoot, '.cache'), { recursive: true })
    const dir = mkdtempSync(join(repoRoot, '.cache', 'test-children-'))
    process.once('exit', () => { rmSync(dir, { recursive: true, force: true }) })
    outDir = dir
  }
  const outfile = join(outDir, `${bundles.size}-${basename(source, extname(source))}.js`)
  buildSync({ entryPoints: [source], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'error' })
  bundles.set(source, outfile)
  return outfile
}
