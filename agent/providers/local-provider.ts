/**
 * The `local` provider, the default one, needing nothing installed: each machine is a
 * detached `cantripd --bootstrap FILE` process on this host with its own directory under
 * `home`, the way a cloud instance is a VM with its own disk.
 *
 * An instance directory `<home>/machine-<tag>` (`machine-3`, `machine-0-lxd-1`) holds
 * `token` (the idempotency key), `bootstrap` (mode 0600, the spec's bytes and nothing
 * else: no credentials, as the local provider has none), `agent.pid` (pid and, on Linux,
 * the process start time, so a recycled pid is not mistaken for the agent), `agent.log`
 * (the agent's stdout and stderr) and `agent/` (the agent's data directory). Everything
 * the provider knows is on disk, so a provider built later on the same home — a new
 * controller leader — adopts the instances of the previous one by their pid files.
 *
 * Agents are spawned detached (each leads its own process group) and unref'd: they
 * outlive the controller, as instances outlive a cloud API client. The watchdog
 * (`start()`/`stop()`) restarts an agent that died, with the same bootstrap file and data
 * directory, backing off per consecutive crash (limits.localProviderRestartDelayMs*).
 * Run it only where the provisioner runs (the controller-lease holder): two watchdogs on
 * one home could both restart the same dead agent.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { assert } from '../../runtime/assert.ts'
import { isMachineId } from '../../runtime/ids.ts'
import { limits } from '../../runtime/limits.ts'
import type { Logger } from '../../runtime/logger.ts'
import { ProviderError, type InstanceInfo, type InstanceSpec, type Provider, type StartProgress, type StartedInstance } from '../../runtime/provider.ts'

/** How the agent process is run: `file` with `args(bootstrapFile, dataDir)`. */
export interface LocalAgentCommand {
  readonly file: string
  readonly args: (bootstrapFile: string, dataDir: string) => string[]
}

export interface LocalProviderOptions {
  /** Where instance directories live, e.g. `<controller data dir>/machines`. */
  readonly home: string
  readonly logger: Logger
  /** Defaults to `node --import tsx <repo>/agent/cantripd.ts --bootstrap FILE --data-dir DIR`. */
  readonly command?: LocalAgentCommand
  readonly watchIntervalMs?: number
  /** First restart delay of a crashed agent; doubles per consecutive crash up to `restartDelayMsMax`. */
  readonly restartDelayMs?: number
  readonly restartDelayMsMax?: number
  /** An agent that ran this long before dying counts as healthy: its back-off starts again. */
  readonly healthyAfterMs?: number
  /** How long a new agent must stay alive before its start resolves. */
  readonly startCheckMs?: number
  /** Grace between SIGTERM and SIGKILL when stopping. */
  readonly stopGraceMs?: number
  /** Arguments appended to every agent's command line (a controller run with `--inspect` passes `--inspect 0` on). */
  readonly extraArgs?: readonly string[]
}

const providerName = 'local'
const instancePrefix = 'local:'
const dirPrefix = 'machine-'
const files = { token: 'token', bootstrap: 'bootstrap', pid: 'agent.pid', log: 'agent.log', data: 'agent' } as const
const messageLineLengthMax = 300
const pollMs = 50
/** After SIGKILL, how long to wait for the kernel to take the process away. */
const killWaitMs = 2_000

/** The repository's own cantripd, run through tsx with the node running this controller. */
export function defaultLocalAgentCommand (): LocalAgentCommand {
  const repo = fileURLToPath(new URL('../../', import.meta.url))
  let tsx = 'tsx'
  // An absolute loader URL keeps the agent independent of its working directory.
  try { tsx = import.meta.resolve('tsx') } catch { /* resolved against the cwd (the instance dir) instead */ }
  const cantripd = path.join(repo, 'agent', 'cantripd.ts')
  return { file: process.execPath, args: (bootstrapFile, dataDir) => ['--import', tsx, cantripd, '--bootstrap', bootstrapFile, '--data-dir', dataDir] }
}

/**
 * Where another model's machines live: `<machines dir>/m-<name>/machine-N`, so machine
 * "0" of two models never shares a directory (the default model's stay at the top). The
 * prefix is short because a unit's hook tool socket, deep below, must fit the 107 bytes
 * of a unix socket path; it never collides with `machine-N` or `manual-hosts.json`.
 */
export function modelMachinesHome (machinesHome: string, model: string): string {
  return path.join(machinesHome, `m-${model}`)
}

/** `3` → `machine-3`, `0/lxd/1` → `machine-0-lxd-1` (Juju's machine tags). */
export function localInstanceDirName (machineId: string): string {
  return dirPrefix + machineId.replaceAll('/', '-')
}

function machineIdOfDirName (name: string): string | undefined {
  if (!name.startsWith(dirPrefix)) return undefined
  const raw = name.slice(dirPrefix.length)
  const juju = raw.replaceAll('-', '/')
  if (isMachineId(juju)) return juju
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/.test(raw) ? raw : undefined
}

/**
 * Juju machine ids, and other plain names (test fixtures), whose directory name maps back
 * to the same id: `0-lxd-1` is refused, since its directory would be `0/lxd/1`'s.
 */
function isLocalMachineId (machineId: string): boolean {
  return (isMachineId(machineId) || /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/.test(machineId)) &&
    machineIdOfDirName(localInstanceDirName(machineId)) === machineId
}

interface PidRecord {
  readonly pid: number
  /** /proc start time (clock ticks since boot); absent off Linux. */
  readonly startTime?: string
}

interface RestartState {
  failures: number
  nextAt: number
  restarts: number
  launchedAt?: number | undefined
  lastAliveAt?: number | undefined
  backingOffLogged: boolean
}

export class LocalProvider implements Provider {
  readonly name = providerName
  readonly #home: string
  readonly #logger: Logger
  readonly #command: LocalAgentCommand
  readonly #extraArgs: readonly string[]
  readonly #watchIntervalMs: number
  readonly #restartDelayMsMin: number
  readonly #restartDelayMsMax: number
  readonly #healthyAfterMs: number
  readonly #startCheckMs: number
  readonly #stopGraceMs: number
  /** One operation per machine at a time: start, stop and a watchdog restart never interleave. */
  readonly #locks = new Map<string, Promise<void>>()
  readonly #phase = new Map<string, 'starting' | 'stopping'>()
  readonly #restart = new Map<string, RestartState>()
  #timer: NodeJS.Timeout | undefined
  #tick: Promise<void> | undefined

  constructor (options: LocalProviderOptions) {
    this.#home = path.resolve(options.home)
    this.#logger = options.logger
    this.#command = options.command ?? defaultLocalAgentCommand()
    this.#extraArgs = options.extraArgs ?? []
    this.#watchIntervalMs = options.watchIntervalMs ?? limits.localProviderWatchIntervalMs
    this.#restartDelayMsMin = options.restartDelayMs ?? limits.localProviderRestartDelayMsMin
    this.#restartDelayMsMax = options.restartDelayMsMax ?? limits.localProviderRestartDelayMsMax
    this.#healthyAfterMs = options.healthyAfterMs ?? limits.localProviderHealthyAfterMs
    this.#startCheckMs = options.startCheckMs ?? limits.localProviderStartCheckMs
    this.#stopGraceMs = options.stopGraceMs ?? limits.localProviderStopGraceMs
    assert(this.#watchIntervalMs > 0 && this.#restartDelayMsMin > 0 && this.#restartDelayMsMin <= this.#restartDelayMsMax,
      `local provider: bad timings (watch ${this.#watchIntervalMs} ms, restart delay ${this.#restartDelayMsMin}-${this.#restartDelayMsMax} ms)`)
    this.#adopt()
  }

  /** Starts the watchdog; idempotent. */
  start (): void {
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => {
      if (this.#tick !== undefined) return
      this.#tick = this.#watch().catch(err => {
        this.#logger.log('error', 'watchdog pass failed', { error: String(err) })
      }).finally(() => { this.#tick = undefined })
    }, this.#watchIntervalMs)
    // The controller's own work keeps it running; the watchdog must not keep a finished one alive.
    this.#timer.unref()
  }

  /** Stops the watchdog (the agents keep running) and waits for a pass under way. */
  async stop (): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    await this.#tick
  }

  /** Restarts the watchdog made of this machine's agent since this provider was built. */
  restartCount (machineId: string): number {
    return this.#restart.get(machineId)?.restarts ?? 0
  }

  /** The instance directory of a machine (tests and `cantrip` diagnostics). */
  instanceDir (machineId: string): string {
    return path.join(this.#home, localInstanceDirName(machineId))
  }

  async startInstance (spec: InstanceSpec, onProgress?: (progress: StartProgress) => void): Promise<StartedInstance> {
    if (!isLocalMachineId(spec.machineId)) throw new ProviderError(providerName, 'invalid', `machine id "${spec.machineId}" cannot name a local instance`)
    if (typeof spec.token !== 'string' || spec.token === '') throw new ProviderError(providerName, 'invalid', `machine "${spec.machineId}": empty start token`)
    const machineId = spec.machineId
    const instanceId = instancePrefix + localInstanceDirName(machineId)
    return await this.#serial(machineId, async () => {
      this.#phase.set(machineId, 'starting')
      try {
        const dir = this.instanceDir(machineId)
        if (fs.existsSync(dir)) {
          const token = readText(path.join(dir, files.token))
          const pid = this.#livePid(dir)
          if (token === spec.token) {
            if (pid !== undefined) return { instanceId, addresses: ['127.0.0.1'] }
            // The same instance with its agent down (a crash, or a host reboot): bring it back.
            onProgress?.({ type: 'allocated', instanceId })
            onProgress?.({ type: 'deploying', message: 'restarting agent process' })
            await this.#launch(machineId, dir, true)
            this.#logger.log('info', 'restarted instance for a repeated start', { machineId, instanceId })
            return { instanceId, addresses: ['127.0.0.1'] }
          }
          if (pid !== undefined) {
            throw new ProviderError(providerName, 'invalid', `cannot start instance "${instanceId}": machine "${machineId}" already has a running instance started with another token`)
          }
          // A dead instance made under another token (an abandoned attempt): it never
          // reached the model, so it is released and replaced.
          this.#logger.log('warning', 'replacing a dead instance made with another token', { machineId, instanceId })
          fs.rmSync(dir, { recursive: true, force: true })
        }
        this.#create(spec, dir)
        onProgress?.({ type: 'allocated', instanceId })
        onProgress?.({ type: 'deploying', message: 'starting agent process' })
        try {
          await this.#launch(machineId, dir, true)
        } catch (err) {
          // Released, so a later start (same token or not) begins afresh; the log's last line is in the error.
          fs.rmSync(dir, { recursive: true, force: true })
          throw err
        }
        this.#restart.set(machineId, { failures: 0, nextAt: 0, restarts: 0, launchedAt: Date.now(), backingOffLogged: false })
        this.#logger.log('info', 'started instance', { machineId, instanceId })
        return { instanceId, addresses: ['127.0.0.1'] }
      } finally {
        this.#phase.delete(machineId)
      }
    })
  }

  async stopInstances (instanceIds: readonly string[]): Promise<void> {
    const machineIds = new Set<string>()
    for (const instanceId of instanceIds) {
      const name = instanceId.startsWith(instancePrefix) ? instanceId.slice(instancePrefix.length) : undefined
      const machineId = name === undefined ? undefined : machineIdOfDirName(name)
      if (machineId !== undefined) machineIds.add(machineId)
    }
    // Concurrently: ten stuck agents take one grace period, not ten.
    await Promise.all([...machineIds].map(async machineId => await this.#serial(machineId, async () => {
      const dir = this.instanceDir(machineId)
      if (!fs.existsSync(dir)) return
      this.#phase.set(machineId, 'stopping')
      try {
        const record = this.#livePidRecord(dir)
        if (record !== undefined) await this.#kill(record)
        fs.rmSync(dir, { recursive: true, force: true })
        this.#restart.delete(machineId)
        this.#logger.log('info', 'stopped instance', { machineId, pid: record?.pid })
      } catch (err) {
        throw new ProviderError(providerName, 'transient', `cannot stop instance "${instancePrefix}${localInstanceDirName(machineId)}": ${String(err)}`, { cause: err })
      } finally {
        this.#phase.delete(machineId)
      }
    })))
  }

  async allInstances (): Promise<InstanceInfo[]> {
    const result: InstanceInfo[] = []
    for (const { machineId, dir } of this.#scan()) {
      const instanceId = instancePrefix + localInstanceDirName(machineId)
      const token = readText(path.join(dir, files.token))
      const phase = this.#phase.get(machineId)
      const base = { instanceId, machineId, token: token ?? '', addresses: ['127.0.0.1'] }
      if (phase === 'stopping') { result.push({ ...base, status: 'stopping', message: 'stopping agent process' }); continue }
      if (phase === 'starting') { result.push({ ...base, status: 'deploying', message: 'starting agent process' }); continue }
      if (token === undefined) { result.push({ ...base, status: 'failed', message: 'incomplete instance directory (no token)' }); continue }
      const record = this.#livePidRecord(dir)
      if (record !== undefined) {
        result.push({ ...base, status: 'running', message: `agent pid ${record.pid}` })
        continue
      }
      const state = this.#restart.get(machineId)
      const restarting = this.#timer !== undefined
        ? `; restart ${state !== undefined && state.nextAt > Date.now() ? `in ${Math.ceil((state.nextAt - Date.now()) / 1000)} s` : 'due'}`
        : ''
      result.push({ ...base, status: 'failed', message: `agent process not running${restarting}` })
    }
    return result
  }

  // ---- instance directories ----

  #create (spec: InstanceSpec, dir: string): void {
    try {
      fs.mkdirSync(this.#home, { recursive: true, mode: 0o700 })
      fs.mkdirSync(dir, { mode: 0o700 })
      fs.writeFileSync(path.join(dir, files.bootstrap), spec.bootstrap, { mode: 0o600 })
      fs.writeFileSync(path.join(dir, files.token), spec.token, { mode: 0o600 })
      fs.mkdirSync(path.join(dir, files.data), { mode: 0o700 })
    } catch (err) {
      fs.rmSync(dir, { recursive: true, force: true })
      throw new ProviderError(providerName, 'transient', `cannot create instance directory "${dir}": ${String(err)}`, { cause: err })
    }
  }

  #scan (): Array<{ machineId: string, dir: string }> {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(this.#home, { withFileTypes: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw new ProviderError(providerName, 'transient', `cannot list "${this.#home}": ${String(err)}`, { cause: err })
    }
    const found: Array<{ machineId: string, dir: string }> = []
    for (const entry of entries) {
      const machineId = entry.isDirectory() ? machineIdOfDirName(entry.name) : undefined
      if (machineId !== undefined) found.push({ machineId, dir: path.join(this.#home, entry.name) })
    }
    return found
  }

  #adopt (): void {
    for (const { machineId, dir } of this.#scan()) {
      const record = this.#livePidRecord(dir)
      this.#restart.set(machineId, { failures: 0, nextAt: 0, restarts: 0, backingOffLogged: false })
      this.#logger.log('info', 'adopted instance', { machineId, pid: record?.pid, running: record !== undefined })
    }
  }

  /** The live agent's pid record, or undefined. With no pid file, looks for an agent spawned just before a crash. */
  #livePidRecord (dir: string): PidRecord | undefined {
    const record = readPidRecord(path.join(dir, files.pid))
    if (record !== undefined) return isAlive(record) ? record : undefined
    if (readText(path.join(dir, files.token)) === undefined) return undefined
    const orphan = findProcessUsing(dir)
    if (orphan === undefined) return undefined
    writePidRecord(path.join(dir, files.pid), orphan)
    this.#logger.log('warning', 'found an agent without a pid file', { dir, pid: orphan })
    return { pid: orphan, ...optional(processStartTime(orphan)) }
  }

  #livePid (dir: string): number | undefined {
    return this.#livePidRecord(dir)?.pid
  }

  // ---- processes ----

  /** Spawns the agent; with `check`, resolves only once it has stayed up for the start check. */
  async #launch (machineId: string, dir: string, check: boolean): Promise<number> {
    const instanceId = instancePrefix + localInstanceDirName(machineId)
    const bootstrapFile = path.join(dir, files.bootstrap)
    const dataDir = path.join(dir, files.data)
    const logFile = path.join(dir, files.log)
    let child: ChildProcess
    const logFd = fs.openSync(logFile, 'a', 0o600)
    try {
      child = spawn(this.#command.file, [...this.#command.args(bootstrapFile, dataDir), ...this.#extraArgs], {
        cwd: dir, detached: true, stdio: ['ignore', logFd, logFd]
      })
    } finally {
      fs.closeSync(logFd)
    }
    const exited = new Promise<string>(resolve => {
      child.once('error', err => { resolve(`cannot run "${this.#command.file}": ${err.message}`) })
      child.once('exit', (code, signal) => { resolve(signal !== null ? `killed by ${signal}` : `exit code ${code ?? '?'}`) })
    })
    child.unref()
    const pid = child.pid
    if (pid === undefined) {
      const why = await exited
      throw new ProviderError(providerName, 'deployment-failed', `cannot start instance "${instanceId}": ${why}`)
    }
    writePidRecord(path.join(dir, files.pid), pid)
    if (!check) return pid
    let timer: NodeJS.Timeout | undefined
    const why = await Promise.race([exited, new Promise<undefined>(resolve => { timer = setTimeout(() => { resolve(undefined) }, this.#startCheckMs) })])
    clearTimeout(timer)
    if (why !== undefined || !isAlive({ pid })) {
      throw new ProviderError(providerName, 'deployment-failed',
        `cannot start instance "${instanceId}": agent exited at once (${why ?? 'gone'}): ${logTail(logFile)}`)
    }
    return pid
  }

  /** SIGTERM to the agent's process group, SIGKILL after the grace, bounded waits. */
  async #kill (record: PidRecord): Promise<void> {
    signalGroup(record.pid, 'SIGTERM')
    if (!await waitDead(record, this.#stopGraceMs)) {
      this.#logger.log('warning', 'agent ignored SIGTERM; killing', { pid: record.pid, graceMs: this.#stopGraceMs })
    }
    // Also reaches whatever the agent left in its group (hooks, workloads it started).
    signalGroup(record.pid, 'SIGKILL')
    if (!await waitDead(record, killWaitMs)) throw new Error(`process ${record.pid} survived SIGKILL`)
  }

  // ---- watchdog ----

  async #watch (): Promise<void> {
    const now = Date.now()
    for (const { machineId, dir } of this.#scan()) {
      if (this.#phase.has(machineId) || this.#locks.has(machineId)) continue
      // No pid file yet: a start in flight elsewhere or one that crashed midway; a start with its token finishes it.
      if (readPidRecord(path.join(dir, files.pid)) === undefined) continue
      let state = this.#restart.get(machineId)
      if (state === undefined) {
        state = { failures: 0, nextAt: 0, restarts: 0, backingOffLogged: false }
        this.#restart.set(machineId, state)
      }
      if (this.#livePid(dir) !== undefined) {
        state.lastAliveAt = now
        continue
      }
      const ran = state.launchedAt !== undefined && state.lastAliveAt !== undefined ? state.lastAliveAt - state.launchedAt : undefined
      if (ran === undefined || ran >= this.#healthyAfterMs) {
        if (state.failures > 0) this.#logger.log('debug', 'agent ran long enough; back-off reset', { machineId })
        state.failures = 0
        state.nextAt = Math.min(state.nextAt, now)
      }
      if (now < state.nextAt) {
        if (!state.backingOffLogged) this.#logger.log('info', 'agent process died; backing off', { machineId, restartInMs: state.nextAt - now })
        state.backingOffLogged = true
        continue
      }
      const s = state
      await this.#serial(machineId, async () => {
        // Stopped or restarted by someone else while this pass waited.
        if (!fs.existsSync(dir) || this.#livePid(dir) !== undefined) return
        const delay = Math.min(this.#restartDelayMsMin * 2 ** Math.min(s.failures, 30), this.#restartDelayMsMax)
        assert(delay <= this.#restartDelayMsMax, `local provider: restart delay ${delay} ms above its maximum ${this.#restartDelayMsMax} ms`)
        s.failures++
        s.restarts++
        s.nextAt = Date.now() + delay
        s.launchedAt = Date.now()
        s.lastAliveAt = undefined
        s.backingOffLogged = false
        try {
          const pid = await this.#launch(machineId, dir, false)
          this.#logger.log('warning', 'agent process died; restarted', { machineId, pid, restarts: s.restarts, nextRestartDelayMs: delay })
        } catch (err) {
          this.#logger.log('error', 'agent process died; restart failed', { machineId, error: String(err), nextRestartDelayMs: delay })
        }
      })
    }
  }

  async #serial<T> (machineId: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(machineId) ?? Promise.resolve()
    const run = previous.then(fn)
    const tail = run.then(() => {}, () => {})
    this.#locks.set(machineId, tail)
    try {
      return await run
    } finally {
      if (this.#locks.get(machineId) === tail) this.#locks.delete(machineId)
    }
  }
}

// ---- helpers (process identity is checked by pid and start time, as a pid can be reused) ----

function optional (startTime: string | undefined): { startTime?: string } {
  return startTime === undefined ? {} : { startTime }
}

function readText (file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

function readPidRecord (file: string): PidRecord | undefined {
  const text = readText(file)
  const match = text === undefined ? null : /^(\d+)(?: (\d+))?\s*$/.exec(text)
  if (match === null) return undefined
  const pid = Number(match[1])
  if (!Number.isSafeInteger(pid) || pid <= 1) return undefined
  return { pid, ...optional(match[2]) }
}

function writePidRecord (file: string, pid: number): void {
  const startTime = processStartTime(pid)
  fs.writeFileSync(file, startTime === undefined ? `${pid}\n` : `${pid} ${startTime}\n`, { mode: 0o600 })
}

/** `/proc/<pid>/stat` after the command name: state, then field 22 (start time) at index 19. */
function procStat (pid: number): { state: string, startTime: string } | undefined {
  const text = readText(`/proc/${pid}/stat`)
  if (text === undefined) return undefined
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const state = fields[0]
  const startTime = fields[19]
  return state === undefined || startTime === undefined ? undefined : { state, startTime }
}

function processStartTime (pid: number): string | undefined {
  return procStat(pid)?.startTime
}

export function isAlive (record: PidRecord): boolean {
  try {
    process.kill(record.pid, 0)
  } catch {
    // ESRCH: gone. EPERM: a process of another user, so not our agent.
    return false
  }
  const stat = procStat(record.pid)
  if (stat === undefined) return fs.existsSync('/proc/self/stat') ? false : true
  if (stat.state === 'Z' || stat.state === 'X') return false
  return record.startTime === undefined || record.startTime === stat.startTime
}

/** A process whose command line names a file under `dir` (Linux only; elsewhere none is found). */
function findProcessUsing (dir: string): number | undefined {
  let entries: string[]
  try {
    entries = fs.readdirSync('/proc')
  } catch {
    return undefined
  }
  const needle = dir + path.sep
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    const cmdline = readText(`/proc/${entry}/cmdline`)
    if (cmdline === undefined || !cmdline.includes(needle)) continue
    const pid = Number(entry)
    if (isAlive({ pid })) return pid
  }
  return undefined
}

function signalGroup (pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal)
  } catch {
    // Not a group leader after all (an adopted process from an older layout): the process alone.
    try { process.kill(pid, signal) } catch { /* already gone */ }
  }
}

async function waitDead (record: PidRecord, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (isAlive(record)) {
    if (Date.now() >= deadline) return false
    await new Promise(resolve => setTimeout(resolve, pollMs))
  }
  return true
}

/** The last meaningful line of the agent's log (skipping stack frames and Node's version footer), bounded. */
function logTail (file: string): string {
  let text = ''
  try {
    const fd = fs.openSync(file, 'r')
    try {
      const size = fs.fstatSync(fd).size
      const length = Math.min(size, limits.localProviderLogTailBytes)
      const buffer = Buffer.alloc(length)
      fs.readSync(fd, buffer, 0, length, size - length)
      text = buffer.toString('utf8')
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return '(no log)'
  }
  const lines = text.split('\n').map(line => line.trimEnd())
    .filter(line => line.trim() !== '' && !/^\s+at /.test(line) && !/^Node\.js v\d/.test(line))
  const line = lines.at(-1)?.trim() ?? '(no output)'
  return line.length > messageLineLengthMax ? `${line.slice(0, messageLineLengthMax)}…` : line
}
