/**
 * `cantrip bootstrap [NAME] [--ha N]`: a controller group on this host with the local
 * provider, as `juju bootstrap localhost` does. It makes the private network key, the
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
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { InvalidInputError } from '../../../runtime/errors.ts'
import { generateNetworkKey, writeNetworkKey } from '../../mesh/network-key.ts'
import { generatePeerKey, peerIdOfKey, writePeerKey } from '../../mesh/peer-identity.ts'
import { parseAgentVersion, noAgentBinaries } from '../../../runtime/model/agent-binaries.ts'
import { agentPlatform } from '../../tools/agent-bundle.ts'
import { AgentVersionError, clientAgentBundle, putAgentBinary } from '../agent-binaries.ts'
import { cantripVersion, expectOk, type RegisterCommand } from '../cli-context.ts'
import { cantripHome, readControllers, writeControllers, type ControllerEntry } from '../cli-home.ts'
import { controllerGroupSizeMax, newMember, spawnController, validGroupSize, type NewMember } from '../controller-process.ts'
import { Connection } from '../connection.ts'
import { progress } from '../progress.ts'

const component = 'cantrip bootstrap'
/** How long the new group may take to elect a leader and answer. */
const readyTimeoutMs = 120_000

export const registerBootstrap: RegisterCommand = (program, context) => {
  program.command('bootstrap')
    .description('start a controller group on this host (local provider) and make it current')
    .argument('[name]', 'controller name', 'local')
    .option('--ha <n>', 'controllers in the group (1, 3, 5 or 7)', '1')
    .option('--inspect', 'every agent streams its actors for `cantrip inspect` (cantripd --inspect 0; machine agents inherit it)')
    .option('--agent-version <version>', 'the agent version to start at (one this client holds: its own)')
    .action(async (name: string, options: { ha: string, inspect?: boolean, agentVersion?: string }) => {
      checkAgentVersion(options.agentVersion)
      const ha = Number(options.ha)
      if (!validGroupSize(ha)) throw new InvalidInputError(component, `--ha as an odd number from 1 to ${controllerGroupSizeMax}`, options.ha)
      if (!/^[a-z][a-z0-9-]{0,39}$/.test(name)) throw new InvalidInputError(component, 'a controller name of lowercase letters, digits and dashes', name)
      const file = readControllers()
      if (file.controllers[name] !== undefined) throw new InvalidInputError(component, `a new controller name ("${name}" exists; destroy it first or choose another)`, name)
      const dir = join(cantripHome(), 'controllers', name)
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true })
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      const step = progress(context, `bootstrapping controller "${name}" with ${ha} member${ha === 1 ? '' : 's'}`)
      const entry = await startGroup(dir, ha, options.inspect === true)
      file.controllers[name] = entry
      file['current-controller'] = name
      writeControllers(file)
      step.update('waiting for a leader')
      const connection = await Connection.open(entry)
      try {
        await waitForLeader(connection)
        step.update('storing the agent binaries')
        await putAgentBinary(connection, clientAgentBundle())
        expectOk(await connection.submit({ type: 'set-agent-version', version: cantripVersion }))
      } finally {
        await connection.close()
      }
      step.done(`Bootstrapped controller "${name}": ${ha} member${ha === 1 ? '' : 's'}, local provider, data in ${dir}`)
    })
}

/** The client holds the bundle of its own version only: any other is refused, naming both. */
function checkAgentVersion (wanted: string | undefined): void {
  if (wanted === undefined || wanted === cantripVersion) return
  if (parseAgentVersion(wanted) === undefined) throw new InvalidInputError(component, '--agent-version as a version like "0.2.0"', wanted)
  throw new AgentVersionError(`cantrip ${cantripVersion}: cannot bootstrap at agent ${wanted}: ${noAgentBinaries(wanted, agentPlatform, 'this client', [cantripVersion])}`)
}

async function startGroup (dir: string, ha: number, inspect: boolean): Promise<ControllerEntry> {
  await writeNetworkKey(join(dir, 'swarm.key'), generateNetworkKey())
  const adminKey = await generatePeerKey()
  await writePeerKey(join(dir, 'admin.key'), adminKey)
  const members: NewMember[] = []
  for (let i = 0; i < ha; i++) members.push(await newMember(dir))
  const controllers = members.map(m => m['peer-id'])
  const seeds = members.map(m => m.addresses[0]!)
  for (const member of members) spawnController(member, { dir, controllers, seeds, admin: peerIdOfKey(adminKey), ...(inspect ? { inspect } : {}) })
  return {
    dir,
    controllers: members.map(({ port: _port, ...member }) => member),
    provider: 'local',
    version: cantripVersion,
    ...(inspect ? { inspect } : {})
  }
}

async function waitForLeader (connection: Connection): Promise<void> {
  const until = Date.now() + readyTimeoutMs
  let last = ''
  while (Date.now() < until) {
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
