/**
 * Where this installation of cantrip lives, and how to start its agent. The same modules
 * run from source (agent/…, through tsx, as the tests import them) and from the bundle
 * (dist/… and dist/chunks/…, which `bin` names and which processes run), at different
 * depths below the package, so paths are taken from the package root, found by walking
 * up to cantrip's own package.json, never from a module's own location.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** How far up from a module the package root may be (dist/chunks/x.mjs is two levels down). */
const packageDepthMax = 4
const packageName = 'cantrip'

function findPackageRoot (from: string): string {
  let dir = from
  for (let level = 0; level <= packageDepthMax; level++) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === packageName) return dir
    dir = dirname(dir)
  }
  throw new Error(`cantrip: expected ${packageName}'s package.json within ${packageDepthMax} directories above ${from}, found none`)
}

export const packageRoot = findPackageRoot(dirname(fileURLToPath(import.meta.url)))

/** Whether this code is the bundle under dist/ (else the TypeScript source, run by tsx). */
export const runningBundled = import.meta.url.endsWith('.mjs')

/** A node program to start: the file and the arguments before its own. */
export interface NodeProgram { file: string, args: string[] }

/**
 * cantripd as this installation runs it: the bundle when this is the bundle, else the
 * source through tsx, by absolute loader URL so the agent does not depend on its working
 * directory. Either way with the node running this process.
 */
export function cantripdProgram (): NodeProgram {
  if (runningBundled) return { file: process.execPath, args: [join(packageRoot, 'dist', 'cantripd.mjs')] }
  return { file: process.execPath, args: ['--import', import.meta.resolve('tsx'), join(packageRoot, 'agent', 'cantripd.ts')] }
}

/**
 * The agent launcher (agent/cantripd-stub.ts) as this installation runs it: what a
 * provider starts for a machine, so the machine runs the agent version it switched to.
 */
export function cantripdStubProgram (): NodeProgram {
  if (runningBundled) return { file: process.execPath, args: [join(packageRoot, 'dist', 'cantripd-stub.mjs')] }
  return { file: process.execPath, args: ['--import', import.meta.resolve('tsx'), join(packageRoot, 'agent', 'cantripd-stub.ts')] }
}
