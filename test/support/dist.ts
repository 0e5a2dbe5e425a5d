/**
 * The shipped programs (scripts/build.ts: dist/cantrip.mjs and dist/cantripd.mjs), which
 * the real-process tests start as a user's install would. `npm test` builds dist/ before
 * any test runs; a test file run on its own rebuilds it here, once, when a source file is
 * newer than the bundle, so no test runs yesterday's code.
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { distFresh } from '../../scripts/dist-fresh.ts'

export const repoRoot = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..')
const buildTimeoutMs = 120_000

let checked = false

/** dist/ built from the sources as they are now. */
export function ensureDist (): void {
  if (checked) return
  if (!distFresh(repoRoot)) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts', 'build.ts'), '--quiet'], { cwd: repoRoot, encoding: 'utf8', timeout: buildTimeoutMs })
    if (run.status !== 0) throw new Error(`test: expected scripts/build.ts to build dist/, got exit ${String(run.status)}: ${run.stderr}`)
  }
  checked = true
}

/**
 * `<root>/dist/<name>.mjs`, built if stale. `root` is this repository or a copy of it
 * holding this dist/ (test/support/stamped-tree.ts); the bundle reads the version of the
 * tree it sits in.
 */
export function distProgram (name: 'cantrip' | 'cantripd', root = repoRoot): string {
  ensureDist()
  return join(root, 'dist', `${name}.mjs`)
}

/**
 * The built scenario-swarm worker (dist/scenario-swarm-worker.mjs), built if stale: sim/swarm.ts's
 * workers load it instead of transpiling the tree through tsx, each (about a CPU-second a worker).
 */
export function scenarioSwarmWorker (): URL {
  ensureDist()
  return pathToFileURL(join(repoRoot, 'dist', 'scenario-swarm-worker.mjs'))
}
