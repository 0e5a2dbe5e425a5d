import type { HookOutcome } from '../../actors/unit/operation.ts'

/**
 * What Juju adds to an action's results once its process ran (runner.go,
 * runCharmProcessOnLocal and updateActionResults): `return-code`, and `stdout` and
 * `stderr` when not empty, each line ending in a newline as Juju's hook logger copies
 * them. Nothing when no process ran (no handler, or one that could not be executed).
 */
export function actionProcessResults (outcome: HookOutcome, output: { stdout: readonly string[], stderr: readonly string[] }): Record<string, unknown> {
  let code: number
  if (outcome.kind === 'succeeded') code = 0
  else if (outcome.kind === 'failed' && outcome.exitCode !== null) code = outcome.exitCode
  else if (outcome.kind === 'terminated') code = -1 // Go's ProcessState.ExitCode() for a signalled process.
  else return {}
  const results: Record<string, unknown> = { 'return-code': code }
  if (output.stdout.length > 0) results.stdout = lines(output.stdout)
  if (output.stderr.length > 0) results.stderr = lines(output.stderr)
  return results
}

function lines (text: readonly string[]): string {
  return text.map(line => `${line}\n`).join('')
}
