/**
 * Whether dist/ (scripts/build.ts) was built after the last change to anything it is
 * built from, by modification times: the sources the bundles are made of, the manifest
 * and lock file they read, and the build's own scripts. `npm ci` builds dist/ (the
 * `prepare` script), so a clean clone's `npm test` finds it fresh and need not build it
 * again; a source edited since makes it stale. Kept apart from build.ts so that a test
 * process can ask without loading esbuild.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** What dist/ is built from, relative to the repository root. */
export const distInputs = ['bin', 'agent', 'runtime', 'actors', 'providers', 'sim', 'package.json', 'package-lock.json', 'scripts/build.ts', 'scripts/code-cache.ts']

/**
 * The newest modification time under `path`, directories included (a file removed
 * changes its directory's). The tree is the repository's own, of bounded depth.
 */
function newestMtimeMs (path: string): number {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestMtimeMs(join(path, name))), stat.mtimeMs)
}

/** dist/cantrip.mjs, written last by a build, is at least as new as every input that exists. */
export function distFresh (root: string): boolean {
  const bundle = join(root, 'dist', 'cantrip.mjs')
  if (!existsSync(bundle)) return false
  const inputs = distInputs.map(input => join(root, input)).filter(path => existsSync(path))
  return statSync(bundle).mtimeMs >= Math.max(...inputs.map(newestMtimeMs))
}
