/**
 * The `local` provider, the default one, needing nothing installed: each machine is a
 * detached `cantripd --bootstrap FILE` process on this host with its own directory under
 * `home`, the way a cloud instance is a VM with its own disk.
 *
 * An instance directory `<home>/machine-<tag>` (`machine-3`, `machine-0-lxd-1`) holds
 * `token` (the idempotency key), `bootstrap` (mode 0600, the spec's bytes and nothing
 * else: no credentials, as the local provider has none), `agent.pid` (pid and, on Linux,
 * the process start time, so a recycled pid is not mistaken for the agent), `agent.log`
 * (the agent's stdout and stderr) and `agent/` (the agent's data directory, where the
 * machine's boot record `boot-clock` is kept when it has a boot clock of its own). Everything
 * the provider knows is on disk, so a provider built later on the same home — a new
 * controller leader — adopts the instances of the previous one by their pid files.
 *
 * Agents are started detached (each leads its own process group): they outlive the
 * controller, as instances outlive a cloud API client. The watchdog (`start()`/`stop()`)
 * restarts an agent that died, with the same bootstrap file and data directory, backing
 * off per consecutive crash (limits.localProviderRestartDelayMs*). Run it only where the
 * provisioner runs (the controller-lease holder): two watchdogs on one home could both
 * restart the same dead agent.
 *
 * Written over the runtime contracts only (`ProcessRunner`, `FileSystem`, `Clock`,
 * `Logger`), so the simulator runs this very code with simulated processes and files
 * (test/sim-local-provider.test.ts); agent/create-local-provider.ts wires the real ones.
 */
import { isAdvertisableHost, listenMultiaddr, parseListen, type AgentNetwork } from '../runtime/agent-network.ts'
import { assert } from '../runtime/assert.ts'
import type { Clock } from '../runtime/clock.ts'
import { joinPath, type DirectoryEntry, type FileSystem } from '../runtime/file-system.ts'
import { isMachineId } from '../runtime/ids.ts'
import { limits } from '../runtime/limits.ts'
import type { Logger } from '../runtime/logger.ts'
import type { DetachedExit, ProcessIdentity, ProcessRunner } from '../runtime/process-runner.ts'
import { hashString32 } from '../runtime/random.ts'
import type { AgentService } from './agent-service-unit.ts'
import { ProviderError, type InstanceInfo, type InstanceSpec, type Provider, type StartProgress, type StartedInstance } from './provider-contract.ts'

/** How the agent process is run: `file` with `args(bootstrapFile, dataDir)` and exactly `env`. */
export interface LocalAgentCommand {
  readonly file: string
  readonly args: (bootstrapFile: string, dataDir: string) => string[]
  /** The agent's whole environment (default: empty). */
  readonly env?: Readonly<Record<string, string>>
  /**
   * Arguments that make the agent listen on `listen` (a multiaddr) and give out
   * `advertise` (absent: what it binds): an isolated machine's address, or the machine's
   * own `add-machine --listen/--advertise`, or the controllers' network.
   */
  readonly networkArgs?: (listen: string, advertise: string | undefined) => string[]
}

/**
 * A network namespace per machine (agent/netns-machine-network.ts): the machine's agent
 * runs inside it with an address of its own. Without one, every machine is this host's
 * loopback, 127.0.0.1.
 */
export interface LocalMachineNetwork {
  /** Makes the machine's namespace; answers its name and the machine's address. */
  attach (machineId: string): Promise<{ namespace: string, address: string }>
  /** Makes the namespace again with the same address if it is gone (a host reboot drops them all). */
  restore (namespace: string, address: string): Promise<void>
  /** Removes a namespace attach made (and what joined it to the host). */
  detach (namespace: string): Promise<void>
  /** The command that runs `command` inside the namespace, as the same process. */
  wrap (namespace: string, command: { file: string, args: readonly string[] }): { file: string, args: string[] }
}

/** A command and its arguments, as a machine's agent is run. */
export interface LocalCommandLine { readonly file: string, readonly args: readonly string[] }

/**
 * A machine's own boot clock (providers/machine-boot-clock.ts, entered by
 * agent/time-namespace-boot-clock.ts): the agent, and with it the units' hooks and
 * workloads, read /proc/uptime from the machine's boot, not this host's, as lxcfs gives an
 * LXD container. Without one, a machine's uptime is this host's.
 */
export interface LocalMachineClock {
  /**
   * The command that runs `command` on the machine's boot clock, as the same process, and
   * the settings its agent gets with it; decided afresh at this start from what `dataDir`
   * keeps. `restartedBy: 'init'`: the host's service manager runs the same command line
   * again on its own, so nothing decided now could follow the machine's next boot.
   */
  wrap (dataDir: string, command: LocalCommandLine, restartedBy: 'provider' | 'init'): { file: string, args: string[], env: Record<string, string> }
}

export interface LocalProviderOptions {
  /** Where instance directories live, e.g. `<controller data dir>/machines`; absolute. */
  readonly home: string
  readonly logger: Logger
  readonly command: LocalAgentCommand
  readonly processes: ProcessRunner
  readonly files: FileSystem
  /** Start checks, stop graces and the restart back-off. */
  readonly clock: Clock
  /**
   * The watchdog's timer (default `clock`). The real controller passes a clock whose
   * timers do not keep the process alive, so a finished controller is not held up by it.
   */
  readonly watchdogClock?: Clock
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
  /** Isolated machines: each in a namespace of its own. */
  readonly network?: LocalMachineNetwork
  /** Each machine on a boot clock of its own (absent: this host's). */
  readonly bootClock?: LocalMachineClock
  /**
   * Where a machine's agent listens and what it advertises when the machine names
   * neither: the controllers' own network when it is not this host's loopback, so a
   * machine of a group other hosts reach is reachable too. Absent: loopback.
   */
  readonly defaultNetwork?: AgentNetwork
  /**
   * Agents as services of the host's init (systemd units where it runs the host:
   * agent/machine-agent-supervision.ts): the init restarts one that fails and starts it
   * at boot, so the watchdog leaves them be. Absent: detached processes the watchdog keeps.
   */
  readonly services?: LocalAgentServices
}

/** The host's service manager, as the local provider uses it (agent/systemd-unit.ts's units). */
export interface LocalAgentServices {
  /** Installs (written, enabled at boot) and starts the agent's service; its main pid, undefined when it is not running. */
  start (service: AgentService): number | undefined
  /** The service's main pid now (a restart gives it a new one); undefined when it is not running. */
  mainPid (name: string): number | undefined
  /** Stops, disables and removes the service; nothing when it is not installed. */
  remove (name: string): void
}

const providerName = 'local'
const instancePrefix = 'local:'
const dirPrefix = 'machine-'
const files = { token: 'token', bootstrap: 'bootstrap', pid: 'agent.pid', log: 'agent.log', data: 'agent', netns: 'netns', network: 'network.json' } as const
/** A machine without a namespace of its own is this host, on loopback. */
const loopbackAddress = '127.0.0.1'
const messageLineLengthMax = 300
const pollMs = 50
/** After SIGKILL, how long to wait for the kernel to take the process away. */
const killWaitMs = 2_000

/**
 * Where another model's machines live: `<machines dir>/m-<name>/machine-N`, so machine
 * "0" of two models never shares a directory (the default model's stay at the top). The
 * prefix is short because a unit's hook tool socket, deep below, must fit the 107 bytes
 * of a unix socket path; it never collides with `machine-N` or `manual-hosts.json`.
 */
export function modelMachinesHome (machinesHome: string, model: string): string {
  return joinPath(machinesHome, `m-${model}`)
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

/** What `agent.pid` holds: the pid and, where the system tells it, the process's start time. */
type PidRecord = ProcessIdentity

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
  readonly #processes: ProcessRunner
  readonly #files: FileSystem
  readonly #clock: Clock
  readonly #watchdogClock: Clock
  readonly #extraArgs: readonly string[]
  readonly #network: LocalMachineNetwork | undefined
  readonly #bootClock: LocalMachineClock | undefined
  readonly #defaultNetwork: AgentNetwork
  readonly #services: LocalAgentServices | undefined
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
  #watching = false
  #timer: unknown
  #tick: Promise<void> | undefined

  constructor (options: LocalProviderOptions) {
    assert(options.home.startsWith('/'), `local provider: home must be an absolute path, got ${JSON.stringify(options.home)}`)
    this.#home = options.home.length > 1 && options.home.endsWith('/') ? options.home.slice(0, -1) : options.home
    this.#logger = options.logger
    this.#command = options.command
    this.#processes = options.processes
    this.#files = options.files
    this.#clock = options.clock
    this.#watchdogClock = options.watchdogClock ?? options.clock
    this.#extraArgs = options.extraArgs ?? []
    this.#network = options.network
    this.#bootClock = options.bootClock
    this.#defaultNetwork = options.defaultNetwork ?? {}
    this.#services = options.services
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
    if (this.#watching) return
    this.#watching = true
    this.#armWatchdog()
  }

  /** Stops the watchdog (the agents keep running) and waits for a pass under way. */
  async stop (): Promise<void> {
    this.#watching = false
    if (this.#timer !== undefined) this.#watchdogClock.clearTimeout(this.#timer)
    this.#timer = undefined
    await this.#tick
  }

  /** Restarts the watchdog made of this machine's agent since this provider was built. */
  restartCount (machineId: string): number {
    return this.#restart.get(machineId)?.restarts ?? 0
  }

  /** The instance directory of a machine (tests and `cantrip` diagnostics). */
  instanceDir (machineId: string): string {
    return joinPath(this.#home, localInstanceDirName(machineId))
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
        if (this.#files.exists(dir)) {
          const token = this.#readText(joinPath(dir, files.token))
          const pid = this.#livePid(dir)
          if (token === spec.token) {
            if (pid !== undefined) return { instanceId, addresses: this.#addresses(dir) }
            // The same instance with its agent down (a crash, or a host reboot): bring it back.
            onProgress?.({ type: 'allocated', instanceId })
            onProgress?.({ type: 'deploying', message: 'restarting agent process' })
            await this.#launch(machineId, dir, true)
            this.#logger.log('info', 'restarted instance for a repeated start', { machineId, instanceId })
            return { instanceId, addresses: this.#addresses(dir) }
          }
          if (pid !== undefined) {
            throw new ProviderError(providerName, 'invalid', `cannot start instance "${instanceId}": machine "${machineId}" already has a running instance started with another token`)
          }
          // A dead instance made under another token (an abandoned attempt): it never
          // reached the model, so it is released and replaced.
          this.#logger.log('warning', 'replacing a dead instance made with another token', { machineId, instanceId })
          await this.#release(dir)
        }
        this.#create(spec, dir)
        try {
          await this.#attach(machineId, dir)
        } catch (err) {
          await this.#release(dir)
          throw new ProviderError(providerName, 'transient', `cannot start instance "${instanceId}": cannot give it a network namespace: ${String(err)}`, { cause: err })
        }
        onProgress?.({ type: 'allocated', instanceId })
        onProgress?.({ type: 'deploying', message: 'starting agent process' })
        try {
          await this.#launch(machineId, dir, true)
        } catch (err) {
          // Released, so a later start (same token or not) begins afresh; the log's last line is in the error.
          await this.#release(dir)
          throw err
        }
        this.#restart.set(machineId, { failures: 0, nextAt: 0, restarts: 0, launchedAt: this.#clock.now(), backingOffLogged: false })
        this.#logger.log('info', 'started instance', { machineId, instanceId, addresses: this.#addresses(dir) })
        return { instanceId, addresses: this.#addresses(dir) }
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
      if (!this.#files.exists(dir)) return
      this.#phase.set(machineId, 'stopping')
      try {
        const record = this.#livePidRecord(dir)
        // The service goes first, or its manager would start the agent again.
        this.#services?.remove(serviceName(dir, machineId))
        if (record !== undefined) await this.#kill(record)
        await this.#release(dir)
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
      const token = this.#readText(joinPath(dir, files.token))
      const phase = this.#phase.get(machineId)
      const base = { instanceId, machineId, token: token ?? '', addresses: this.#addresses(dir) }
      if (phase === 'stopping') { result.push({ ...base, status: 'stopping', message: 'stopping agent process' }); continue }
      if (phase === 'starting') { result.push({ ...base, status: 'deploying', message: 'starting agent process' }); continue }
      if (token === undefined) { result.push({ ...base, status: 'failed', message: 'incomplete instance directory (no token)' }); continue }
      const record = this.#livePidRecord(dir)
      if (record !== undefined) {
        result.push({ ...base, status: 'running', message: `agent pid ${record.pid}` })
        continue
      }
      const state = this.#restart.get(machineId)
      const now = this.#clock.now()
      const restarting = this.#watching
        ? `; restart ${state !== undefined && state.nextAt > now ? `in ${Math.ceil((state.nextAt - now) / 1000)} s` : 'due'}`
        : ''
      result.push({ ...base, status: 'failed', message: `agent process not running${restarting}` })
    }
    return result
  }

  // ---- instance directories ----

  /** With a machine network, the machine's namespace, recorded before anything runs in it. */
  async #attach (machineId: string, dir: string): Promise<void> {
    if (this.#network === undefined) return
    const { namespace, address } = await this.#network.attach(machineId)
    this.#files.writeFile(joinPath(dir, files.netns), `${namespace} ${address}\n`, 0o600)
  }

  #namespace (dir: string): { namespace: string, address: string } | undefined {
    const match = /^(\S+) (\S+)\s*$/.exec(this.#readText(joinPath(dir, files.netns)) ?? '')
    return match === null ? undefined : { namespace: match[1]!, address: match[2]! }
  }

  /** The machine's own network (`add-machine --listen/--advertise`), as kept in its directory. */
  #ownNetwork (dir: string): AgentNetwork {
    const text = this.#readText(joinPath(dir, files.network))
    if (text === undefined) return {}
    const value = JSON.parse(text) as AgentNetwork
    return { ...(typeof value.listen === 'string' ? { listen: value.listen } : {}), ...(typeof value.advertise === 'string' ? { advertise: value.advertise } : {}) }
  }

  /** The address the machine is reached at: what it advertises, else what it binds when others can dial that, else loopback. */
  #addresses (dir: string): string[] {
    const own = this.#ownNetwork(dir)
    const listenHost = own.listen === undefined ? undefined : parseListen(own.listen)?.host
    const bound = listenHost !== undefined && isAdvertisableHost(listenHost) ? listenHost : undefined
    return [own.advertise ?? this.#namespace(dir)?.address ?? bound ?? this.#defaultNetwork.advertise ?? loopbackAddress]
  }

  /** The agent's network arguments: an isolated machine binds its namespace's address; else its own settings over the default. */
  #networkArgs (dir: string, isolated: { address: string } | undefined): string[] {
    const own = this.#ownNetwork(dir)
    const networkArgs = this.#command.networkArgs
    if (networkArgs === undefined) return []
    if (isolated !== undefined) return networkArgs(listenMultiaddr({ host: isolated.address }), own.advertise)
    const listen = own.listen ?? (own.advertise === undefined ? this.#defaultNetwork.listen : undefined)
    const advertise = own.advertise ?? (own.listen === undefined ? this.#defaultNetwork.advertise : undefined)
    if (listen === undefined && advertise === undefined) return []
    const parsed = listen === undefined ? undefined : parseListen(listen)
    return networkArgs(parsed === undefined ? listenMultiaddr({ host: '0.0.0.0' }) : listenMultiaddr(parsed), advertise)
  }

  /** Removes the instance directory, and its namespace first (the record of it is in the directory). */
  async #release (dir: string): Promise<void> {
    const namespace = this.#namespace(dir)?.namespace
    if (namespace !== undefined && this.#network !== undefined) await this.#network.detach(namespace)
    this.#files.remove(dir)
  }

  #create (spec: InstanceSpec, dir: string): void {
    try {
      this.#files.makeDirectory(this.#home, { mode: 0o700, recursive: true })
      this.#files.makeDirectory(dir, { mode: 0o700 })
    } catch (err) {
      // Nothing was made, so nothing is removed: what stands in the way is the operator's.
      throw new ProviderError(providerName, blockedPathCodes.has(errorCode(err)) ? 'invalid' : 'transient',
        `cannot create instance directory "${dir}": ${String(err)}`, { cause: err })
    }
    try {
      this.#files.writeFile(joinPath(dir, files.bootstrap), spec.bootstrap, 0o600)
      this.#files.writeFile(joinPath(dir, files.token), spec.token, 0o600)
      if (spec.network !== undefined) this.#files.writeFile(joinPath(dir, files.network), JSON.stringify(spec.network) + '\n', 0o600)
      this.#files.makeDirectory(joinPath(dir, files.data), { mode: 0o700 })
    } catch (err) {
      this.#files.remove(dir)
      throw new ProviderError(providerName, 'transient', `cannot create instance directory "${dir}": ${String(err)}`, { cause: err })
    }
  }

  #scan (): Array<{ machineId: string, dir: string }> {
    let entries: DirectoryEntry[] | undefined
    try {
      entries = this.#files.list(this.#home)
    } catch (err) {
      throw new ProviderError(providerName, 'transient', `cannot list "${this.#home}": ${String(err)}`, { cause: err })
    }
    const found: Array<{ machineId: string, dir: string }> = []
    for (const entry of entries ?? []) {
      const machineId = entry.kind === 'directory' ? machineIdOfDirName(entry.name) : undefined
      if (machineId !== undefined) found.push({ machineId, dir: joinPath(this.#home, entry.name) })
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
    const record = this.#readPidRecord(joinPath(dir, files.pid))
    if (this.#services !== undefined) return this.#servicePidRecord(dir, record)
    if (record !== undefined) return this.#isAlive(record) ? record : undefined
    if (this.#readText(joinPath(dir, files.token)) === undefined) return undefined
    const orphan = this.#processes.findByArgument(dir + '/')[0]
    if (orphan === undefined) return undefined
    const found = this.#writePidRecord(joinPath(dir, files.pid), orphan)
    this.#logger.log('warning', 'found an agent without a pid file', { dir, pid: orphan })
    return found
  }

  /** A service's agent is whatever its manager runs now: the pid file follows the manager's restarts. */
  #servicePidRecord (dir: string, record: PidRecord | undefined): PidRecord | undefined {
    const machineId = machineIdOfDirName(dir.slice(dir.lastIndexOf('/') + 1))
    const pid = machineId === undefined ? undefined : this.#services!.mainPid(serviceName(dir, machineId))
    if (pid === undefined) return undefined
    if (record !== undefined && record.pid === pid && this.#isAlive(record)) return record
    return this.#writePidRecord(joinPath(dir, files.pid), pid)
  }

  #livePid (dir: string): number | undefined {
    return this.#livePidRecord(dir)?.pid
  }

  #readText (file: string): string | undefined {
    try {
      const bytes = this.#files.readFile(file)
      return bytes === undefined ? undefined : new TextDecoder().decode(bytes)
    } catch {
      return undefined
    }
  }

  #readPidRecord (file: string): PidRecord | undefined {
    const text = this.#readText(file)
    const match = text === undefined ? null : /^(\d+)(?: (\d+))?\s*$/.exec(text)
    if (match === null) return undefined
    const pid = Number(match[1])
    if (!Number.isSafeInteger(pid) || pid <= 1) return undefined
    return { pid, ...optional(match[2]) }
  }

  /** Records the pid with its start time as the system tells it now. */
  #writePidRecord (file: string, pid: number): PidRecord {
    const startTime = this.#processes.identify(pid)?.startTime
    this.#files.writeFile(file, startTime === undefined ? `${pid}\n` : `${pid} ${startTime}\n`, 0o600)
    return { pid, ...optional(startTime) }
  }

  /** Live, and the same process as recorded: a pid reused by another process does not count. */
  #isAlive (record: PidRecord): boolean {
    const now = this.#processes.identify(record.pid)
    return now !== undefined && (record.startTime === undefined || record.startTime === now.startTime)
  }

  // ---- processes ----

  /** Starts the agent; with `check`, resolves only once it has stayed up for the start check. */
  async #launch (machineId: string, dir: string, check: boolean): Promise<number> {
    const instanceId = instancePrefix + localInstanceDirName(machineId)
    const bootstrapFile = joinPath(dir, files.bootstrap)
    const dataDir = joinPath(dir, files.data)
    const logFile = joinPath(dir, files.log)
    const isolated = this.#network === undefined ? undefined : this.#namespace(dir)
    if (isolated !== undefined) await this.#network!.restore(isolated.namespace, isolated.address)
    const plain = {
      file: this.#command.file,
      args: [...this.#command.args(bootstrapFile, dataDir), ...this.#networkArgs(dir, isolated), ...this.#extraArgs]
    }
    const networked = isolated === undefined ? plain : this.#network!.wrap(isolated.namespace, plain)
    // The boot clock goes outermost: the network namespace's `ip netns exec` runs inside it, and both exec, keeping the pid.
    const command = this.#bootClock?.wrap(dataDir, networked, this.#services === undefined ? 'provider' : 'init') ?? { ...networked, env: {} }
    if (this.#services !== undefined) return await this.#launchService(machineId, dir, command, check)
    const child = this.#processes.startDetached({
      command: command.file,
      args: command.args,
      env: { ...this.#command.env, ...command.env },
      cwd: dir,
      logFile
    })
    const exited = child.exit.then(exit => this.#describeExit(exit))
    const pid = child.pid
    if (pid === undefined) {
      const why = await exited
      throw new ProviderError(providerName, 'deployment-failed', `cannot start instance "${instanceId}": ${why}`)
    }
    this.#writePidRecord(joinPath(dir, files.pid), pid)
    if (!check) return pid
    let timer: unknown
    const why = await Promise.race([exited, new Promise<undefined>(resolve => { timer = this.#clock.setTimeout(() => { resolve(undefined) }, this.#startCheckMs) })])
    this.#clock.clearTimeout(timer)
    if (why !== undefined || this.#processes.identify(pid) === undefined) {
      throw new ProviderError(providerName, 'deployment-failed',
        `cannot start instance "${instanceId}": agent exited at once (${why ?? 'gone'}): ${this.#logTail(logFile)}`)
    }
    return pid
  }

  /** The agent as a service of the host's init: installed, enabled and started; checked as a detached one is. */
  async #launchService (machineId: string, dir: string, command: LocalCommandLine & { env: Readonly<Record<string, string>> }, check: boolean): Promise<number> {
    const instanceId = instancePrefix + localInstanceDirName(machineId)
    const logFile = joinPath(dir, files.log)
    const pid = this.#services!.start({
      name: serviceName(dir, machineId), description: `cantrip machine ${machineId} (${dir})`,
      command: command.file, args: [...command.args], cwd: dir, logFile, env: { ...this.#command.env, ...command.env }
    })
    if (pid === undefined) throw new ProviderError(providerName, 'deployment-failed', `cannot start instance "${instanceId}": its service did not start: ${this.#logTail(logFile)}`)
    this.#writePidRecord(joinPath(dir, files.pid), pid)
    if (!check) return pid
    await new Promise<void>(resolve => { this.#clock.setTimeout(resolve, this.#startCheckMs) })
    if (this.#processes.identify(pid) === undefined) {
      throw new ProviderError(providerName, 'deployment-failed', `cannot start instance "${instanceId}": agent exited at once: ${this.#logTail(logFile)}`)
    }
    return pid
  }

  #describeExit (exit: DetachedExit): string {
    switch (exit.kind) {
      case 'exited': return `exit code ${exit.exitCode}`
      case 'signalled': return `killed by ${exit.signal}`
      case 'spawn-failed': return `cannot run "${this.#command.file}": ${exit.reason}`
    }
  }

  /** SIGTERM to the agent's process group, SIGKILL after the grace, bounded waits. */
  async #kill (record: PidRecord): Promise<void> {
    this.#processes.signalGroup(record.pid, 'SIGTERM')
    if (!await this.#waitDead(record, this.#stopGraceMs)) {
      this.#logger.log('warning', 'agent ignored SIGTERM; killing', { pid: record.pid, graceMs: this.#stopGraceMs })
    }
    // Also reaches whatever the agent left in its group (hooks, workloads it started).
    this.#processes.signalGroup(record.pid, 'SIGKILL')
    if (!await this.#waitDead(record, killWaitMs)) throw new Error(`process ${record.pid} survived SIGKILL`)
  }

  async #waitDead (record: PidRecord, timeoutMs: number): Promise<boolean> {
    const deadline = this.#clock.now() + timeoutMs
    while (this.#isAlive(record)) {
      if (this.#clock.now() >= deadline) return false
      await new Promise<void>(resolve => { this.#clock.setTimeout(resolve, pollMs) })
    }
    return true
  }

  /** The last meaningful line of the agent's log (skipping stack frames and Node's version footer), bounded. */
  #logTail (file: string): string {
    let bytes: Uint8Array | undefined
    try {
      bytes = this.#files.readTail(file, limits.localProviderLogTailBytes)
    } catch {
      bytes = undefined
    }
    if (bytes === undefined) return '(no log)'
    const lines = new TextDecoder().decode(bytes).split('\n').map(line => line.trimEnd())
      .filter(line => line.trim() !== '' && !/^\s+at /.test(line) && !/^Node\.js v\d/.test(line))
    const line = lines.at(-1)?.trim() ?? '(no output)'
    return line.length > messageLineLengthMax ? `${line.slice(0, messageLineLengthMax)}…` : line
  }

  // ---- watchdog ----

  /** One pass per interval; a pass still under way when the next falls due skips it, as setInterval would. */
  #armWatchdog (): void {
    this.#timer = this.#watchdogClock.setTimeout(() => {
      this.#timer = undefined
      if (!this.#watching) return
      this.#armWatchdog()
      if (this.#tick !== undefined) return
      this.#tick = this.#watch().catch(err => {
        this.#logger.log('error', 'watchdog pass failed', { error: String(err) })
      }).finally(() => { this.#tick = undefined })
    }, this.#watchIntervalMs)
  }

  async #watch (): Promise<void> {
    // Services are the init's to restart (Restart=on-failure): two restarters would race.
    if (this.#services !== undefined) return
    const now = this.#clock.now()
    for (const { machineId, dir } of this.#scan()) {
      if (this.#phase.has(machineId) || this.#locks.has(machineId)) continue
      // No pid file yet: a start in flight elsewhere or one that crashed midway; a start with its token finishes it.
      if (this.#readPidRecord(joinPath(dir, files.pid)) === undefined) continue
      let state = this.#restart.get(machineId)
      if (state === undefined) {
        state = { failures: 0, nextAt: 0, restarts: 0, backingOffLogged: false }
        this.#restart.set(machineId, state)
      }
      if (this.#livePid(dir) !== undefined) {
        state.lastAliveAt = now
        continue
      }
      // An agent never seen alive since its launch ran for no time: it counts as a crash,
      // not as a healthy run (without this, one dying between two passes never backs off).
      const ran = state.launchedAt !== undefined ? (state.lastAliveAt ?? state.launchedAt) - state.launchedAt : undefined
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
      await this.#serial(machineId, async () => { await this.#restartDead(machineId, dir, s) })
    }
  }

  async #restartDead (machineId: string, dir: string, s: RestartState): Promise<void> {
    // Stopped or restarted by someone else while this pass waited.
    if (!this.#files.exists(dir) || this.#livePid(dir) !== undefined) return
    const delay = Math.min(this.#restartDelayMsMin * 2 ** Math.min(s.failures, 30), this.#restartDelayMsMax)
    assert(delay <= this.#restartDelayMsMax, `local provider: restart delay ${delay} ms above its maximum ${this.#restartDelayMsMax} ms`)
    s.failures++
    s.restarts++
    s.nextAt = this.#clock.now() + delay
    s.launchedAt = this.#clock.now()
    s.lastAliveAt = undefined
    s.backingOffLogged = false
    try {
      const pid = await this.#launch(machineId, dir, false)
      this.#logger.log('warning', 'agent process died; restarted', { machineId, pid, restarts: s.restarts, nextRestartDelayMs: delay })
    } catch (err) {
      this.#logger.log('error', 'agent process died; restart failed', { machineId, error: String(err), nextRestartDelayMs: delay })
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

/**
 * Errors making an instance directory that no retry fixes: a path that exists where
 * `exists` saw none (a symlink to a disk that is not mounted), a file where a directory
 * should be, or no permission. They wait for the operator, then `retry-provisioning`, as
 * Juju's provisioner leaves a machine in provisioning error until then
 * (apiserver/facades/client/machinemanager RetryProvisioning marks it transient again).
 */
const blockedPathCodes = new Set(['EEXIST', 'ENOTDIR', 'EACCES', 'EPERM', 'EROFS'])

function errorCode (err: unknown): string {
  const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined
  return typeof code === 'string' ? code : ''
}

function optional (startTime: string | undefined): { startTime?: string } {
  return startTime === undefined ? {} : { startTime }
}

/**
 * A machine's service name: Juju's `jujud-machine-N`, with a hash of its directory, since
 * several controllers and models on one host each have a machine 0.
 */
export function serviceName (dir: string, machineId: string): string {
  return `cantripd-machine-${machineId.replaceAll('/', '-')}-${hashString32(dir).toString(16).padStart(8, '0')}`
}
