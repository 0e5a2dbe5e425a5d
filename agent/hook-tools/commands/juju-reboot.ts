/**
 * juju-reboot (juju-semantics §5.3): reboot the machine after the hook succeeds, or with
 * `--now` at once (the hook is killed and re-queued). Refused in actions, and in
 * `juju exec` commands, which Juju 3.x runs as the juju-exec action.
 */
import { HookToolError } from '../hook-context.ts'
import { checkEmpty } from './args.ts'
import type { HookTool } from './hook-tool.ts'

export const jujuReboot: HookTool = {
  name: 'juju-reboot',
  args: '',
  purpose: 'Reboot the host machine.',
  doc: 'Without --now the machine reboots only if the current hook completes successfully; with --now the hook is terminated at once and run again after the reboot. juju-reboot is not supported when running actions.',
  flags: () => ({
    now: { names: ['now'], usage: 'reboot immediately, killing the invoking process' }
  }),
  async run (call, parsed) {
    checkEmpty(parsed.args)
    // Juju's message, final period included.
    if (call.context.kind !== 'hook') throw new HookToolError(1, 'juju-reboot is not supported when running an action.')
    await call.context.requestReboot(parsed.bool('now'))
  }
}
