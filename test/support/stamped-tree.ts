/**
 * A copy of this source tree whose package.json says another version: a second release
 * of cantrip as far as every process started from it can tell (each reads its version
 * from its own tree's package.json), without a test-only switch in the shipped code.
 * node_modules is linked, not copied. Remove it with the returned `remove`.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureDist } from './dist.ts'

const repoRoot = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..')
/** What a running cantrip needs of its tree: the code and the package description. */
const copied = ['actors', 'runtime', 'providers', 'agent', 'sim', 'bin', 'dist', 'package.json', 'tsconfig.json']

export interface StampedTree { root: string, remove: () => void }

export function stampedTree (version: string): StampedTree {
  ensureDist()
  const root = mkdtempSync(join(tmpdir(), 'cantrip-stamped-'))
  for (const entry of copied) {
    if (existsSync(join(repoRoot, entry))) cpSync(join(repoRoot, entry), join(root, entry), { recursive: true })
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'), 'dir')
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Record<string, unknown>
  writeFileSync(join(root, 'package.json'), `${JSON.stringify({ ...pkg, version }, null, 2)}\n`)
  return { root, remove: () => { rmSync(root, { recursive: true, force: true }) } }
}
