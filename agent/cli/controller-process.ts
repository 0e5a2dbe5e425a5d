/**
 * Starting controller processes on this host, for `bootstrap` and `enable-ha`: a new
 * member gets its own data dir (`<controller dir>/cN`) with a fresh identity and a port
 * on the group's listen address (controller-network.ts: loopback unless bootstrap was
 * told otherwise), and runs as a detached `cantripd --role controller --provider local`
 * (or a systemd unit) started through the agent launcher, which runs the agent version its
 * data dir has switched to (upgrade-controller), with its log in `<data dir>/cantripd.log`, so it outlives the CLI;
 * its launch record (`<data dir>/launch.json`) lets `cantrip start-agent` restart it.
 */
import { mkdirSync, readdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import { keptEnvironment, startAgentProcess, writeAgentLaunch, type AgentLaunch } from '../agent-launch.ts'
import { defaultUnitScope, installAgentUnit } from '../systemd-unit.ts'
import { freePort } from '../free-port.ts'
import { generatePeerKey, peerIdOfKey, writePeerKey } from '../mesh/peer-identity.ts'
import { cantripdStubProgram, packageRoot } from '../package-root.ts'
import type { ControllerMember } from './cli-home.ts'
import { hostMultiaddr, readControllerNetwork } from './controller-network.ts'

/** The most controllers a group may have (odd sizes only: 1, 3, 5, 7). */
export const controllerGroupSizeMax = 7

/** Whether `n` is a size a controller group may have: odd, 1 to controllerGroupSizeMax. */
export function validGroupSize (n: number): boolean {
  return Number.isSafeInteger(n) && n >= 1 && n <= controllerGroupSizeMax && n % 2 === 1
}

export type NewMember = ControllerMember & { port: number }

/**
 * A fresh member named after the first `cN` above every one `dir` holds or `taken` names
 * (members that were lost with their directories keep their names): its identity
 * written, not started.
 */
export async function newMember (dir: string, taken: readonly string[] = []): Promise<NewMember> {
  let i = 0
  for (const name of [...readdirSync(dir), ...taken]) {
    const n = /^c(\d+)$/.exec(name)?.[1]
    if (n !== undefined) i = Math.max(i, Number(n) + 1)
  }
  const dataDir = join(dir, `c${i}`)
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const key = await generatePeerKey()
  await writePeerKey(join(dataDir, 'agent.key'), key)
  const peerId = peerIdOfKey(key)
  const network = readControllerNetwork(dir)
  const port = network.port === undefined ? await freePort(network.listen) : network.port + i
  return { 'peer-id': peerId, addresses: [`${hostMultiaddr(network.advertise)}/tcp/${port}/p2p/${peerId}`], pid: 0, 'data-dir': dataDir, port }
}

export interface SpawnOptions {
  /** The controller's directory: its network key and the machines dir live there. */
  dir: string
  /** Peer ids for `--controllers`. */
  controllers: readonly string[]
  /** Multiaddrs of the other members, as `--seed`. */
  seeds: readonly string[]
  admin: string
  /** Start as a joining (not yet voting) member: `cantripd --join`. */
  join?: boolean
  /** `cantrip bootstrap --inspect`: `cantripd --inspect 0` (its machine agents inherit it). */
  inspect?: boolean
  /** `cantrip bootstrap --inspect-data`: `cantripd --inspect-data` too (its machine agents inherit it). */
  inspectData?: boolean
  /** Run it as a systemd unit (only where systemd runs the host: see systemdPresence). */
  systemd?: boolean
}

/**
 * Starts `member` detached, or as a systemd unit; sets and returns its pid. How it was
 * started is kept in its data directory first (agent/agent-launch.ts), so `cantrip
 * start-agent` can bring it back with the same flags.
 */
export function spawnController (member: NewMember, options: SpawnOptions): number {
  const launch = controllerLaunch(member, options)
  writeAgentLaunch(member['data-dir'], launch)
  if (options.systemd === true) {
    const scope = defaultUnitScope()
    member.pid = installAgentUnit(launch, scope)
    member.unit = { name: launch.name, scope }
  } else {
    member.pid = startAgentProcess(launch)
  }
  return member.pid
}

/**
 * Through the agent launcher (agent/cantripd-stub.ts), as the machine agents are: it runs
 * the version the member's tools/current names (`upgrade-controller` switches it, with the
 * launcher's rollback of a version that never comes up), else this installation's own.
 */
function controllerLaunch (member: NewMember, options: SpawnOptions): AgentLaunch {
  const cantripd = cantripdStubProgram()
  const network = readControllerNetwork(options.dir)
  const name = basename(member['data-dir'])
  return {
    name: `cantripd-${basename(options.dir)}-${name}`,
    description: `cantrip controller ${name} of "${basename(options.dir)}"`,
    command: cantripd.file,
    args: [
      ...cantripd.args,
      ...controllerArgs(member, options, {
        networkKey: join(options.dir, 'swarm.key'),
        listen: `${hostMultiaddr(network.listen)}/tcp/${member.port}`,
        advertise: network.advertise,
        machinesDir: join(options.dir, 'machines'),
        ...(network.machineNetwork === undefined ? {} : { machineNetwork: network.machineNetwork })
      })
    ],
    cwd: packageRoot,
    logFile: join(member['data-dir'], 'cantripd.log'),
    env: keptEnvironment(process.env)
  }
}

/** Where a member binds and keeps things, on the host it runs on. */
export interface MemberPaths {
  networkKey: string
  listen: string
  advertise: string
  machinesDir: string
  machineNetwork?: string
}

/** cantripd's arguments for a controller member, wherever it runs (this host, or another over ssh: remote-controller.ts). */
export function controllerArgs (member: NewMember, options: SpawnOptions, paths: MemberPaths): string[] {
  return [
    '--role', 'controller', '--data-dir', member['data-dir'], '--network-key', paths.networkKey,
    '--listen', paths.listen, '--advertise', paths.advertise,
    ...(paths.machineNetwork === undefined ? [] : ['--machine-network', paths.machineNetwork]),
    '--controllers', options.controllers.join(','),
    ...options.seeds.filter(seed => !seed.endsWith(`/p2p/${member['peer-id']}`)).flatMap(seed => ['--seed', seed]),
    '--admin', options.admin,
    '--provider', 'local', '--machines-dir', paths.machinesDir,
    ...(options.join === true ? ['--join'] : []),
    // A controller that is a unit starts its machines as units (agent/machine-agent-supervision.ts).
    ...(options.systemd === true ? ['--systemd'] : []),
    ...(options.inspect === true ? ['--inspect', '0'] : []),
    ...(options.inspect === true && options.inspectData === true ? ['--inspect-data'] : [])
  ]
}
