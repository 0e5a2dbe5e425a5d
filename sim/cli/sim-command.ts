/**
 * `cantrip sim SCENARIO [--seed N | --seeds A..B --jobs K] [--shrink] [--report DIR] [--json] [--quiet]`
 * as a command of the `cantrip` program: the simulator runs in the CLI's own process
 * (bin/cantrip.ts registers this beside agent/'s commands, since agent/ may not import
 * sim/), with every argument handed to simMain unchanged. Exit codes are simMain's:
 * 0 pass, 1 safety, 2 liveness, 3 crash, 64 usage.
 */
import { CommanderError, type Command } from 'commander'
import { simExitCodes } from '../scenario/scenario-types.ts'

export function registerSimCommand (program: Command): void {
  program.command('sim')
    .description('run a scenario on the deterministic simulator (cantrip sim --help for its flags)')
    .argument('[args...]', 'scenario file and flags, passed to the simulator')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (args: string[]) => {
      const code = await runSimCommand(args)
      // A CommanderError carries the exit code out through cantrip's main without a message.
      if (code !== 0) throw new CommanderError(code, 'cantrip.sim', '')
    })
}

/** simMain, with a failure outside a run (writing a report or a file) as one line and the crash code. */
export async function runSimCommand (args: readonly string[]): Promise<number> {
  try {
    // Loaded on use: every other cantrip command would otherwise pay for the simulator's modules.
    const { simMain } = await import('./sim-main.ts')
    return await simMain(args)
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error)
    process.stderr.write(`${message.startsWith('sim: ') ? '' : 'sim: '}${message}\n`)
    return simExitCodes.crash
  }
}
