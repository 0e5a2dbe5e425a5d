/**
 * status-set and status-get (juju-semantics §5.3). status-set takes effect at once
 * (§4.3) and accepts only the four statuses a charm may set. Both refuse `--application`
 * to a unit that is not the leader, with Juju's messages.
 */
import { HookToolError } from '../hook-context.ts'
import type { StatusInfo } from '../hook-context.ts'
import { checkEmpty, goQuote, usageError } from './args.ts'
import { outputFormat, outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'

const settable = ['maintenance', 'blocked', 'waiting', 'active'] as const
type Settable = typeof settable[number]

export const statusSet: HookTool = {
  name: 'status-set',
  args: '<maintenance | blocked | waiting | active> [message]',
  purpose: 'Set status information.',
  doc: 'Sets the workload status of the charm. Message is optional. The "last updated" attribute of the status is set, even if the status and message are the same as what\'s already set.',
  flags: () => ({
    application: { names: ['application'], usage: 'set this status for the application to which the unit belongs if the unit is the leader' }
  }),
  async run (call, parsed) {
    const [status, message = '', ...rest] = parsed.args
    if (status === undefined) throw usageError('invalid args, require <status> [message]')
    if (!(settable as readonly string[]).includes(status)) {
      throw usageError(`invalid status ${goQuote(status)}, expected one of [${settable.join(' ')}]`)
    }
    checkEmpty(rest)
    const application = parsed.bool('application')
    if (application && !await call.context.isLeader()) throw new HookToolError(1, 'this unit is not the leader')
    await call.context.setStatus(status as Settable, message, application)
  }
}

function details (info: StatusInfo, includeData: boolean): Record<string, unknown> {
  if (!includeData) return { status: info.status }
  return { status: info.status, message: info.message, 'status-data': { ...info.data } }
}

export const statusGet: HookTool = {
  name: 'status-get',
  args: '[--include-data] [--application]',
  purpose: 'Print status information.',
  doc: 'By default, only the status value is printed. With --include-data, the message and data are printed too. --application prints the application\'s status and its units\' (leader only).',
  flags: () => ({
    ...outputFlags,
    includeData: { names: ['include-data'], usage: 'print all status data' },
    application: { names: ['application'], usage: 'print status for all units of this application if this unit is the leader' }
  }),
  async run (call, parsed) {
    checkEmpty(parsed.args)
    const includeData = parsed.bool('includeData')
    const application = parsed.bool('application')
    if (application && !await call.context.isLeader()) throw new HookToolError(1, 'finding application status: this unit is not the leader')
    const info = await call.context.status(application)
    if (!includeData && outputFormat(parsed) === 'smart') {
      await writeOutput(call, parsed, info.status)
      return
    }
    if (!application) {
      await writeOutput(call, parsed, details(info, includeData))
      return
    }
    const units = Object.fromEntries(Object.entries(info.units ?? {}).map(([unit, unitInfo]) => [unit, details(unitInfo, includeData)]))
    await writeOutput(call, parsed, { 'application-status': { ...details(info, includeData), units } })
  }
}
