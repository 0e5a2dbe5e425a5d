/**
 * `cantrip sim SCENARIO [--seed N | --seeds A..B --jobs K] [--shrink] [--report DIR] [--json] [--quiet]`:
 * runs a scenario on the deterministic simulator. The simulator lives in sim/, which the
 * real agent's code may not import (DESIGN §3), so this command runs sim/cli/sim-main.ts
 * as a child process — the same Node, with the tsx loader — hands it every argument
 * unchanged, shares the terminal with it, and exits with its code (0 pass, 1 safety,
 * 2 liveness, 3 crash, 64 usage).
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { CommanderError } from 'commander'
import type { RegisterCommand } from '../cli-context.ts'

const simMain = fileURLToPath(new URL('../../../sim/cli/sim-main.ts', import.meta.url))

export const registerSim: RegisterCommand = (program) => {
  program.command('sim')
    .description('run a scenario on the deterministic simulator (cantrip sim --help for its flags)')
    .argument('[args...]', 'scenario file and flags, passed to the simulator')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (args: string[]) => {
      const code = await runSimMain(args)
      // A CommanderError carries the exit code out through cantrip's main without a message.
      if (code !== 0) throw new CommanderError(code, 'cantrip.sim', '')
    })
}

export function runSimMain (args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), simMain, ...args], { stdio: 'inherit' })
    child.on('error', reject)
    child.on('exit', (code, signal) => { resolve(code ?? (signal === null ? 1 : 128 + 1)) })
  })
}
