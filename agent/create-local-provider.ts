/**
 * The local provider (providers/local-provider.ts) on the real host: child processes,
 * node:fs and the system clock, with the repository's own cantripd as the agent.
 */
import * as path from 'node:path'
import { LocalProvider, type LocalAgentCommand, type LocalProviderOptions } from '../providers/local-provider.ts'
import { ChildProcessRunner } from './child-process-runner.ts'
import { NodeFileSystem } from './node-file-system.ts'
import { cantripdStubProgram } from './package-root.ts'
import { SystemClock } from './system-clock.ts'
import { localMachineClock } from './time-namespace-boot-clock.ts'

/**
 * This installation's agent launcher (agent/cantripd-stub.ts, which runs the version the
 * machine switched to, or this installation's own cantripd), run with the node running
 * this controller, in this process's environment (a controller's CANTRIP_* settings
 * reach its machines).
 */
export function defaultLocalAgentCommand (): LocalAgentCommand {
  const cantripd = cantripdStubProgram()
  return {
    file: cantripd.file,
    args: (bootstrapFile, dataDir) => [...cantripd.args, '--bootstrap', bootstrapFile, '--data-dir', dataDir],
    // An isolated machine is reached at its own address; any machine at what it advertises.
    networkArgs: (listen, advertise) => ['--listen', listen, ...(advertise === undefined ? [] : ['--advertise', advertise])],
    // Read at each start, as a spawn that inherits the environment would.
    get env () { return definedOnly(process.env) }
  }
}

export type RealLocalProviderOptions = Omit<LocalProviderOptions, 'processes' | 'files' | 'clock' | 'watchdogClock' | 'command'> & {
  /** Defaults to `defaultLocalAgentCommand()`. */
  readonly command?: LocalAgentCommand
}

/** `home` may be relative (to this process's working directory). */
export function createLocalProvider (options: RealLocalProviderOptions): LocalProvider {
  return new LocalProvider({
    ...options,
    home: path.resolve(options.home),
    command: options.command ?? defaultLocalAgentCommand(),
    // Every start (first, the watchdog's, start-agent's) sets the machine's boot clock afresh.
    bootClock: options.bootClock ?? localMachineClock(options.logger),
    processes: new ChildProcessRunner(),
    files: new NodeFileSystem(),
    clock: new SystemClock(),
    // The controller's own work keeps it running; the watchdog must not keep a finished one alive.
    watchdogClock: new SystemClock({ unrefTimers: true })
  })
}

function definedOnly (env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) if (value !== undefined) result[name] = value
  return result
}
