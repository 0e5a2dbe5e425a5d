/**
 * `cantrip bootstrap [NAME] [--ha N] [--listen HOST[:PORT]] [--advertise HOST]
 * [--machine-network CIDR]`: a controller group on this host with the local provider, as
 * `juju bootstrap localhost` does. The controllers listen on loopback unless told where
 * (controller-network.ts): machines on other hosts need `--listen` on an address they
 * reach, or `--listen 0.0.0.0 --advertise HOST`. `--machine-network` (root only) gives
 * each local machine a network namespace and address of its own (agent/netns-machine-network.ts);
 * without root it says why and the machines share loopback. It makes the private network key, the
 * admin's identity and one identity per controller, starts each controller as a detached
 * `cantripd --role controller --provider local` (its log in `<dir>/cN/cantripd.log`),
 * waits until the group has a leader that answers a linearizable read, and records the
 * controller in `controllers.yaml` as the current one. Machines the model needs are then
 * started by the leader's provisioner under `<dir>/machines`. With `--inspect` every agent
 * (controllers and the machine agents they start) streams its actors for `cantrip inspect`.
 *
 * The controllers run this client's version, and its agent bundle goes into their agent
 * store as the default model's agent-version (agent/cli/agent-binaries.ts), so machines
 * can be upgraded later and are handed their agent by the controllers. `--agent-version X`
 * must be a version this client holds a bundle of, which is its own.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { InvalidInputError } from '../../../runtime/errors.ts'
import { generateNetworkKey, writeNetworkKey } from '../../mesh/network-key.ts'
import { generatePeerKey, peerIdOfKey, writePeerKey } from '../../mesh/peer-identity.ts'
import { removeAgentUnit, systemdPresence } from '../../systemd-unit.ts'
import { controllerNetwork, loopbackNetwork, writeControllerNetwork, type ControllerNetwork } from '../controller-network.ts'
import { machineNetworkUnavailable, NetnsMachineNetwork } from '../../netns-machine-network.ts'
import { parseAgentVersion, noAgentBinaries } from '../../../runtime/model/agent-binaries.ts'
import { agentPlatform } from '../../tools/agent-bundle.ts'
import { AgentVersionError, clientAgentBundle, putAgentBinary } from '../agent-binaries.ts'
import { cantripVersion, expectOk, type CliContext, type RegisterCommand } from '../cli-context.ts'
import { cantripHome, forgetController, readControllers, writeControllers, type ControllerEntry } from '../cli-home.ts'
import { controllerGroupSizeMax, newMember, spawnController, validGroupSize, type NewMember } from '../controller-process.ts'
import type { Connection } from '../connection.ts'
import { openConnection } from '../open-connection.ts'
import { progress } from '../progress.ts'
import { processAlive, processCmdline, stopOwnedProcess } from '../stop-process.ts'

const component = 'cantrip bootstrap'
/** How long the new group may take to elect a leader and answer. */
const readyTimeoutMs = 120_000

export const registerBootstrap: RegisterCommand = (program, context) => {
  program.command('bootstrap')
    .description('start a controller group on this host (local provider) and make it current')
    .addHelpText('after', '\nExamples:\n  cantrip bootstrap\n  cantrip bootstrap --ha 3 prod')
    .argument('[name]', 'controller name', 'local')
    .option('--ha <n>', 'controllers in the group (1, 3, 5 or 7)', '1')
    .option('--listen <host[:port]>', 'where the controllers listen (default 127.0.0.1 and free ports; member cN takes PORT+N)')
    .option('--advertise <host>', 'the address other hosts dial to reach the controllers (default: the --listen host)')
    .option('--machine-network <cidr>', 'root only: each local machine gets its own network namespace and an address in CIDR (e.g. 10.213.7.0/24)')
    .option('--inspect', 'every agent streams its actors for `cantrip inspect` (cantripd --inspect 0; machine agents inherit it)')
    .option('--inspect-data', 'with --inspect: the streams show relation databags, config values and action parameters (secrets stay redacted)')
    .option('--systemd', 'run the controllers as systemd units (restarted on failure and at boot) where systemd runs this host')
    .option('--agent-version <version>', 'the agent version to start at (one this client holds: its own)')
    .option('--keep-broken', 'if bootstrap fails, leave the controllers and their logs as they are (by default they are stopped and removed)')
    .action(async (name: string, options: { ha: string, inspect?: boolean, inspectData?: boolean, systemd?: boolean, listen?: string, advertise?: string, machineNetwork?: string, agentVersion?: string, keepBroken?: boolean }) => {
      checkAgentVersion(options.agentVersion)
      const ha = Number(options.ha)
      if (!validGroupSize(ha)) throw new InvalidInputError(component, `--ha as an odd number from 1 to ${controllerGroupSizeMax}`, options.ha)
      if (!/^[a-z][a-z0-9-]{0,39}$/.test(name)) throw new InvalidInputError(component, 'a controller name of lowercase letters, digits and dashes', name)
      const network = isolatedMachines(context, controllerNetwork(component, options))
      const file = readControllers()
      if (file.controllers[name] !== undefined) throw new InvalidInputError(component, `a new controller name ("${name}" exists; destroy it first or choose another)`, name)
      const dir = join(cantripHome(), 'controllers', name)
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true })
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      const systemd = options.systemd === true && systemdWanted(context)
      writeControllerNetwork(dir, network)
      // The bridge first: the controllers listen on its address.
      if (network.machineNetwork !== undefined) new NetnsMachineNetwork(network.machineNetwork).ensureBridge()
      const step = progress(context, `bootstrapping controller "${name}" with ${ha} member${ha === 1 ? '' : 's'}`)
      const inspect = options.inspect === true || options.inspectData === true
      const entry = await startGroup(dir, ha, inspect, systemd, options.inspectData === true)
      file.controllers[name] = entry
      file['current-controller'] = name
      writeControllers(file)
      try {
        step.update('waiting for a leader')
        await initialiseGroup(entry)
      } catch (error) {
        // As Juju's bootstrap: a failed one is cleaned up unless --keep-broken asks otherwise.
        if (options.keepBroken === true) throw error
        context.err(`${component}: cleaning up after failed bootstrap (--keep-broken keeps the controllers and their logs)`)
        await removeFailedGroup(name, entry)
        throw error
      }
      const where = network.machineNetwork === undefined ? '' : `, machines isolated in ${network.machineNetwork}`
      step.done(`Bootstrapped controller "${name}": ${ha} member${ha === 1 ? '' : 's'} at ${network.advertise}, local provider${where}, data in ${dir}`)
    })
}

/** systemd where it runs the host; else one line saying why, and detached processes. */
function systemdWanted (context: CliContext): boolean {
  const presence = systemdPresence()
  if (!presence.running) context.err(`${component}: ${presence.why}: the controllers run as detached processes; "cantrip start-agent cN" brings one back`)
  return presence.running
}

/** Without root (or `ip netns`), isolated machines are not possible: say why, and use loopback. */
function isolatedMachines (context: CliContext, network: ControllerNetwork): ControllerNetwork {
  if (network.machineNetwork === undefined) return network
  const unavailable = machineNetworkUnavailable()
  if (unavailable === undefined) return network
  context.err(`${component}: --machine-network ${network.machineNetwork}: ${unavailable}; machines share this host's loopback (127.0.0.1) instead`)
  const { machineNetwork: _dropped, ...rest } = network
  return rest.listen === new NetnsMachineNetwork(network.machineNetwork).spec.gateway ? loopbackNetwork : rest
}

/** The client holds the bundle of its own version only: any other is refused, naming both. */
function checkAgentVersion (wanted: string | undefined): void {
  if (wanted === undefined || wanted === cantripVersion) return
  if (parseAgentVersion(wanted) === undefined) throw new InvalidInputError(component, '--agent-version as a version like "0.2.0"', wanted)
  throw new AgentVersionError(`cantrip ${cantripVersion}: cannot bootstrap at agent ${wanted}: ${noAgentBinaries(wanted, agentPlatform, 'this client', [cantripVersion])}`)
}

async function startGroup (dir: string, ha: number, inspect: boolean, systemd: boolean, inspectData: boolean): Promise<ControllerEntry> {
  await writeNetworkKey(join(dir, 'swarm.key'), generateNetworkKey())
  const adminKey = await generatePeerKey()
  await writePeerKey(join(dir, 'admin.key'), adminKey)
  const members: NewMember[] = []
  for (let i = 0; i < ha; i++) members.push(await newMember(dir))
  const controllers = members.map(m => m['peer-id'])
  const seeds = members.map(m => m.addresses[0]!)
  for (const member of members) spawnController(member, { dir, controllers, seeds, admin: peerIdOfKey(adminKey), ...(inspect ? { inspect } : {}), ...(inspectData ? { inspectData } : {}), ...(systemd ? { systemd } : {}) })
  return {
    dir,
    controllers: members.map(({ port: _port, ...member }) => member),
    provider: 'local',
    version: cantripVersion,
    ...(inspect ? { inspect } : {}),
    ...(inspectData ? { 'inspect-data': inspectData } : {}),
    ...(systemd ? { systemd } : {})
  }
}

/** Waits for a leader, then stores this client's agent bundle as the model's agent version. */
async function initialiseGroup (entry: ControllerEntry): Promise<void> {
  const connection = await openConnection(entry)
  try {
    await waitForLeader(connection, entry)
    await putAgentBinary(connection, clientAgentBundle())
    expectOk(await connection.submit({ type: 'set-agent-version', version: cantripVersion }))
  } finally {
    await connection.close()
  }
}

/** Stops the members this bootstrap started (by pid, only if still ours) and forgets the controller. */
async function removeFailedGroup (name: string, entry: ControllerEntry): Promise<void> {
  for (const member of entry.controllers) if (member.unit !== undefined) removeAgentUnit(member.unit.name, member.unit.scope)
  await Promise.all(entry.controllers.map(async member => {
    await stopOwnedProcess(member.pid, pid => processCmdline(pid).includes(entry.dir), false)
  }))
  rmSync(entry.dir, { recursive: true, force: true })
  forgetController(name)
}

/** The last error a member logged (what made it exit), or why there is none. */
function lastLogLine (file: string): string {
  try {
    // Stack frames say where, not what: the last line naming an error says what.
    const lines = readFileSync(file, 'utf8').split('\n').map(line => line.trim()).filter(line => line !== '' && !line.startsWith('at '))
    return lines.findLast(line => /error/i.test(line)) ?? lines.at(-1) ?? `nothing (${file} is empty)`
  } catch {
    return `nothing (no ${file})`
  }
}

async function waitForLeader (connection: Connection, entry: ControllerEntry): Promise<void> {
  const until = Date.now() + readyTimeoutMs
  let last = ''
  while (Date.now() < until) {
    // Members that have all exited will never elect one: say so now, not after the timeout.
    const started = entry.controllers.filter(member => member.unit === undefined && member.pid > 1)
    if (started.length === entry.controllers.length && !started.some(member => processAlive(member.pid))) {
      const log = join(entry.controllers[0]!['data-dir'], 'cantripd.log')
      throw new Error(`${component}: every controller exited before electing a leader; c0's log ends: ${lastLogLine(log)}`)
    }
    try {
      const full = await connection.model()
      if (full.leader !== '') return
    } catch (error) {
      last = error instanceof Error ? error.message : String(error)
    }
    await new Promise(resolve => setTimeout(resolve, 250))
  }
  throw new Error(`${component}: the controllers did not elect a leader within ${readyTimeoutMs / 1000} s (${last}); see their logs in cantripd.log`)
}
