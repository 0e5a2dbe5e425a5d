/**
 * `cantrip`: the command line, with Juju's commands, flags and output. Each command
 * lives in agent/cli/commands/ and registers itself on the program; `runCantrip` parses
 * (refusing unknown flags and bad values before anything is sent), runs, closes every
 * connection, and turns a failure into one line on stderr and exit 1. A usage error (an
 * unknown command or flag, a missing argument) is one `ERROR …` line too, with commander's
 * "did you mean" kept and no help after it, and exits 2, as Juju's cmd package does. The executable is
 * bin/cantrip.ts, which adds the commands that live outside agent/ (`cantrip sim`).
 */
import { Command, CommanderError } from 'commander'
import { cantripVersion, createContext } from './cli-context.ts'
import { commandModules, modulesFor, type CommandModule } from './commands/index.ts'
import { checkStoreWritable, storeWritingCommands } from './store-check.ts'

/**
 * A command registered from outside agent/ (`cantrip sim`): its names and a loader, as in
 * the command table; its register function gets the program only, no CLI context.
 */
export interface ExtraCommand {
  readonly names: readonly string[]
  readonly load: () => Promise<(program: Command) => void>
}

export async function runCantrip (argv: readonly string[], extraCommands: readonly ExtraCommand[] = []): Promise<number> {
  const noColor = argv.includes('--no-color')
  const context = createContext({ noColor })
  const program = new Command('cantrip')
    .description('deploy, relate and scale charms on a mesh of agents, the way Juju does')
    .version(cantripVersion, '--client-version', 'print the client version')
    .option('--no-color', 'plain output, no colour or progress drawing (also NO_COLOR, CI)')
    .option('-m, --model <model>', 'model to operate in, [controller:]model (default: the current one)')
    .exitOverride()
    .configureOutput({ writeErr: text => { process.stderr.write(text) }, outputError: text => { process.stderr.write(usageErrorLine(text)) } })
  // A program option, so every model command takes it, before or after its own arguments.
  program.hook('preAction', (_program, command) => {
    context.model = (program.opts() as { model?: string }).model
    // A command that will write the store checks it first, so nothing is created or started in vain.
    if (storeWritingCommands.has(command.name())) checkStoreWritable()
  })
  // Only the named command's code is loaded (see commands/index.ts); all of it for help.
  const modules: readonly CommandModule[] = [...commandModules, ...extraCommands]
  for (const register of await Promise.all(modulesFor(argv, modules).map(async m => await m.load()))) register(program, context)
  try {
    await program.parseAsync([...argv], { from: 'user' })
    return 0
  } catch (error) {
    // Juju exits 2 on a usage error; help and --client-version are not errors, and a
    // command's own CommanderError (cantrip sim's exit codes) keeps its code.
    if (error instanceof CommanderError) {
      const usage = error.code.startsWith('commander.') && error.exitCode !== 0 && error.code !== 'commander.help'
      return usage ? usageExitCode : error.exitCode
    }
    const message = error instanceof Error ? error.message : String(error)
    // Juju lists failed tasks on lines of their own; every other failure is one line.
    process.stderr.write(`ERROR ${error instanceof Error && error.name === 'TaskFailures' ? message : message.split('\n')[0]}\n`)
    return 1
  } finally {
    await context.closeAll()
  }
}

/** Juju's exit status for a usage error (cmd.ErrSilent/flag errors in juju/cmd). */
export const usageExitCode = 2

/** Commander's `error: unknown option '--foo'\n(Did you mean --force?)\n` as one `ERROR …` line. */
export function usageErrorLine (text: string): string {
  const lines = text.split('\n').map(line => line.trim()).filter(line => line !== '')
  const [first = 'usage error', ...rest] = lines
  const suggestion = rest.map(line => line.replace(/^\((.*)\)$/, '$1').replace(/^Did you mean/, 'did you mean')).join(' ')
  const main = first.replace(/^error: /, '')
  const hint = / command /.test(main) ? '; see "cantrip --help"' : ''
  return `ERROR ${main}${suggestion === '' ? '' : ` (${suggestion})`}${hint}\n`
}
