/**
 * What `npm start` needs besides the repository: a Node as new as package.json's engines
 * field asks, bash (hooks are bash scripts) and a C compiler as `cc` (the hook tools'
 * client is compiled on first use). Each missing piece is one line saying what to do.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureToolClient } from '../../agent/hook-tools/client/build-client.ts'

const component = 'cantrip demo'

/** `20.19.1` ≥ `20.19`? Compares major, minor, patch numerically. */
export function versionAtLeast (have: string, want: string): boolean {
  const a = have.replace(/^v/, '').split('.').map(Number)
  const b = want.split('.').map(Number)
  for (let i = 0; i < 3; i++) {
    const x = a[i] ?? 0
    const y = b[i] ?? 0
    if (x !== y) return x > y
  }
  return true
}

function onPath (command: string, args: string[]): boolean {
  const run = spawnSync(command, args, { stdio: 'ignore', timeout: 10_000 })
  return run.error === undefined && run.status === 0
}

/** Throws one line naming the first missing prerequisite; builds the hook tools' client. */
export async function checkPrerequisites (repoRoot: string): Promise<void> {
  const engines = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines?: { node?: string } }).engines?.node ?? '>=20.19'
  const wanted = engines.replace(/^>=\s*/, '')
  if (!versionAtLeast(process.versions.node, wanted)) {
    throw new Error(`${component}: expected Node ${wanted} or newer, got ${process.version} (install a newer Node, e.g. with nvm)`)
  }
  if (!onPath('bash', ['-c', 'true'])) throw new Error(`${component}: expected bash on PATH (hooks are bash scripts), got none`)
  if (!onPath('cc', ['--version'])) {
    throw new Error(`${component}: expected a C compiler as "cc" on PATH (the hook tools' client is compiled with it), got none; install one, e.g. "apt-get install gcc"`)
  }
  try {
    await ensureToolClient()
  } catch (error) {
    throw new Error(`${component}: expected cc to build the hook tools' client, got: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`)
  }
}
