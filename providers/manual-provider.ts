/**
 * The manual provider (Juju's `add-machine ssh:user@host`): the host already exists, so
 * "starting an instance" is provisioning the machine agent onto it over ssh, and stopping
 * one stops and removes that agent; the host itself stays.
 *
 * On the host everything lives under `installRoot` (default `~/.cantrip`):
 *
 *   code/<stamp>/          the agent code, installed once per host and version
 *   machine-<id>/token     the idempotency token of the start that owns this directory
 *   machine-<id>/bootstrap the bootstrap data (mode 0600: it holds the one-time secret)
 *   machine-<id>/pid       the agent's pid (it leads its own session and process group)
 *   machine-<id>/agent/    the agent's data dir; machine-<id>/agent.log its output
 *
 * The code is shipped as a tar stream over the same ssh connection: by default
 * (agent/create-manual-provider.ts) the controller's agent bundle, a few MB, which needs
 * neither npm, registry access nor a compiler on a host of the controller's platform,
 * and is started through its launcher (`dist/cantripd-stub.mjs`). `remoteNode` names the
 * host's node (>= 20.19).
 *
 * Credentials: the ssh private key stays on the controller (it is only an `-i` argument
 * to the local ssh) and bootstrap data carries none, so a host never holds anything that
 * reaches other hosts. Host keys go to a controller-owned known_hosts file, accepted on
 * first contact (`accept-new`) unless `strictHostKeyChecking: 'yes'`.
 *
 * Every ssh call is `ssh -o BatchMode=yes -o ConnectTimeout=…` spawned without a local
 * shell, with a bounded timeout; remote commands are one `sh -c` script whose arguments
 * are single-quoted, so no input is ever parsed as shell code. The login shell of the
 * remote user must be POSIX-like (sh, bash, dash, zsh).
 *
 * Written over the runtime contracts (`ProcessRunner` runs ssh and tar, `FileSystem`
 * holds the host list and stages the code archive, `Clock`), so the simulator can run it
 * against simulated hosts; agent/create-manual-provider.ts wires the real ones, the
 * default code source and its version stamp.
 */
import { listenMultiaddr, parseListen } from '../runtime/agent-network.ts'
import type { Clock } from '../runtime/clock.ts'
import { joinPath, type FileSystem } from '../runtime/file-system.ts'
import { limits } from '../runtime/limits.ts'
import type { ProcessInput, ProcessRunner } from '../runtime/process-runner.ts'
import { ProviderError, type InstanceInfo, type InstanceSpec, type Provider, type StartProgress, type StartedInstance } from './provider-contract.ts'
import { hashString32 } from '../runtime/random.ts'
import { agentRunScript, shellQuote } from './agent-run-script.ts'
import { systemdUnit } from './agent-service-unit.ts'
import { remoteScript } from './manual-remote-script.ts'

const providerName = 'manual'
/** Bytes of ssh's stdout and stderr kept per call: the remote script answers in a few lines. */
const stdoutBytesMax = 1_048_576
const stderrBytesMax = 65_536

/** What is copied to a host as the agent code. */
export type ManualSource =
  /** A directory shipped as `tar c`; `exclude` holds tar patterns (default: `.git`, `test`). */
  | { readonly kind: 'directory', readonly path: string, readonly exclude?: readonly string[] }
  /** A tar archive (gzip when it ends in .tgz or .tar.gz) unpacked on the host. */
  | { readonly kind: 'tarball', readonly path: string }

/** Absolute paths on the host, handed to `agentCommand`. */
export interface AgentPaths {
  readonly codeDir: string
  readonly machineDir: string
  readonly bootstrapFile: string
  readonly dataDir: string
  readonly remoteNode: string
  readonly machineId: string
  /** What the agent advertises to the others: `add-machine --advertise`, else the host as the controller reached it. */
  readonly address: string
  /** The agent's `--listen` multiaddr: `add-machine --listen`, else the provider's `listen`. */
  readonly listen: string
}

export interface ManualProviderOptions {
  readonly processes: ProcessRunner
  readonly files: FileSystem
  readonly clock: Clock
  /** Absolute paths of the local ssh and tar. */
  readonly sshCommand: string
  readonly tarCommand: string
  /** The environment ssh and tar run in (an ssh agent's socket, HOME for ~/.ssh). */
  readonly env: Readonly<Record<string, string>>
  /** Tells this controller's temporary files from another's beside the same state file (its pid). */
  readonly writerId: string
  /** Hosts this provider has provisioned (JSON), so `allInstances` survives a restart; absolute. */
  readonly stateFile: string
  /**
   * The controller's private key for ssh (`-i`); never copied anywhere. Default: ssh's own.
   * A start may name another for its host (`InstanceSpec.sshKeyFile`); it is kept with the
   * host, for the stops and lists that follow.
   */
  readonly sshKeyFile?: string
  /** Default port when a placement names none (default 22). */
  readonly sshPort?: number
  /** Controller-owned known_hosts (default: `known_hosts` beside `stateFile`). */
  readonly knownHostsFile?: string
  /** `accept-new` (default) records a new host's key on first contact; `yes` needs it known. */
  readonly strictHostKeyChecking?: 'accept-new' | 'yes'
  /** Directory on the host (default `~/.cantrip`). */
  readonly installRoot?: string
  /** The agent code. */
  readonly source: ManualSource
  /**
   * Names the code version on hosts: given, or computed on first use (a hash of the
   * source's names, sizes and times; agent/manual-source-stamp.ts).
   */
  readonly sourceVersion: string | (() => string)
  /** node on the host (default `node`). */
  readonly remoteNode?: string
  /** The agent's `--listen` (default `/ip4/0.0.0.0/tcp/0`: other hosts must reach it); a machine's own `add-machine --listen` wins. */
  readonly listen?: string
  /**
   * Settings the agent runs with on the host, exported by its `run.sh` (the controller's
   * CANTRIP_* settings: its log level and the like), as a local machine inherits them.
   */
  readonly agentEnv?: Readonly<Record<string, string>>
  /** The agent's argv on the host, run in `codeDir` (default: the bundle's launcher, `node dist/cantripd-stub.mjs --bootstrap …`). */
  readonly agentCommand?: (paths: AgentPaths) => readonly string[]
  /** ssh's ConnectTimeout (default 5000). */
  readonly connectTimeoutMs?: number
  /** Bound on one ssh command other than the code install (default 30000). */
  readonly commandTimeoutMs?: number
  /** Bound on installing the code on one host (default 300000). */
  readonly installTimeoutMs?: number
  /** How long a started agent must stay up before the start counts (default 500). */
  readonly startCheckMs?: number
  /**
   * Where to keep ssh ControlMaster sockets, one master connection per host kept for a
   * minute after its last use, so each call costs a round trip rather than a handshake
   * (a handshake is ~0.4 s). Without it every call connects afresh. `close()` ends them.
   */
  readonly controlDir?: string
  /** Between SIGTERM and SIGKILL when an agent is stopped (default limits.processKillGraceMs). */
  readonly stopGraceMs?: number
  readonly logger?: { info: (message: string, fields?: Record<string, unknown>) => void }
}

/** A controller member to start on a host: `ManualProvider.startController`. */
export interface RemoteControllerSpec {
  /** `ssh:user@host[:port]`. */
  readonly placement: string
  /** Under the install root: `controller-<name>/cN`. */
  readonly dirName: string
  /**
   * The member's identity and the network key, and its argv given its directory and the
   * code's on the host; absent on a restart, which runs the kept command again.
   */
  readonly member?: {
    readonly agentKey: Uint8Array
    readonly networkKey: Uint8Array
    readonly command: (dir: string, codeDir: string) => readonly string[]
    /** Exported by its `run.sh`: the starter's CANTRIP_* settings. */
    readonly env?: Readonly<Record<string, string>>
  }
}

interface Host {
  readonly user: string
  readonly host: string
  readonly port: number
}

interface RemoteMachine {
  readonly machineId: string
  readonly token: string
  readonly alive: boolean
}

/** `ssh:user@host` or `ssh:user@host:port` (host a name, an IPv4 or a bracketed IPv6 address). */
const placementPattern = /^ssh:([A-Za-z_][A-Za-z0-9_.-]{0,31})@([A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?$/
const controllerDirPattern = /^controller-[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\/c[0-9]{1,4}$/
const machineIdPattern = /^[0-9A-Za-z][0-9A-Za-z/_-]{0,63}$/
const tokenPattern = /^[\x20-\x7e]{1,256}$/
const hostKeyPattern = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}@[^\s/@]+:[0-9]{1,5}$/

export { shellQuote }


export class ManualProvider implements Provider {
  readonly name = providerName
  readonly #options: ManualProviderOptions
  readonly #hosts = new Set<string>()
  /** Hosts reached with a key of their own (`add-machine --private-key`). */
  readonly #keys = new Map<string, string>()
  readonly #starts = new Map<string, Promise<StartedInstance>>()
  /** Hosts with a master connection being made, and hosts whose master failed (retried after a while). */
  readonly #masters = new Map<string, Promise<void>>()
  readonly #masterFailedAt = new Map<string, number>()
  /** Starts in flight per host: a stop that empties a host does not forget it while one runs. */
  readonly #startingOn = new Map<string, number>()
  #stamp: string | undefined
  /** destroyAll under way: stops do not forget their hosts. */
  #destroying = false

  constructor (options: ManualProviderOptions) {
    this.#options = options
    const state = readState(options.files, options.stateFile)
    for (const host of state.hosts) this.#hosts.add(host)
    for (const [host, key] of Object.entries(state.keys)) this.#keys.set(host, key)
    // ssh records a new host key only where its directory exists.
    options.files.makeDirectory(dirname(this.#knownHostsFile()), { recursive: true, mode: 0o700 })
  }

  async startInstance (spec: InstanceSpec, onProgress?: (progress: StartProgress) => void): Promise<StartedInstance> {
    // Two starts with one token in this process share one attempt.
    const running = this.#starts.get(spec.token)
    if (running !== undefined) return await running
    const hostKey = spec.placement ?? ''
    this.#startingOn.set(hostKey, (this.#startingOn.get(hostKey) ?? 0) + 1)
    const start = this.#start(spec, onProgress)
    this.#starts.set(spec.token, start)
    try {
      return await start
    } finally {
      this.#starts.delete(spec.token)
      const left = (this.#startingOn.get(hostKey) ?? 1) - 1
      if (left > 0) this.#startingOn.set(hostKey, left)
      else this.#startingOn.delete(hostKey)
    }
  }

  async #start (spec: InstanceSpec, onProgress?: (progress: StartProgress) => void): Promise<StartedInstance> {
    const host = this.#parsePlacement(spec.placement)
    if (!machineIdPattern.test(spec.machineId)) throw new ProviderError(providerName, 'invalid', `machine id ${JSON.stringify(spec.machineId)} is not a valid machine id`)
    if (!tokenPattern.test(spec.token)) throw new ProviderError(providerName, 'invalid', `the start token for machine ${spec.machineId} must be 1 to 256 printable characters`)
    const hostKey = hostString(host)
    const dirName = machineDirName(spec.machineId)
    const instanceId = `${providerName}:${hostKey}/${dirName}`
    const stamp = this.#sourceStamp()
    if (spec.sshKeyFile !== undefined && this.#keys.get(hostKey) !== spec.sshKeyFile) {
      if (!spec.sshKeyFile.startsWith('/')) throw new ProviderError(providerName, 'invalid', `expected the ssh key of ${hostKey} as an absolute path, got ${JSON.stringify(spec.sshKeyFile)}`)
      this.#keys.set(hostKey, spec.sshKeyFile)
      this.#writeState()
    }
    const probe = await this.#ssh(host, 'probe', [dirName, spec.token, stamp], { what: `reach ${hostKey}` })
    // Remembered once reachable and before anything is made there, so a crash mid-start
    // still lists the host, and a host never reached does not stall allInstances.
    this.#remember(hostKey)
    const facts = lines(probe.stdout)
    const root = facts.get('root')
    if (root === undefined || !root.startsWith('/')) throw new ProviderError(providerName, 'deployment-failed', `host ${hostKey} gave no install root: ${JSON.stringify(probe.stdout.slice(0, 200))}`)
    onProgress?.({ type: 'allocated', instanceId })
    const address = spec.network?.advertise ?? bareHost(host.host)
    const started = { instanceId, addresses: [address] }
    if (facts.get('machine') === 'same-running') return started
    if (facts.get('machine') === 'other-running') {
      throw new ProviderError(providerName, 'transient', `host ${hostKey} already runs an agent for machine ${spec.machineId} from another start; stop that instance first`)
    }

    if (facts.get('code') !== 'present') {
      onProgress?.({ type: 'deploying', message: `installing the agent code on ${hostKey}` })
      await this.#install(host, stamp)
    }
    onProgress?.({ type: 'deploying', message: `starting the agent on ${hostKey}` })
    const codeDir = `${root}/code/${stamp}`
    const machineDir = `${root}/${dirName}`
    const paths: AgentPaths = {
      codeDir,
      machineDir,
      bootstrapFile: `${machineDir}/bootstrap`,
      dataDir: `${machineDir}/agent`,
      remoteNode: this.#options.remoteNode ?? 'node',
      machineId: spec.machineId,
      address,
      listen: this.#listenOf(spec)
    }
    const argv = (this.#options.agentCommand ?? this.#defaultAgentCommand)(paths)
    if (argv.length === 0) throw new ProviderError(providerName, 'invalid', 'agentCommand gave an empty command')
    const checkTenths = Math.ceil((this.#options.startCheckMs ?? 500) / 100)
    const unit = manualMachineUnit(paths)
    const result = await this.#ssh(host, 'start', [dirName, spec.token, spec.machineId, stamp, String(checkTenths), agentRunScript(this.#options.agentEnv ?? {}, argv), unit.name, unit.text], {
      what: `start the agent of machine ${spec.machineId} on ${hostKey}`,
      stdin: { bytes: spec.bootstrap },
      allowExit: [3]
    })
    if (result.code === 3) {
      throw new ProviderError(providerName, 'deployment-failed', `machine ${spec.machineId} on ${hostKey}: ${result.stdout.trim().slice(0, 500)}`)
    }
    this.#options.logger?.info('agent started', { instanceId, result: result.stdout.trim() })
    return started
  }

  async stopInstances (instanceIds: readonly string[]): Promise<void> {
    const graceTenths = Math.ceil((this.#options.stopGraceMs ?? limits.processKillGraceMs) / 100)
    for (const instanceId of instanceIds) {
      const parsed = parseInstanceId(instanceId)
      if (parsed === undefined) continue
      const result = await this.#ssh(parsed.host, 'stop', [parsed.dirName, String(graceTenths)], {
        what: `stop ${instanceId}`,
        timeoutMs: (this.#options.commandTimeoutMs ?? 30_000) + graceTenths * 100
      })
      if (lines(result.stdout).get('remaining') === '0') this.#forget(hostString(parsed.host))
      this.#options.logger?.info('agent stopped', { instanceId })
    }
  }

  async allInstances (): Promise<InstanceInfo[]> {
    const all: InstanceInfo[] = []
    // One host at a time: the list is bounded by the hosts this controller provisioned.
    for (const hostKey of [...this.#hosts].sort()) {
      const host = parseHostKey(hostKey)
      if (host === undefined) continue
      const result = await this.#ssh(host, 'list', [], { what: `list the agents on ${hostKey}` })
      for (const line of result.stdout.split('\n')) {
        const [word, status, machineHex, tokenHex] = line.trim().split(' ')
        if (word !== 'machine' || machineHex === undefined || tokenHex === undefined) continue
        const machineId = fromHex(machineHex)
        if (!machineIdPattern.test(machineId)) continue
        all.push({
          instanceId: `${providerName}:${hostKey}/${machineDirName(machineId)}`,
          machineId,
          token: fromHex(tokenHex),
          status: status === 'running' ? 'running' : 'failed',
          addresses: [bareHost(host.host)],
          message: status === 'running' ? `agent running on ${hostKey}` : `agent not running on ${hostKey}`
        })
      }
    }
    return all
  }

  // The agent bundle's launcher (agent/cantripd-stub.ts): it runs the version the machine switched to, else the shipped one.
  readonly #defaultAgentCommand = (paths: AgentPaths): readonly string[] => [
    paths.remoteNode, 'dist/cantripd-stub.mjs',
    '--bootstrap', paths.bootstrapFile,
    '--data-dir', paths.dataDir,
    '--listen', paths.listen,
    // Listening on every interface, it is reached at the address the controller reached it at.
    '--advertise', paths.address
  ]

  #listenOf (spec: InstanceSpec): string {
    const own = spec.network?.listen === undefined ? undefined : parseListen(spec.network.listen)
    if (spec.network?.listen !== undefined && own === undefined) throw new ProviderError(providerName, 'invalid', `machine ${spec.machineId}: expected --listen as HOST[:PORT], got ${JSON.stringify(spec.network.listen)}`)
    return own === undefined ? this.#options.listen ?? '/ip4/0.0.0.0/tcp/0' : listenMultiaddr(own)
  }

  /**
   * `cantrip start-agent N` for a machine added over ssh (Juju's `juju ssh N sudo
   * systemctl start jujud-machine-N`): its agent started again on its host from the
   * `run.sh` kept there, with its bootstrap file and data; one that runs is left alone.
   * Answers the agent's pid and whether it ran already.
   */
  async restartMachine (placement: string, machineId: string, sshKeyFile?: string): Promise<{ pid: number, already: boolean }> {
    const host = this.#parsePlacement(placement)
    const hostKey = hostString(host)
    if (!machineIdPattern.test(machineId)) throw new ProviderError(providerName, 'invalid', `machine id ${JSON.stringify(machineId)} is not a valid machine id`)
    if (sshKeyFile !== undefined) {
      if (!sshKeyFile.startsWith('/')) throw new ProviderError(providerName, 'invalid', `expected the ssh key of ${hostKey} as an absolute path, got ${JSON.stringify(sshKeyFile)}`)
      this.#keys.set(hostKey, sshKeyFile)
    }
    const checkTenths = Math.ceil((this.#options.startCheckMs ?? 500) / 100)
    const result = await this.#ssh(host, 'restart', [machineDirName(machineId), String(checkTenths)], { what: `start the agent of machine ${machineId} on ${hostKey}`, allowExit: [3, 4] })
    if (result.code === 4) throw new ProviderError(providerName, 'invalid', `machine ${machineId} has no agent on ${hostKey} to start: ${result.stdout.trim().slice(0, 300)}`)
    const pid = Number(/^started (\d+)/m.exec(result.stdout)?.[1])
    if (result.code === 3 || !Number.isSafeInteger(pid)) throw new ProviderError(providerName, 'deployment-failed', `machine ${machineId} on ${hostKey}: ${result.stdout.trim().slice(0, 500)}`)
    return { pid, already: / already$/m.test(result.stdout) }
  }

  #parsePlacement (placement: string | undefined): Host {
    if (placement === undefined || placement === '') throw new ProviderError(providerName, 'invalid', 'expected a placement "ssh:user@host[:port]", got none')
    const match = placementPattern.exec(placement)
    if (match === null) throw new ProviderError(providerName, 'invalid', `expected a placement "ssh:user@host[:port]", got ${JSON.stringify(placement)}`)
    const port = match[3] === undefined ? (this.#options.sshPort ?? 22) : Number(match[3])
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ProviderError(providerName, 'invalid', `expected an ssh port from 1 to 65535 in ${JSON.stringify(placement)}`)
    return { user: match[1]!, host: match[2]!, port }
  }

  #sourceStamp (): string {
    const version = this.#options.sourceVersion
    if (typeof version === 'string') {
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(version)) throw new ProviderError(providerName, 'invalid', `sourceVersion ${JSON.stringify(version)} must be 1 to 64 of [A-Za-z0-9._-]`)
      return version
    }
    // Computed once per provider: the controller ships the code it was started with.
    if (this.#stamp === undefined) {
      try {
        this.#stamp = version()
      } catch (error) {
        if (error instanceof ProviderError) throw error
        throw new ProviderError(providerName, 'invalid', `cannot read the agent code in "${this.#options.source.path}": ${error instanceof Error ? error.message : String(error)}`, { cause: error })
      }
    }
    return this.#stamp
  }

  /**
   * A directory is packed by tar into an archive beside the state file first, then that
   * file is ssh's stdin: a packing error is told apart from a transfer error, and no
   * byte of the archive passes through this process's memory.
   */
  async #install (host: Host, stamp: string): Promise<void> {
    const source = this.#options.source
    const gzip = source.kind === 'tarball' && /\.(tgz|tar\.gz)$/.test(source.path)
    let archive = source.path
    if (source.kind === 'directory') {
      archive = joinPath(dirname(this.#options.stateFile), `.code-${stamp}.${this.#options.writerId}.tar`)
      await this.#pack(source, archive)
    } else if (!this.#options.files.exists(source.path)) {
      throw new ProviderError(providerName, 'deployment-failed', `cannot read the agent code archive ${source.path}: no such file`)
    }
    try {
      await this.#ssh(host, 'install', [stamp, gzip ? 'z' : ''], {
        what: `install the agent code on ${hostString(host)}`,
        stdin: { file: archive },
        timeoutMs: this.#options.installTimeoutMs ?? 300_000
      })
    } finally {
      if (archive !== source.path) this.#options.files.remove(archive)
    }
  }

  async #pack (source: ManualSource & { kind: 'directory' }, archive: string): Promise<void> {
    this.#options.files.makeDirectory(dirname(archive), { recursive: true, mode: 0o700 })
    const errors: string[] = []
    const exit = await this.#options.processes.start({
      command: this.#options.tarCommand,
      args: ['-c', '-f', archive, '-C', source.path, ...(source.exclude ?? ['./.git', './test']).map(pattern => `--exclude=${pattern}`), '.'],
      env: this.#options.env,
      cwd: '/',
      timeoutMs: this.#options.installTimeoutMs ?? 300_000,
      outputBytesMax: stderrBytesMax,
      onOutput: (_stream, line) => { errors.push(line) }
    }).exit
    if (exit.kind === 'exited' && exit.exitCode === 0) return
    this.#options.files.remove(archive)
    const why = exit.kind === 'spawn-failed' ? exit.reason : errors.filter(Boolean).pop() ?? (exit.kind === 'exited' ? `tar exited ${exit.exitCode}` : `tar ${exit.kind}`)
    throw new ProviderError(providerName, 'deployment-failed', `cannot pack the agent code in ${source.path}: ${why}`)
  }

  /**
   * `destroy-controller`: every agent on every host this provider knows is stopped, then
   * each host's agent code and install root go (once no machine is left there). Answers
   * how many agents were stopped.
   */
  async destroyAll (): Promise<number> {
    const instances = await this.allInstances()
    // Hosts (and their keys) are kept through the stops: the purge needs them after.
    this.#destroying = true
    try {
      await this.stopInstances(instances.map(instance => instance.instanceId))
      for (const hostKey of [...this.#hosts].sort()) {
        const host = parseHostKey(hostKey)
        if (host !== undefined) await this.#ssh(host, 'purge', [], { what: `remove the agent code on ${hostKey}` })
      }
    } finally {
      this.#destroying = false
    }
    this.#hosts.clear()
    this.#keys.clear()
    this.#writeState()
    return instances.length
  }

  /**
   * A controller member placed on a host (`cantrip enable-ha --to ssh:…`), as a machine
   * agent is: the agent code installed once, the member's files (its identity, the
   * network key, its command as `run.sh`) written under `ROOT/<dirName>` with mode 0600,
   * and the command started there in a session of its own. Without `member` (a restart,
   * `cantrip start-agent`) the member's kept `run.sh` runs again; a member that runs is
   * left alone. Answers the member's directory on the host, its pid and whether it ran already.
   */
  async startController (spec: RemoteControllerSpec): Promise<{ dir: string, pid: number, already: boolean }> {
    const host = this.#parsePlacement(spec.placement)
    const hostKey = hostString(host)
    if (!controllerDirPattern.test(spec.dirName)) throw new ProviderError(providerName, 'invalid', `expected a controller directory "controller-NAME/cN", got ${JSON.stringify(spec.dirName)}`)
    const stamp = this.#sourceStamp()
    const probe = lines((await this.#ssh(host, 'probe', [spec.dirName, '-', stamp], { what: `reach ${hostKey}` })).stdout)
    const root = probe.get('root')
    if (root === undefined || !root.startsWith('/')) throw new ProviderError(providerName, 'deployment-failed', `host ${hostKey} gave no install root`)
    if (probe.get('code') !== 'present') await this.#install(host, stamp)
    const dir = `${root}/${spec.dirName}`
    const member = spec.member
    const entries: Array<[string, Uint8Array]> = member === undefined
      ? []
      : [['agent.key', member.agentKey], ['swarm.key', member.networkKey], ['run.sh', new TextEncoder().encode(agentRunScript(member.env ?? {}, member.command(dir, `${root}/code/${stamp}`)))]]
    const files = entries.map(([name, bytes]) => `${name} ${base64(bytes)}\n`).join('')
    const checkTenths = Math.ceil((this.#options.startCheckMs ?? 500) / 100)
    const result = await this.#ssh(host, 'controller-start', [spec.dirName, stamp, String(checkTenths)], {
      what: `start controller ${spec.dirName} on ${hostKey}`, stdin: { bytes: new TextEncoder().encode(files) }, allowExit: [3]
    })
    const pid = Number(/^started (\d+)/m.exec(result.stdout)?.[1])
    if (result.code === 3 || !Number.isSafeInteger(pid)) throw new ProviderError(providerName, 'deployment-failed', `controller ${spec.dirName} on ${hostKey}: ${result.stdout.trim().slice(0, 500)}`)
    return { dir, pid, already: / already$/m.test(result.stdout) }
  }

  /**
   * Stops a controller member placed on a host and removes its directory. With `purge`
   * (destroy-controller) the machines that host's members started go too; answers the
   * host list of the manual provider kept there, if any (JSON), for the caller to clean up.
   */
  async stopController (placement: string, dirName: string, purge: boolean): Promise<string | undefined> {
    const host = this.#parsePlacement(placement)
    if (!controllerDirPattern.test(dirName)) throw new ProviderError(providerName, 'invalid', `expected a controller directory "controller-NAME/cN", got ${JSON.stringify(dirName)}`)
    const graceTenths = Math.ceil((this.#options.stopGraceMs ?? limits.processKillGraceMs) / 100)
    const result = await this.#ssh(host, 'controller-stop', [dirName, String(graceTenths), ...(purge ? ['purge'] : [])], {
      what: `stop controller ${dirName} on ${hostString(host)}`,
      timeoutMs: (this.#options.commandTimeoutMs ?? 30_000) + graceTenths * 100
    })
    const hosts = lines(result.stdout).get('manual-hosts')
    return hosts === undefined ? undefined : new TextDecoder().decode(fromBase64(hosts))
  }

  /** The hosts (and their keys) another controller's manual provider knew, added to this one's (destroy-controller's clean-up). */
  adoptHosts (stateJson: string): void {
    const state = JSON.parse(stateJson) as { hosts?: unknown, keys?: unknown }
    for (const host of Array.isArray(state.hosts) ? state.hosts : []) if (typeof host === 'string' && hostKeyPattern.test(host)) this.#hosts.add(host)
    for (const [host, key] of Object.entries(typeof state.keys === 'object' && state.keys !== null ? state.keys : {})) {
      if (hostKeyPattern.test(host) && typeof key === 'string' && key.startsWith('/') && !this.#keys.has(host)) this.#keys.set(host, key)
    }
  }

  /** Ends the ssh master connections this provider made (with `controlDir`). */
  async close (): Promise<void> {
    const dir = this.#options.controlDir
    if (dir === undefined) return
    this.#masters.clear()
    // Every socket in the directory, also those an earlier provider left there: `-O exit`
    // talks only to the socket, so the host named is a placeholder.
    const sockets = (this.#options.files.list(dir) ?? []).map(entry => entry.name).filter(name => /^[0-9a-f]{16}$/.test(name)).sort()
    for (const name of sockets) {
      await this.#runSsh(['-S', joinPath(dir, name), '-O', 'exit', 'cantrip-manual-host'], this.#connectTimeoutMs() + 1_000)
    }
  }

  #connectTimeoutMs (): number {
    return Math.max(1, Math.ceil((this.#options.connectTimeoutMs ?? 5_000) / 1000)) * 1000
  }

  /**
   * Makes the host's master connection if there is none. Its failure is ignored: the call
   * that follows connects directly (ssh does when the control socket is missing) and that
   * call's error is the one that explains.
   */
  async #master (host: Host): Promise<void> {
    const dir = this.#options.controlDir
    if (dir === undefined) return
    const hostKey = hostString(host)
    const path = controlPath(dir, hostKey, this.#keyFile(hostKey))
    const files = this.#options.files
    if (files.exists(path)) return
    const failedAt = this.#masterFailedAt.get(hostKey)
    if (failedAt !== undefined && this.#options.clock.now() - failedAt < 30_000) return
    const making = this.#masters.get(hostKey)
    if (making !== undefined && !files.exists(path)) {
      await making
      if (files.exists(path)) return
    }
    files.makeDirectory(dir, { recursive: true, mode: 0o700 })
    // `-f` backgrounds the master once authenticated, its stdio on /dev/null, so nothing waits on it.
    const attempt = this.#runSsh(['-M', '-N', '-f', '-S', path, '-o', 'ControlPersist=60', ...this.#sshArgs(host)], this.#connectTimeoutMs() + 2_000)
      .then(code => {
        if (code === 0) this.#masterFailedAt.delete(hostKey)
        else this.#masterFailedAt.set(hostKey, this.#options.clock.now())
      })
    this.#masters.set(hostKey, attempt)
    await attempt
  }

  #knownHostsFile (): string {
    return this.#options.knownHostsFile ?? joinPath(dirname(this.#options.stateFile), 'known_hosts')
  }

  /** The host's own key, else the provider's, else ssh's defaults (undefined). */
  #keyFile (hostKey: string): string | undefined {
    return this.#keys.get(hostKey) ?? this.#options.sshKeyFile
  }

  #sshArgs (host: Host): string[] {
    const o = this.#options
    const keyFile = this.#keyFile(hostString(host))
    const knownHosts = this.#knownHostsFile()
    return [
      '-o', 'BatchMode=yes',
      '-o', `ConnectTimeout=${this.#connectTimeoutMs() / 1000}`,
      '-o', `StrictHostKeyChecking=${o.strictHostKeyChecking ?? 'accept-new'}`,
      '-o', `UserKnownHostsFile=${knownHosts}`,
      '-o', 'GlobalKnownHostsFile=/dev/null',
      // Readable, so an operator can check or pin what was accepted.
      '-o', 'HashKnownHosts=no',
      '-o', 'ServerAliveInterval=5',
      '-o', 'ServerAliveCountMax=3',
      '-o', 'LogLevel=ERROR',
      ...(keyFile === undefined ? [] : ['-o', 'IdentitiesOnly=yes', '-i', keyFile]),
      '-p', String(host.port),
      '-l', host.user,
      '--', bareHost(host.host)
    ]
  }

  /**
   * Runs one action of the remote script. ssh's own failures (exit 255: unreachable,
   * refused, timed out) are `transient`; a refused key or a changed host key needs a
   * person (`invalid`); any other non-zero exit is a failed deployment.
   */
  async #ssh (host: Host, action: string, args: readonly string[], options: { what: string, stdin?: ProcessInput, timeoutMs?: number, allowExit?: readonly number[] }): Promise<{ code: number, stdout: string }> {
    const root = this.#options.installRoot ?? '~/.cantrip'
    const remote = ['sh', '-c', remoteScript, 'sh', root, action, ...args].map(shellQuote).join(' ')
    const timeoutMs = options.timeoutMs ?? this.#options.commandTimeoutMs ?? 30_000
    await this.#master(host)
    const control = this.#options.controlDir === undefined ? [] : ['-S', controlPath(this.#options.controlDir, hostString(host), this.#keyFile(hostString(host))), '-o', 'ControlMaster=no']
    let stdout = ''
    let stderr = ''
    const exit = await this.#options.processes.start({
      command: this.#options.sshCommand,
      args: [...control, ...this.#sshArgs(host), remote],
      env: this.#options.env,
      cwd: '/',
      timeoutMs,
      outputBytesMax: stdoutBytesMax + stderrBytesMax,
      onOutput: (stream, line) => {
        if (stream === 'stdout' && stdout.length < stdoutBytesMax) stdout += `${line}\n`
        if (stream === 'stderr' && stderr.length < stderrBytesMax) stderr += `${line}\n`
      },
      ...(options.stdin === undefined ? {} : { stdin: options.stdin })
    }).exit
    if (exit.kind === 'spawn-failed') throw new ProviderError(providerName, 'transient', `cannot ${options.what}: cannot run ssh: ${exit.reason}`)
    if (exit.kind === 'timed-out') throw new ProviderError(providerName, 'transient', `cannot ${options.what}: no answer in ${timeoutMs}ms`)
    const code = exit.kind === 'exited' ? exit.exitCode : -1
    // The last few lines: a tool's summary line alone ("Exiting with failure status") says little.
    const why = stderr.trim().split('\n').filter(Boolean).slice(-3).join('; ').slice(-400) || `exit ${code}`
    if (code === 0 || options.allowExit?.includes(code) === true) return { code, stdout }
    if (code === 255) {
      const needsPerson = /Permission denied|Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/.test(stderr)
      throw new ProviderError(providerName, needsPerson ? 'invalid' : 'transient', `cannot ${options.what}: ${why}`)
    }
    throw new ProviderError(providerName, 'deployment-failed', `cannot ${options.what}: ${why}`)
  }

  /** An ssh call whose output does not matter; resolves with its exit code (-1 when it did not exit by itself). */
  async #runSsh (args: readonly string[], timeoutMs: number): Promise<number> {
    const exit = await this.#options.processes.start({
      command: this.#options.sshCommand, args, env: this.#options.env, cwd: '/', timeoutMs, outputBytesMax: 0
    }).exit
    return exit.kind === 'exited' ? exit.exitCode : -1
  }

  #remember (hostKey: string): void {
    if (this.#hosts.has(hostKey)) return
    this.#hosts.add(hostKey)
    this.#writeState()
  }

  #forget (hostKey: string): void {
    const starting = [...this.#startingOn.keys()].some(placement => {
      const match = placementPattern.exec(placement)
      return match !== null && hostString({ user: match[1]!, host: match[2]!, port: match[3] === undefined ? (this.#options.sshPort ?? 22) : Number(match[3]) }) === hostKey
    })
    if (starting || this.#destroying || !this.#hosts.delete(hostKey)) return
    this.#keys.delete(hostKey)
    this.#writeState()
  }

  #writeState (): void {
    const { files, stateFile, writerId } = this.#options
    files.makeDirectory(dirname(stateFile), { recursive: true, mode: 0o700 })
    const temporary = `${stateFile}.${writerId}.new`
    const keys = Object.fromEntries([...this.#keys].filter(([host]) => this.#hosts.has(host)).sort(([a], [b]) => a < b ? -1 : 1))
    files.writeFile(temporary, JSON.stringify({ hosts: [...this.#hosts].sort(), ...(Object.keys(keys).length === 0 ? {} : { keys }) }, null, 2) + '\n', 0o600)
    files.rename(temporary, stateFile)
  }
}

/**
 * The systemd unit a machine's agent runs as where systemd runs its host (the remote
 * script decides: systemd as PID 1 and root): Juju's `jujud-machine-N`, its ExecStart the
 * kept run.sh, so the unit, `cantrip start-agent` and the first start run the same agent.
 */
export function manualMachineUnit (paths: Pick<AgentPaths, 'machineId' | 'machineDir' | 'codeDir'>): { name: string, text: string } {
  const name = `cantripd-machine-${paths.machineId.replaceAll('/', '-')}`
  const text = systemdUnit({
    name, description: `cantrip machine ${paths.machineId}`, command: '/bin/sh', args: [`${paths.machineDir}/run.sh`],
    cwd: paths.codeDir, logFile: `${paths.machineDir}/agent.log`, env: {}
  }, 'system')
  return { name, text }
}

/**
 * Hashed: a socket path must stay under ~100 bytes whatever the host is called. The key
 * file is part of it, so a provider with another key never rides an existing master.
 * Two FNV-1a hashes with different bases make the 64 bits of the name.
 */
function controlPath (dir: string, hostKey: string, keyFile: string | undefined): string {
  const text = `${hostKey}\0${keyFile ?? ''}`
  const hex = (value: number): string => value.toString(16).padStart(8, '0')
  return joinPath(dir, hex(hashString32(text)) + hex(hashString32(text, 0x01000193)))
}

/** The parent directory of an absolute path. */
function dirname (path: string): string {
  const slash = path.lastIndexOf('/')
  return slash <= 0 ? '/' : path.slice(0, slash)
}

/** Hex bytes (as the remote `od` prints them) back to UTF-8 text. */
function fromHex (hex: string): string {
  const bytes = new Uint8Array(Math.floor(hex.length / 2))
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return new TextDecoder().decode(bytes)
}

function machineDirName (machineId: string): string {
  return `machine-${machineId.replaceAll('/', '-')}`
}

function hostString (host: Host): string {
  return `${host.user}@${host.host}:${host.port}`
}

function bareHost (host: string): string {
  return host.startsWith('[') ? host.slice(1, -1) : host
}

function parseHostKey (hostKey: string): Host | undefined {
  if (!hostKeyPattern.test(hostKey)) return undefined
  const at = hostKey.indexOf('@')
  const colon = hostKey.lastIndexOf(':')
  const host = { user: hostKey.slice(0, at), host: hostKey.slice(at + 1, colon), port: Number(hostKey.slice(colon + 1)) }
  return placementPattern.test(`ssh:${hostKey}`) ? host : undefined
}

function parseInstanceId (instanceId: string): { host: Host, dirName: string } | undefined {
  const prefix = `${providerName}:`
  if (!instanceId.startsWith(prefix)) return undefined
  const slash = instanceId.indexOf('/', prefix.length)
  if (slash < 0) return undefined
  const host = parseHostKey(instanceId.slice(prefix.length, slash))
  const dirName = instanceId.slice(slash + 1)
  if (host === undefined || !/^machine-[0-9A-Za-z][0-9A-Za-z_-]{0,63}$/.test(dirName)) return undefined
  return { host, dirName }
}

function lines (stdout: string): Map<string, string> {
  const facts = new Map<string, string>()
  for (const line of stdout.split('\n')) {
    const space = line.indexOf(' ')
    if (space > 0) facts.set(line.slice(0, space), line.slice(space + 1).trim())
  }
  return facts
}

function readState (files: FileSystem, file: string): { hosts: string[], keys: Record<string, string> } {
  const bytes = files.readFile(file)
  if (bytes === undefined) return { hosts: [], keys: {} }
  const state = JSON.parse(new TextDecoder().decode(bytes)) as { hosts?: unknown, keys?: unknown }
  if (!Array.isArray(state.hosts) || !state.hosts.every(h => typeof h === 'string' && hostKeyPattern.test(h))) {
    throw new ProviderError(providerName, 'invalid', `the state file ${file} does not hold a list of hosts`)
  }
  const keys = state.keys ?? {}
  if (typeof keys !== 'object' || keys === null || !Object.entries(keys).every(([h, k]) => hostKeyPattern.test(h) && typeof k === 'string' && k.startsWith('/'))) {
    throw new ProviderError(providerName, 'invalid', `the state file ${file} does not hold a map of hosts to key files`)
  }
  return { hosts: state.hosts as string[], keys: keys as Record<string, string> }
}

function base64 (bytes: Uint8Array): string {
  let text = ''
  for (const byte of bytes) text += String.fromCharCode(byte)
  return btoa(text)
}

function fromBase64 (text: string): Uint8Array {
  return Uint8Array.from(atob(text), c => c.charCodeAt(0))
}
