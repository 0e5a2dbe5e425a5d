/**
 * Each local machine on a boot clock of its own, through a Linux time namespace
 * (`unshare --time --boottime OFFSET`, Linux 5.6+, root): the way lxcfs virtualises
 * /proc/uptime for each LXD container, so a charm that derives its machine's boot time
 * from /proc/uptime sees it move on `juju-reboot` and stay put when only the agent
 * crashed. The decision is providers/machine-boot-clock.ts's; this reads the host, keeps
 * the machine's boot record in its data directory (`boot-clock`) and wraps the agent's
 * command. Only CLOCK_BOOTTIME is offset: CLOCK_MONOTONIC, which Node's timers use, is
 * the host's. Hooks and workloads inherit the namespace from the agent.
 *
 * Where a namespace cannot be made (not root, an old kernel or util-linux), or where the
 * host's init restarts the agent with a fixed command line (systemd units), the machine
 * keeps this host's clock, as before, and its agent says why in one line of its log
 * (`hostClockEnvName`). A machine added over ssh is a real host: its uptime is its own.
 */
import { execFileSync } from 'node:child_process'
import { accessSync, constants, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from '../runtime/logger.ts'
import type { LocalCommandLine, LocalMachineClock } from '../providers/local-provider.ts'
import { decideMachineBoot, formatMachineBootRecord, parseMachineBootRecord, type HostBootReading, type MachineBootRecord } from '../providers/machine-boot-clock.ts'
import { machineBootId } from './machine-boot.ts'

/** The setting that tells a machine agent it runs on the host's boot clock, and why. */
export const hostClockEnvName = 'CANTRIP_MACHINE_HOST_CLOCK'
/** The machine's boot record, in its data directory. */
export const bootClockFileName = 'boot-clock'
const unshareCommand = 'unshare'
/** A record is one short line; anything longer is not one. */
const recordBytesMax = 4096

let unavailableCache: { why: string | undefined } | undefined

/**
 * Why this host cannot give machines boot clocks of their own, or undefined when it can:
 * tried once per process with a namespace that offsets nothing.
 */
export function timeNamespaceUnavailable (): string | undefined {
  unavailableCache ??= { why: probeTimeNamespace() }
  return unavailableCache.why
}

function probeTimeNamespace (): string | undefined {
  if (process.platform !== 'linux') return `time namespaces are Linux only (this is ${process.platform})`
  const uid = process.getuid?.()
  if (uid !== 0) return `making a time namespace needs root (running as uid ${uid ?? 'unknown'})`
  try {
    execFileSync(unshareCommand, ['--time', '--boottime', '0', 'true'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 })
    return undefined
  } catch (error) {
    return `"${unshareCommand} --time" does not work here (${firstLine(error)})`
  }
}

function firstLine (error: unknown): string {
  const stderr = (error as { stderr?: Buffer } | undefined)?.stderr?.toString().trim()
  const text = stderr !== undefined && stderr !== '' ? stderr : error instanceof Error ? error.message : String(error)
  return text.split('\n')[0]!.slice(0, 200)
}

/**
 * The host's own CLOCK_BOOTTIME in ms: /proc/uptime, less the boottime offset this
 * process itself runs under (a controller inside a machine), since a namespace's offset
 * counts from the host's clock, not from its parent's.
 */
export function readHostUptimeMs (): number {
  const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(/\s+/)[0])
  if (!Number.isFinite(uptime) || uptime < 0) throw new Error(`boot clock: expected seconds in /proc/uptime, got ${JSON.stringify(uptime)}`)
  return Math.round(uptime * 1000) - ownBoottimeOffsetMs()
}

function ownBoottimeOffsetMs (): number {
  let text: string
  try {
    text = readFileSync('/proc/self/timens_offsets', 'utf8')
  } catch {
    return 0
  }
  const match = /^boottime\s+(-?\d+)\s+(\d+)\s*$/m.exec(text)
  return match === null ? 0 : Number(match[1]) * 1000 + Math.round(Number(match[2]) / 1e6)
}

export interface TimeNamespaceBootClockOptions {
  readonly logger: Logger
  /** The host's readings (tests pass fixed ones). */
  readonly readHost?: (dataDir: string) => HostBootReading
}

/** Machines on their own boot clocks: every start of an agent enters a namespace set from its boot record. */
export class TimeNamespaceBootClock implements LocalMachineClock {
  readonly #logger: Logger
  readonly #readHost: (dataDir: string) => HostBootReading

  constructor (options: TimeNamespaceBootClockOptions) {
    this.#logger = options.logger
    this.#readHost = options.readHost ?? (dataDir => ({ nowMs: Date.now(), hostUptimeMs: readHostUptimeMs(), bootId: machineBootId(dataDir) }))
  }

  wrap (dataDir: string, command: LocalCommandLine, restartedBy: 'provider' | 'init'): { file: string, args: string[], env: Record<string, string> } {
    if (restartedBy === 'init') {
      return hostClock(command, 'its service manager starts it again with a fixed command line, which no boot clock set at install could follow')
    }
    // A program that cannot run is left for the spawn to refuse, naming why (ENOENT, EACCES), rather than unshare.
    if (!runnable(command.file)) return { file: command.file, args: [...command.args], env: {} }
    const file = join(dataDir, bootClockFileName)
    const decision = decideMachineBoot(this.#readRecord(file), this.#readHost(dataDir))
    writeRecord(file, decision.record)
    this.#logger.log('debug', 'machine boot clock', { dataDir, kind: decision.kind, epochMs: decision.record.epochMs, boottimeOffsetSeconds: decision.boottimeOffsetSeconds })
    return {
      file: unshareCommand,
      args: ['--time', '--boottime', String(decision.boottimeOffsetSeconds), '--', command.file, ...command.args],
      env: {}
    }
  }

  #readRecord (file: string): MachineBootRecord | undefined {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      return undefined
    }
    const parsed = parseMachineBootRecord(text.length > recordBytesMax ? text.slice(0, recordBytesMax) : text)
    if ('error' in parsed) {
      this.#logger.log('warning', `machine boot clock: ${file}: ${parsed.error}; the machine boots anew`)
      return undefined
    }
    return parsed
  }
}

/** Machines on this host's boot clock, each agent told why. */
export class HostBootClock implements LocalMachineClock {
  readonly #why: string

  constructor (why: string) {
    this.#why = why
  }

  wrap (_dataDir: string, command: LocalCommandLine, _restartedBy: 'provider' | 'init'): { file: string, args: string[], env: Record<string, string> } {
    return hostClock(command, this.#why)
  }
}

function hostClock (command: LocalCommandLine, why: string): { file: string, args: string[], env: Record<string, string> } {
  return { file: command.file, args: [...command.args], env: { [hostClockEnvName]: why } }
}

/** A path that is an executable file; a bare name is the PATH's to find. */
function runnable (file: string): boolean {
  if (!file.includes('/')) return true
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Written whole and renamed, so a crash never leaves half a record. */
function writeRecord (file: string, record: MachineBootRecord): void {
  writeFileSync(`${file}.tmp`, formatMachineBootRecord(record), { mode: 0o600 })
  renameSync(`${file}.tmp`, file)
}

/** This host's choice: own boot clocks where time namespaces work, else the host's, saying why. */
export function localMachineClock (logger: Logger): LocalMachineClock {
  const why = timeNamespaceUnavailable()
  return why === undefined ? new TimeNamespaceBootClock({ logger }) : new HostBootClock(why)
}

/** The one line a machine agent logs when it runs on the host's boot clock (undefined when it has its own). */
export function hostClockNotice (machineId: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const why = env[hostClockEnvName]
  if (why === undefined || why === '') return undefined
  return `machine ${machineId}: /proc/uptime is this host's, not the machine's own, so it does not restart on juju-reboot: ${why}`
}
