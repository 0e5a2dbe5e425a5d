/**
 * The charm and the bookkeeping of the uniter kill -9 suite: every hook of the lifecycle
 * logs its start and end (pid and all) to a file outside the agent, sleeps a random few
 * tens of milliseconds so kills land in every phase, and commits one count of itself
 * through the hook tools (`state-set <hook>-count=n+1`), which the controller keeps only
 * if the hook exits 0. A hook that committed twice shows as a count of 2.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const lifecycleHooks = ['install', 'leader-elected', 'config-changed', 'start'] as const

export function writeKillCharm (charmDir: string, hookLog: string): void {
  mkdirSync(join(charmDir, 'hooks'), { recursive: true })
  writeFileSync(join(charmDir, 'metadata.yaml'), 'name: slow\nsummary: slow\ndescription: hooks that log, sleep and count themselves\n')
  const script = [
    '#!/bin/bash',
    'set -e',
    'name=$(basename "$0")',
    `echo "$name start $$" >> ${JSON.stringify(hookLog)}`,
    'sleep "0.0$((RANDOM % 10))"',
    'n=$(state-get "$name-count" || true)',
    'state-set "$name-count=$(( ${n:-0} + 1 ))"',
    'sleep "0.0$((RANDOM % 5))"',
    `echo "$name end $$" >> ${JSON.stringify(hookLog)}`,
    ''
  ].join('\n')
  for (const hook of lifecycleHooks) {
    writeFileSync(join(charmDir, 'hooks', hook), script)
    chmodSync(join(charmDir, 'hooks', hook), 0o755)
  }
}

/** Hook runs as logged: how many started and how many reached their end, by hook. */
export function hookRuns (hookLog: string): Record<string, { started: number, ended: number }> {
  const runs: Record<string, { started: number, ended: number }> = {}
  if (!existsSync(hookLog)) return runs
  for (const line of readFileSync(hookLog, 'utf8').split('\n')) {
    const [hook, event] = line.split(' ')
    if (hook === undefined || (event !== 'start' && event !== 'end')) continue
    runs[hook] ??= { started: 0, ended: 0 }
    if (event === 'start') runs[hook].started++
    else runs[hook].ended++
  }
  return runs
}
