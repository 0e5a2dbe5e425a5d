/**
 * `cantrip`: the command line, with Juju's commands, flags and output. Each command
 * lives in agent/cli/commands/ and registers itself on the program; `runCantrip` parses
 * (refusing unknown flags and bad values before anything is sent), runs, closes every
 * connection, and turns a failure into one line on stderr and exit 1. The executable is
 * bin/cantrip.ts, which adds the commands that live outside agent/ (`cantrip sim`).
 */
import { Command, CommanderError } from 'commander'
import { cantripVersion, createContext } from './cli-context.ts'
import { commands } from './commands/index.ts'

/** A command registered from outside agent/: it gets the program only, no CLI context. */
export type ExtraCommand = (program: Command) => void

export async function runCantrip (argv: readonly string[], extraCommands: readonly ExtraCommand[] = []): Promise<number> {
  const noColor = argv.includes('--no-color')
  const context = createContext({ noColor })
  const program = new Command('cantrip')
    .description('deploy, relate and scale charms on a mesh of agents, the way Juju does')
    .version(cantripVersion, '--client-version', 'print the client version')
    .option('--no-color', 'plain output, no colour or progress drawing (also NO_COLOR, CI)')
    .option('-m, --model <model>', 'model to operate in, [controller:]model (default: the current one)')
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeErr: text => { process.stderr.write(text) } })
  // A program option, so every model command takes it, before or after its own arguments.
  program.hook('preAction', () => { context.model = (program.opts() as { model?: string }).model })
  for (const register of commands) register(program, context)
  for (const register of extraCommands) register(program)
  try {
    await program.parseAsync([...argv], { from: 'user' })
    return 0
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode
    const message = error instanceof Error ? error.message : String(error)
    process.stderr.write(`ERROR ${message.split('\n')[0]}\n`)
    return 1
  } finally {
    await context.closeAll()
  }
}
