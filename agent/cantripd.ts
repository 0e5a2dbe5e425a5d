/**
 * cantripd: one agent process, with the roles its arguments give it: `controller` (a Raft
 * member of the controller group, agent/roles/controller-role.ts), `machine` (a machine
 * agent running its units, agent/roles/machine-role.ts) or `both` (a controller that is
 * also the agent of a machine, as Juju's bootstrap machine 0 is). Every role shares one
 * libp2p node (Libp2pTransport: TCP, Noise, Yamux, a private network key, the agent's own
 * Ed25519 identity from `<data dir>/agent.key`) and one presence agent.
 *
 * The roles run under a supervisor: a role that fails restarts after a back-off, a crash
 * loop gives it up, and a fatal error (bad identity, storage that will not open) stops
 * the agent with one line on stderr and exit 1. A machine whose machine is dead has no
 * more work: the agent says `machine-done` and exits 0.
 *
 * It prints one JSON object per line on stdout for whoever supervises it: `listening`
 * (peer id and addresses), `role` (every Raft role change, with term and leader),
 * `machine-started`, `model` (each new view of a machine agent, with its arrival time),
 * `machine-done` and `stopped`. SIGTERM or SIGINT stops it cleanly.
 *
 * A provisioned machine agent starts from its bootstrap data alone (`--bootstrap FILE`,
 * written by a provider: runtime/bootstrap-data.ts): the network key, the controllers'
 * addresses, its machine id and a one-time secret, which it proves to a controller to
 * bind its own peer id to the machine before it does anything else.
 *
 * The leader's provisioner makes machines with `--provider local` (detached cantripd
 * processes under `--machines-dir`, shared by the controllers of one host); with `none`
 * machine agents are brought by hand and named with `--machine N=PEER`.
 *
 * `--join` (controllers only, `cantrip enable-ha`) starts a controller that is not yet a
 * voter: its empty store is not bootstrapped with `--controllers`; it waits until the
 * leader adds it and sends it the log or a RaftSnapshot. Who is a controller then comes
 * from the Raft configuration, on every member.
 *
 * Every agent reports its version (agent/version.ts) in its presence heartbeats.
 *
 * `--inspect [HOST:]PORT` streams every actor of the agent over WebSocket in the
 * `@statelyai/inspect` format (agent/inspect/; URL in `<data dir>/inspect.url` and an
 * `inspect` line), `--inspect-log FILE` appends the same messages as JSONL, and
 * `--inspect-data` includes relation databags and config values. Machine agents the
 * local provider starts inherit `--inspect 0`.
 *
 *   cantripd --role controller|machine|both --data-dir DIR --network-key FILE
 *            --listen MULTIADDR [--advertise HOST] --controllers ID,ID,ID [--seed MULTIADDR ...]
 *            [--admin PEER ...] [--machine N=PEER ...] [--machine-id N] [--presence-ms H,S,F] [--agent-down-ms MS]
 *            [--provider local|none] [--machines-dir DIR] [--machine-network CIDR] [--systemd] [--join]
 *   cantripd --bootstrap FILE --data-dir DIR [--listen MULTIADDR] [--advertise HOST]
 *
 * `--listen` is where the agent binds (default `/ip4/127.0.0.1/tcp/0`, this host only);
 * `--advertise HOST` is the address other hosts dial when that is not the bound one
 * (`--listen /ip4/0.0.0.0/tcp/17070 --advertise 10.0.0.5`). `--machine-network CIDR`
 * gives each machine of the local provider a network namespace of its own with an
 * address in CIDR (root only; agent/netns-machine-network.ts). `--systemd` (a controller
 * that runs as a systemd unit) starts its local machines as units too where systemd runs
 * the host (agent/machine-agent-supervision.ts).
 *   cantripd --help
 *
 * Every agent keeps the controllers it learns in `<data dir>/controllers.json`
 * (agent/known-controllers-file.ts) and starts from them with its bootstrap data or flags,
 * so it finds the group again after the controllers it was started with are gone.
 */
import '../runtime/polyfill.ts'
import { appendFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { controllerApiProtocol } from '../actors/controller/controller-api.ts'
import { requestApi } from '../actors/controller/api-requests.ts'
import { decodeBootstrapData, type BootstrapController, type BootstrapData } from '../runtime/bootstrap-data.ts'
import type { ManualProvider } from '../providers/manual-provider.ts'
import { machineNetworkUnavailable, NetnsMachineNetwork } from './netns-machine-network.ts'
import { readProviderConfig, type ProviderConfig } from './providers/provider-config.ts'
import { limits } from '../runtime/limits.ts'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { PresenceAgent } from '../runtime/presence/presence-agent.ts'
import { FatalError, Supervisor, type SupervisorChild } from '../runtime/supervisor.ts'
import { changeTopic } from '../actors/controller/change-notices.ts'
import { modelTransport } from '../actors/controller/model-scope.ts'
import { defaultModelName, isModelName } from '../runtime/ids.ts'
import type { Transport } from '../runtime/transport.ts'
import { Libp2pTransport, type WireCapture } from './mesh/libp2p-transport.ts'
import { peerIdFromString } from '@libp2p/peer-id'
import { cantripVersion } from './version.ts'
import { LoopbackTransport } from './mesh/loopback-transport.ts'
import { readNetworkKey } from './mesh/network-key.ts'
import { loadOrCreatePeerKey, peerIdOfKey } from './mesh/peer-identity.ts'
import type { ControllerRole, ControllerRoleOptions } from './roles/controller-role.ts'
import { MachineRole, machineRebootExitCode } from './roles/machine-role.ts'
import { hostClockNotice } from './time-namespace-boot-clock.ts'
import { AgentUpgrader } from './tools/agent-upgrader.ts'
import { StreamLogger } from './stream-logger.ts'
import { logLevelOrder, type Logger, type LogLevel } from '../runtime/logger.ts'
import { LogShipper, modelLoggingConfig } from './log-shipper.ts'
import { controllerLogDelivery } from './log-delivery.ts'
import { LogFiles } from './log-files.ts'
import { KnownControllersFile, knownControllersFileName } from './known-controllers-file.ts'
import { ControllerFollower } from './controller-follower.ts'
import { keptEnvironment } from './agent-launch.ts'
import { machineDefaultNetwork } from './machine-agent-network.ts'
import { hostMachineSupervision, systemdServices } from './machine-agent-supervision.ts'
import type { LocalAgentServices } from '../providers/local-provider.ts'
import { mergeControllers } from '../runtime/known-controllers.ts'
import { LogRing } from '../runtime/logs/log-ring.ts'
import { SystemClock } from './system-clock.ts'
import { writeStageTraceFromEnvironment } from './write-stage-trace.ts'
import type { InspectAddress } from './inspect/inspect-server.ts'

const usage = 'usage: cantripd --role controller|machine|both --data-dir DIR --network-key FILE --listen MULTIADDR [--advertise HOST] --controllers ID,ID,... [--seed MULTIADDR ...] [--admin PEER ...] [--machine N=PEER ...] [--machine-id N] [--provider local|none] [--machines-dir DIR] [--machine-network CIDR] [--systemd] [--provider-config FILE] [--presence-ms H,S,F] [--agent-down-ms MS] [--join] [--inspect [HOST:]PORT] [--inspect-log FILE] [--inspect-data]\n       cantripd --bootstrap FILE --data-dir DIR [--listen MULTIADDR] [--advertise HOST] [--inspect [HOST:]PORT] [--inspect-log FILE] [--inspect-data]\n       cantripd --help'
const roles = ['controller', 'machine', 'both'] as const
/** Where the leader's provisioner gets machines: `local` processes on this host, or `none` (agents brought by hand). */
const providers = ['local', 'none'] as const

function say (event: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(event) + '\n')
}

function fail (message: string): never {
  process.stderr.write(`cantripd: ${message}\n`)
  process.exit(1)
}

function parse (): ReturnType<typeof parseOptions> {
  try {
    return parseOptions()
  } catch (error) {
    fail(`${error instanceof Error ? error.message : String(error)}; ${usage}`)
  }
}

function parseOptions () {
  return parseArgs({
    options: {
      role: { type: 'string' },
      'data-dir': { type: 'string' },
      'network-key': { type: 'string' },
      listen: { type: 'string' },
      advertise: { type: 'string' },
      'machine-network': { type: 'string' },
      controllers: { type: 'string' },
      seed: { type: 'string', multiple: true },
      admin: { type: 'string', multiple: true },
      machine: { type: 'string', multiple: true },
      'machine-id': { type: 'string' },
      'presence-ms': { type: 'string' },
      'agent-down-ms': { type: 'string' },
      bootstrap: { type: 'string' },
      provider: { type: 'string' },
      'machines-dir': { type: 'string' },
      'provider-config': { type: 'string' },
      join: { type: 'boolean' },
      systemd: { type: 'boolean' },
      inspect: { type: 'string' },
      'inspect-log': { type: 'string' },
      'inspect-data': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' }
    },
    strict: true
  }).values
}

async function main (): Promise<void> {
  const values = parse()
  // Asked for, the usage is the answer (stdout, exit 0), as every Unix tool's --help.
  if (values.help === true) {
    process.stdout.write(`${usage}\n`)
    process.exit(0)
  }
  // A provisioned machine agent: everything it needs is in its bootstrap data.
  const boot = values.bootstrap === undefined ? undefined : readBootstrap(values.bootstrap)
  const role = (values.role ?? (boot === undefined ? undefined : 'machine')) as typeof roles[number]
  if (!roles.includes(role)) fail(`expected --role controller, machine or both, got ${JSON.stringify(values.role ?? null)}; ${usage}`)
  if (boot !== undefined && role !== 'machine') fail(`expected --bootstrap only for a machine agent, got --role ${role}`)
  const dataDir = values['data-dir'] ?? fail(`expected --data-dir; ${usage}`)
  // Checked before anything is read or started, like the flags.
  const logLevelMin = logLevelFromEnv(process.env['CANTRIP_LOG_LEVEL'])
  const networkKey = boot?.networkKey ?? await readNetworkKey(values['network-key'] ?? fail(`expected --network-key; ${usage}`))
  const controllerFlag = boot?.controllers.map(c => c.peerId) ?? (values.controllers ?? fail(`expected --controllers; ${usage}`)).split(',').filter(Boolean)
  const flagSeeds = boot?.controllers.flatMap(c => c.addresses) ?? values.seed ?? []
  const machineId = role === 'controller' ? undefined : boot?.machineId ?? values['machine-id'] ?? fail(`expected --machine-id with --role ${role}; ${usage}`)
  const providerName = values.provider ?? 'none'
  if (!providers.includes(providerName as typeof providers[number])) fail(`expected --provider ${providers.join(' or ')}, got ${JSON.stringify(providerName)}`)
  let providerConfig: ProviderConfig
  try {
    providerConfig = readProviderConfig(values['provider-config'])
  } catch (error) {
    fail((error as Error).message)
  }
  const machines = new Map((values.machine ?? []).map(entry => {
    const [machine, peer] = entry.split('=')
    if (machine === undefined || peer === undefined || machine === '' || peer === '') fail(`expected --machine N=PEERID, got ${JSON.stringify(entry)}`)
    return [peer, machine] as const
  }))
  const machineNetwork = isolatedMachines(values['machine-network'])
  const timings = presenceTimings(values['presence-ms'])
  const agentDownAfterMs = agentDownTiming(values['agent-down-ms'])
  let inspectAddress: InspectAddress | undefined
  try {
    // The inspector (and its WebSocket server) is loaded only by an agent asked to serve it.
    inspectAddress = values.inspect === undefined ? undefined : (await import('./inspect/inspect-server.ts')).parseInspectAddress(values.inspect)
  } catch (error) {
    fail((error as Error).message)
  }
  mkdirSync(dataDir, { recursive: true })

  const privateKey = await loadOrCreatePeerKey(join(dataDir, 'agent.key'))
  const id = peerIdOfKey(privateKey).toString()
  const joining = values.join === true
  if (joining && role === 'machine') fail(`expected --join only with --role controller or both, got --role ${role}`)
  if (role !== 'machine' && !joining && !controllerFlag.includes(id)) fail(`this agent's peer id ${id} is not among --controllers ${controllerFlag.join(',')}`)
  // The agent of its own machine, as the controllers know it.
  if (role === 'both') machines.set(id, machineId!)
  const rootModule = `cantripd.${machineId === undefined ? id.slice(-8) : `machine-${machineId}`}`
  const streamLogger = new StreamLogger({ stream: process.stderr, module: rootModule, levelMin: logLevelMin })
  // The controllers this agent learned before it last stopped (the original ones may be
  // gone): a machine agent tries them, with its bootstrap data's, for everything; a
  // controller dials them as seeds, since its Raft voters are peer ids without addresses.
  const knownFile = new KnownControllersFile(dataDir, streamLogger)
  const started = mergeControllers(knownFile.remembered, startingControllers(controllerFlag, flagSeeds, boot))
  // A controller's --controllers list bootstraps its Raft configuration and stays as given.
  const controllers = role === 'machine' ? started.map(c => c.peerId) : controllerFlag
  const seeds = [...new Set([...flagSeeds, ...started.filter(c => c.peerId !== id).flatMap(c => c.addresses)])]
  if (knownFile.remembered.length > 0) streamLogger.log('info', `remembered ${knownFile.remembered.length} controllers from ${knownControllersFileName}`)
  // The mesh logs to the agent's own log only: shipping its records would feed on itself.
  const mesh = await Libp2pTransport.create({
    privateKey,
    networkKey,
    ...(values.listen === undefined ? {} : { listen: values.listen }),
    ...(values.advertise === undefined ? {} : { advertise: values.advertise }),
    bootstrap: seeds,
    logger: streamLogger,
    ...wireCapture(process.env['CANTRIP_WIRE_CAPTURE_DIR'], `${role}-${machineId ?? id}`)
  })
  say({ event: 'listening', peerId: mesh.peerId, addresses: mesh.addresses().map(String) })
  // Timing an agent's start (bench/notice-stages.ts): its mesh is up.
  writeStageTraceFromEnvironment()?.('listening', 0)
  // Every actor this agent runs, for `cantrip inspect` and Stately's inspector (agent/inspect/).
  const inspection = inspectAddress === undefined && values['inspect-log'] === undefined
    ? undefined
    : await (await import('./inspect/agent-inspection.ts')).AgentInspection.start({
      agent: (await import('./inspect/inspect-endpoints.ts')).inspectAgentName({ peerId: id, machineId, model: boot?.modelUuid ?? defaultModelName }),
      dataDir,
      ...(inspectAddress === undefined ? {} : { address: inspectAddress }),
      ...(values['inspect-log'] === undefined ? {} : { logFile: values['inspect-log'] }),
      data: values['inspect-data'] === true
    }).catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)))
  if (inspection?.url !== undefined) say({ event: 'inspect', url: inspection.url })
  /** Machine agents of the local provider inherit inspection, each on a free port of its own. */
  const inheritedInspectArgs = inspectAddress === undefined ? [] : ['--inspect', '0', ...(values['inspect-data'] === true ? ['--inspect-data'] : [])]
  // Both roles in one process: the machine role reaches its own controller locally.
  const transport: Transport = role === 'both' ? new LoopbackTransport(mesh, { echoTopics: [changeTopic(defaultModelName)] }) : mesh
  // A provisioned machine agent belongs to the model in its bootstrap data; everything else to "default".
  const model = boot?.modelUuid ?? defaultModelName
  if (!isModelName(model)) fail(`expected a model name in the bootstrap data, got ${JSON.stringify(model)}`)
  const clock = new SystemClock()
  // Heard by the others while it runs; a restart comes back with a higher incarnation.
  const incarnation = Date.now()
  const version = cantripVersion
  // The controller's heartbeat; a machine agent's is its machine role's (actors/machine/machine-agent.ts).
  const presence = role === 'machine' ? undefined : new PresenceAgent({ transport, clock }, { modelUuid: model, role: 'controller', incarnation, version, ...timings })
  presence?.start()
  /** Each start of the machine role heartbeats, and its machiner proposes, under an incarnation above every earlier one. */
  let lastIncarnation = incarnation - 1
  const nextIncarnation = (): number => { lastIncarnation = Math.max(Date.now(), lastIncarnation + 1); return lastIncarnation }
  /** The controller's presence on another model's topic, so it hears that model's machine agents. */
  const presenceFor = (other: string): PresenceAgent => {
    const agent = new PresenceAgent({ transport, clock }, { modelUuid: other, role: 'controller', incarnation, version, ...timings })
    agent.start()
    return agent
  }
  // Every record also goes to the controllers for `debug-log`; a controller keeps its own directly.
  const logs = role === 'machine' ? undefined : new LogRing()
  const agentEntity = machineId === undefined ? `controller-${id.slice(-8)}` : `machine-${machineId}`
  // A machine's agent keeps Juju's per-unit and per-machine log files (agent/log-files.ts).
  const logFiles = machineId === undefined ? undefined : new LogFiles({ dir: join(dataDir, 'log'), agentEntity })
  const shipper = new LogShipper({
    transport,
    modelUuid: model,
    rootModule,
    entity: agentEntity,
    ...(logs === undefined ? {} : { local: entries => { logs.append(id, entries) } }),
    // A machine agent's final batches are acknowledged by a controller; a controller keeps its own.
    ...(role === 'machine' ? { deliver: controllerLogDelivery(modelTransport(transport, model), controllers) } : {}),
    ...(logFiles === undefined ? {} : { files: logFiles })
  })
  // Juju's default logging-config (<root>=INFO) from the start: no DEBUG record is shipped
  // unless the model asks for it (a machine agent follows the model's setting below).
  shipper.setLoggingConfig(modelLoggingConfig(undefined))
  shipper.start()
  const logger = shipper.logger(streamLogger)

  const children: SupervisorChild[] = []
  const manualProviders: ManualProvider[] = []
  let controllerRole: ControllerRole | undefined
  // Where the other controllers listen, as the mesh learned it (identify): for the bootstrap data of new machines.
  const learned = new Map<string, string[]>()
  const learnTimer = setInterval(() => {
    const voters = controllerRole?.node.host.voters ?? []
    if (controllerRole === undefined) return
    void learnControllerAddresses(mesh, voters.filter(v => v !== id), learned).then(() => {
      // Kept for this controller's next start: the peers it must dial to find the group again.
      knownFile.remember(mergeControllers(controllerAddresses(id, mesh.addresses().map(String), seeds, voters, learned).filter(c => c.peerId !== id), knownFile.remembered))
    })
  }, controllerAddressRefreshMs)
  // A machine agent follows the group's membership: `controllers` is shared with its
  // machine role (which reads it on every request), and grows as enable-ha adds voters.
  const follower = role === 'machine' ? new ControllerFollower({ mesh, model, controllers, known: knownFile, logger }) : undefined
  follower?.start()
  // Only a controller (role controller or both) has a presence of its own here.
  // The controller's code is loaded only here: a machine agent never holds it (controller-kit.ts).
  const kit = presence === undefined ? undefined : await import('./controller-kit.ts')
  if (presence !== undefined && kit !== undefined) {
    const { ControllerRole, modelMachinesHome } = kit
    const machinesHome = values['machines-dir'] ?? join(dataDir, '..', 'machines')
    const provisioning = providerName === 'none' ? undefined : localProvisioning(machinesHome)
    children.push({
      name: 'controller',
      start: async () => controllerRole = await ControllerRole.start({
        id, dataDir, transport, presence, controllers, admins: values.admin ?? [], machines, logger, join: joining, version, ...(logs === undefined ? {} : { logs }),
        ...(inspection === undefined ? {} : { inspect: inspection.inspect }),
        controllerAddresses: voters => controllerAddresses(id, mesh.addresses().map(String), seeds, voters, learned),
        onRole: change => { say({ event: 'role', ...change }) },
        ...(provisioning === undefined ? {} : { provisioning }),
        // Another model's machines live apart, so machine "0" of two models never share a directory.
        provisioningFor: other => providerName === 'none' ? undefined : localProvisioning(modelMachinesHome(machinesHome, other)),
        presenceFor,
        onModelRemoved: other => { rmSync(modelMachinesHome(machinesHome, other), { recursive: true, force: true }) }
      })
    })
  }

  /**
   * The local provider under `--machines-dir` (shared by the controllers of this host, so a
   * new leader adopts the agents the old one started), with the provider config's
   * injected faults around it; its watchdog runs only while the provisioner does.
   */
  function localProvisioning (home: string): NonNullable<ControllerRoleOptions['provisioning']> {
    const { createLocalProvider, createManualProvider, FaultInjectingProvider } = kit!
    const defaultNetwork = machineDefaultNetwork(values.listen, values.advertise)
    const services = machineServices(values.systemd === true, logger)
    const local = createLocalProvider({
      home, logger: logger.child('local-provider'), extraArgs: inheritedInspectArgs,
      ...(machineNetwork === undefined ? {} : { network: machineNetwork }), ...(defaultNetwork === undefined ? {} : { defaultNetwork }), ...(services === undefined ? {} : { services })
    })
    const provider = Object.values(providerConfig.faults).some(n => n > 0) ? new FaultInjectingProvider(local, providerConfig.faults) : local
    // Machines placed `ssh:user@host` are existing hosts: the manual provider installs the agent there.
    const sshKeyFile = providerConfig.credentials['ssh-key-file']
    const manual = createManualProvider({
      stateFile: join(home, 'manual-hosts.json'),
      ...(sshKeyFile === undefined ? {} : { sshKeyFile }),
      // Its machines run with this controller's settings (log level and the like), as local ones inherit them.
      // Not CANTRIP_HOME: the client's store, a path on this host that means nothing there.
      agentEnv: Object.fromEntries(Object.entries(keptEnvironment(process.env)).filter(([name]) => name !== 'CANTRIP_HOME')),
      logger: { info: (message, fields) => { logger.log('info', `manual provider: ${message}`, fields) } }
    })
    manualProviders.push(manual)
    return {
      provider,
      manual,
      networkKey,
      watchdog: local,
      ...(providerConfig.retryDelayMs === undefined ? {} : { retryDelayMs: providerConfig.retryDelayMs }),
      ...(agentDownAfterMs === undefined ? {} : { agentDownAfterMs }),
      controllerAddresses: voters => controllerAddresses(id, mesh.addresses().map(String), seeds, voters, learned)
    }
  }
  let machineRole: MachineRole | undefined
  // The logging-config text last applied to the shipper (onView parses only a new one).
  let loggingConfigText: unknown
  let upgrader: AgentUpgrader | undefined
  if (machineId !== undefined) {
    const hostClock = hostClockNotice(machineId, process.env)
    if (hostClock !== undefined) logger.log('warning', hostClock)
    children.push({
      name: `machine-${machineId}`,
      start: async () => {
        // A provisioned agent first proves its one-time secret; the controllers then know its peer id.
        if (boot !== undefined) await registerMachineAgent(modelTransport(transport, model), boot, controllers, logger, () => stopping)
        machineRole = await MachineRole.start({
          machineId, model, dataDir, transport: modelTransport(transport, model), controllers, clock, logger, incarnation: nextIncarnation,
          // A machine agent hears only the controllers' heartbeats (presence-agent.ts), and only from the group it follows.
          presence: role === 'machine' ? { version, ...timings } : false,
          hostsController: role === 'both',
          ...(inspection === undefined ? {} : { inspect: inspection.inspect }),
          flushLogs: async () => await shipper.flushAcknowledged(),
          // Timing a change's way to this agent (bench/notice-stages.ts); unset in a deployment.
          ...stageTrace(),
          onView: revision => {
            // The model's logging-config applies to this agent's loggers at once (Juju's logger
            // worker); parsed only when its text changed, not for every view (a profile of 10
            // agents over 40 changes had 2 % of their samples parsing the same text).
            const text = machineRole?.agent.client.model().config['logging-config']
            if (machineRole !== undefined && text !== loggingConfigText) {
              loggingConfigText = text
              shipper.setLoggingConfig(modelLoggingConfig(machineRole.agent.client.model().config))
            }
            say({ event: 'model', revision, at: performance.timeOrigin + performance.now() })
            void upgrader?.check()
          }
        })
        loggingConfigText = machineRole.agent.client.model().config['logging-config']
        shipper.setLoggingConfig(modelLoggingConfig(machineRole.agent.client.model().config))
        say({ event: 'machine-started', machine: machineId })
        // The agent reports the version it runs; a machine-only agent (started by its launcher) also upgrades itself.
        const reporting = new AgentUpgrader({
          machineId, dataDir, version, incarnation: nextIncarnation(), client: machineRole.agent.client, logger,
          restart: to => {
            say({ event: 'agent-upgrade', machine: machineId, from: version, to })
            void stop(0, `restarting into agent ${to}`)
          }
        })
        void reporting.started().then(() => {
          if (role !== 'machine') return
          // A restarted machine role's upgrader replaces the last one, whose retry must not fire.
          upgrader?.stop()
          upgrader = reporting
          void upgrader.check()
        }, (error: unknown) => { logger.log('warning', `cannot report the agent version: ${error instanceof Error ? error.message : String(error)}`) })
        const started = machineRole
        void started.done.then(async () => {
          if (started.rebootRequested) {
            // juju-reboot: on the local provider a machine is this process. Its units'
            // processes die, the next start counts as a new boot, and the process exits
            // for the provider's watchdog to start it again, as a machine boots again.
            await started.reboot().catch(() => {})
            say({ event: 'machine-reboot', machine: machineId })
            void stop(machineRebootExitCode, 'rebooting the machine (juju-reboot)')
            return
          }
          // Resolved by a stop, not by the machine's end: nothing to say.
          if (started.outcome === undefined) return
          say({ event: 'machine-done', machine: machineId, outcome: started.outcome })
          void stop(0)
        }, () => {})
        return machineRole
      }
    })
  }
  const supervisor = new Supervisor({ clock, logger }, { name: `cantripd.${id.slice(-8)}`, children })

  let stopping = false
  const stop = async (code: number, reason?: string): Promise<void> => {
    if (stopping) return
    stopping = true
    clearInterval(learnTimer)
    follower?.stop()
    await supervisor.stop().catch(() => {})
    // The manual provider's shared ssh connections end with the agent.
    await Promise.all(manualProviders.map(async manual => { await manual.close().catch(() => {}) }))
    await presence?.leave()
    logger.log(code === 0 ? 'info' : 'error', `stopped${reason === undefined ? '' : `: ${reason}`}`)
    // The last records (that one too) leave acknowledged, bounded, before the mesh closes under them.
    await shipper.stop()
    logFiles?.close()
    await transport.stop()
    await inspection?.stop().catch(() => {})
    if (reason !== undefined) process.stderr.write(`cantripd: ${reason}\n`)
    say({ event: 'stopped' })
    process.exit(code)
  }
  supervisor.done.catch((error: unknown) => { void stop(1, error instanceof Error ? error.message : String(error)) })
  supervisor.start()
  // Said in the agent's log (and shipped, acknowledged, before it exits), as Juju's agents say why they stop.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.log('info', `terminating on ${signal}`)
      void stop(0)
    })
  }
}

/** CANTRIP_WRITE_TRACE's recorder for the machine role's steps, when set. */
function stageTrace (): { onStage?: (stage: string, detail: number) => void } {
  const record = writeStageTraceFromEnvironment()
  return record === undefined ? {} : { onStage: record }
}

/**
 * Every controller's peer id and multiaddrs: this one's own, the seeds' by their `/p2p/`
 * suffix, and every other Raft voter's as the mesh learned them (a controller added by
 * `enable-ha` after this one started is no seed of it).
 */
function controllerAddresses (self: string, own: readonly string[], seeds: readonly string[], voters: readonly string[], learned: ReadonlyMap<string, string[]>): BootstrapController[] {
  const byPeer = new Map<string, string[]>([[self, own.map(a => a.includes('/p2p/') ? a : `${a}/p2p/${self}`)]])
  for (const seed of seeds) {
    const peer = /\/p2p\/([^/]+)$/.exec(seed)?.[1]
    if (peer === undefined || peer === self) continue
    byPeer.set(peer, [...byPeer.get(peer) ?? [], seed])
  }
  for (const voter of voters) {
    const addresses = learned.get(voter)
    if (!byPeer.has(voter) && addresses !== undefined && addresses.length > 0) byPeer.set(voter, addresses)
  }
  return [...byPeer].map(([peerId, addresses]) => ({ peerId, addresses }))
}

/** How often the other controllers' listen addresses are read from the mesh's peer store. */
const controllerAddressRefreshMs = 2_000
async function learnControllerAddresses (mesh: Libp2pTransport, peers: readonly string[], learned: Map<string, string[]>): Promise<void> {
  for (const peer of peers) {
    try {
      const known = await mesh.node.peerStore.get(peerIdFromString(peer))
      const addresses = known.addresses.map(a => a.multiaddr.toString()).filter(a => a.includes('/tcp/')).map(a => a.includes('/p2p/') ? a : `${a}/p2p/${peer}`)
      if (addresses.length > 0) learned.set(peer, addresses)
    } catch {
      // Not met yet: the next round tries again.
    }
  }
}

/** The controllers the agent was started with: its bootstrap data's, or `--controllers` with the `--seed` addresses that name them. */
function startingControllers (peers: readonly string[], seeds: readonly string[], boot: BootstrapData | undefined): BootstrapController[] {
  if (boot !== undefined) return [...boot.controllers]
  return peers.map(peerId => ({ peerId, addresses: seeds.filter(seed => seed.endsWith(`/p2p/${peerId}`)) }))
}

function readBootstrap (file: string): BootstrapData {
  try {
    return decodeBootstrapData(readFileSync(file))
  } catch (error) {
    fail(`cannot read the bootstrap data in ${file}: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/**
 * Registers this agent's peer id for its machine with any controller, trying each in
 * turn (limits.registrationAttemptsMax rounds, a second apart). A refusal of the secret
 * is fatal: no retry can make a wrong or used secret right.
 */
async function registerMachineAgent (transport: Transport, boot: BootstrapData, controllers: readonly string[], logger: Logger, stopping: () => boolean): Promise<void> {
  let last = 'no controller answered'
  for (let round = 0; round < limits.registrationAttemptsMax; round++) {
    for (const peerId of [...controllers]) {
      // A stop while registering ends the attempt at once (SIGTERM must not wait out the rounds).
      if (stopping()) throw new Error(`machine ${boot.machineId}: stopped while registering`)
      try {
        const reply = await requestApi(transport, peerId, controllerApiProtocol, { op: 'register', machine: boot.machineId, secret: boot.secret }, { component: 'cantripd', timeoutMs: 5_000 })
        if (reply.ok) {
          logger.log('info', `registered as the agent of machine ${boot.machineId}`)
          return
        }
        if (/registration secret|registered for it already|permission denied/.test(reply.error)) throw new FatalError(`machine ${boot.machineId}: registration refused: ${reply.error}`)
        last = reply.error
      } catch (error) {
        if (error instanceof FatalError) throw error
        last = error instanceof Error ? error.message : String(error)
      }
    }
    await new Promise(resolve => setTimeout(resolve, 1_000))
  }
  throw new Error(`machine ${boot.machineId}: could not register with any controller: ${last}`)
}

/**
 * `--machine-network CIDR`: each local machine in a namespace of its own. Where this
 * process cannot make namespaces it says why on stderr and the machines share loopback.
 */
function isolatedMachines (cidr: string | undefined): NetnsMachineNetwork | undefined {
  if (cidr === undefined) return undefined
  let network: NetnsMachineNetwork
  try {
    network = new NetnsMachineNetwork(cidr)
  } catch (error) {
    fail((error as Error).message)
  }
  const unavailable = machineNetworkUnavailable()
  if (unavailable !== undefined) {
    process.stderr.write(`cantripd: --machine-network ${network.spec.cidr}: ${unavailable}; machines share this host's loopback (127.0.0.1) instead\n`)
    return undefined
  }
  return network
}

/** `--systemd`: local machines as systemd units where systemd runs this host; else the watchdog keeps them, and the log says why. */
function machineServices (requested: boolean, logger: Logger): LocalAgentServices | undefined {
  const supervision = hostMachineSupervision(requested)
  if (supervision.kind === 'systemd') return systemdServices(supervision.scope)
  if (requested) logger.log('warning', `machine agents run as detached processes the watchdog keeps: ${supervision.why}`)
  return undefined
}

/** `--presence-ms HEARTBEAT,SUSPECT,FAILED`: presence timings (tests shorten them); the defaults otherwise. */
function presenceTimings (spec: string | undefined): { heartbeatIntervalMs?: number, suspectAfterMs?: number, failedAfterMs?: number } {
  if (spec === undefined) return {}
  const [heartbeatIntervalMs, suspectAfterMs, failedAfterMs] = spec.split(',').map(Number)
  if (![heartbeatIntervalMs, suspectAfterMs, failedAfterMs].every(ms => Number.isSafeInteger(ms) && ms! > 0)) fail(`expected --presence-ms HEARTBEAT,SUSPECT,FAILED in milliseconds, got ${JSON.stringify(spec)}`)
  return { heartbeatIntervalMs: heartbeatIntervalMs!, suspectAfterMs: suspectAfterMs!, failedAfterMs: failedAfterMs! }
}

/** `--agent-down-ms MS`: a machine agent not heard from this long shows down (tests shorten it); limits.machineAgentDownAfterMs otherwise. */
function agentDownTiming (spec: string | undefined): number | undefined {
  if (spec === undefined) return undefined
  const ms = Number(spec)
  if (!Number.isSafeInteger(ms) || ms <= 0) fail(`expected --agent-down-ms in milliseconds, got ${JSON.stringify(spec)}`)
  return ms
}

main().catch((error: unknown) => { fail(error instanceof Error ? error.message : String(error)) })

/**
 * Tests and diagnostics only: with $CANTRIP_WIRE_CAPTURE_DIR set, every payload the mesh
 * receives is appended to `<dir>/<role>-<machine or peer id>.wire` (test/chaos/authorisation
 * looks there for a credential canary). Synchronous appends: slow, never for production.
 */
function wireCapture (dir: string | undefined, name: string): { capture?: WireCapture } {
  if (dir === undefined || dir === '') return {}
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${name}.wire`)
  return { capture: (kind, bytes) => { appendFileSync(file, Buffer.concat([Buffer.from(`${kind} ${bytes.byteLength}\n`), bytes, Buffer.from('\n')])) } }
}

/** `CANTRIP_LOG_LEVEL` (trace, debug, info, warning, error): the least severe records the agent writes; info when unset. */
function logLevelFromEnv (text: string | undefined): LogLevel {
  if (text === undefined || text === '') return 'info'
  const levels = Object.keys(logLevelOrder)
  if (!levels.includes(text)) fail(`expected CANTRIP_LOG_LEVEL to be one of ${levels.join(', ')}, got ${JSON.stringify(text)}`)
  return text as LogLevel
}
