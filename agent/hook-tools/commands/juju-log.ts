/**
 * juju-log (juju-semantics §5.3): writes the arguments, joined by spaces, to the unit
 * log at once (§4.3). In a relation hook the message is prefixed `<endpoint>:<id>: `.
 * An unknown level is logged as Juju does: a warning about it, then the message at INFO.
 */
import type { LogLevel } from '../hook-context.ts'
import { goQuote, usageError } from './args.ts'
import type { HookTool } from './hook-tool.ts'

/** loggo.ParseLevel: case-insensitive, WARN meaning WARNING. */
function parseLevel (text: string): LogLevel | undefined {
  const upper = text.toUpperCase()
  if (upper === 'WARN') return 'WARNING'
  return (['TRACE', 'DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const).find(level => level === upper)
}

export const jujuLog: HookTool = {
  name: 'juju-log',
  args: '<message>',
  purpose: 'Write a message to the juju log.',
  flags: () => ({
    debug: { names: ['debug'], usage: 'log at debug level' },
    level: { names: ['l', 'log-level'], value: 'level', usage: 'Send log message at the given level' },
    format: { names: ['format'], value: 'format', usage: 'deprecated format flag' }
  }),
  async run (call, parsed) {
    if (parsed.args.length === 0) throw usageError('no message specified')
    const message = parsed.args.join(' ')
    const format = parsed.string('format')
    // Juju writes this warning without a newline; so does cantrip.
    if (format !== undefined && format !== '') call.stderr += `--format flag deprecated for command ${goQuote('juju-log')}`
    let level: LogLevel = 'INFO'
    const asked = parsed.string('level') ?? 'INFO'
    if (parsed.bool('debug')) {
      level = 'DEBUG'
    } else if (asked !== '') {
      const parsedLevel = parseLevel(asked)
      if (parsedLevel === undefined) await call.context.log('WARNING', `Specified log level of ${goQuote(asked)} is not valid`)
      else level = parsedLevel
    }
    const relation = call.context.relation
    const prefix = relation === undefined ? '' : `${relation.endpoint}:${relation.id}: `
    await call.context.log(level, `${prefix}${message}`)
  }
}
