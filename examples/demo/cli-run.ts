/**
 * Runs the real `cantrip` CLI (the built dist/cantrip.mjs, as installed) as its own process, as a user would, echoing the command
 * first (`$ cantrip …`). Output goes straight to this process's stdout and stderr.
 * Bounded: past `cliRunMsMax` the child is killed by its pid and the run fails.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'

/** Longest one CLI command may take (bootstrap waits up to 120 s for a leader itself). */
const cliRunMsMax = 240_000

export async function cantrip (repoRoot: string, args: readonly string[], say: (line: string) => void): Promise<void> {
  say(`$ cantrip ${args.join(' ')}`)
  const child = spawn(process.execPath, [join(repoRoot, 'dist', 'cantrip.mjs'), ...args], {
    cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit']
  })
  let timedOut = false
  const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL') }, cliRunMsMax)
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', status => { resolve(status) })
  }).finally(() => { clearTimeout(timer) })
  if (timedOut) throw new Error(`cantrip demo: expected "cantrip ${args[0] ?? ''}" to finish within ${cliRunMsMax / 1000} s, got no end (killed pid ${child.pid ?? '?'})`)
  if (code !== 0) throw new Error(`cantrip demo: "cantrip ${args.join(' ')}" failed (exit ${String(code)}; its error is above)`)
}
