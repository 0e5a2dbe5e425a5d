import type { ProcessExit, ProcessRunner, ProcessSpec } from '../../runtime/process-runner.ts'
import { limits } from '../../runtime/limits.ts'
import type { HookOutcome } from './operation.ts'

/**
 * A hook as a process (juju-semantics §4.1): exit 0 succeeds, a missing executable is a
 * skipped hook whose commit still applies, any other failure to start (no exec bit) or
 * non-zero exit is a hook failure, a timeout is a failure, and a kill because the agent
 * is stopping is `terminated` (re-queued, not an error). Shared by the real hook runner
 * and the simulated one, over the `ProcessRunner` contract.
 */
export function hookOutcomeOf (exit: ProcessExit, hookName: string): HookOutcome {
  switch (exit.kind) {
    case 'exited':
      // Juju's runner returns Go's exec.ExitError, whose text is "exit status N"; it is
      // an action's failure message as it is (runner.go runCharmProcessOnLocal, Flush).
      return exit.exitCode === 0 ? { kind: 'succeeded' } : { kind: 'failed', exitCode: exit.exitCode, reason: `exit status ${exit.exitCode}` }
    case 'spawn-failed':
      return exit.missing ? { kind: 'missing' } : { kind: 'failed', exitCode: null, reason: exit.reason }
    case 'timed-out':
      return { kind: 'failed', exitCode: null, reason: `hook "${hookName}" timed out` }
    case 'signalled':
      return { kind: 'terminated', signal: exit.signal }
  }
}

/**
 * Run one hook process; if `signal` aborts (the unit actor left the running state
 * because the agent is stopping), kill the process group and report it terminated.
 */
export async function runHookProcess (runner: ProcessRunner, spec: ProcessSpec, hookName: string, signal: AbortSignal): Promise<HookOutcome> {
  const running = runner.start(spec)
  const kill = (): void => { running.kill(limits.processKillGraceMs) }
  if (signal.aborted) kill()
  else signal.addEventListener('abort', kill, { once: true })
  try {
    return hookOutcomeOf(await running.exit, hookName)
  } finally {
    signal.removeEventListener('abort', kill)
  }
}
