/**
 * Controller members on other hosts: `cantrip enable-ha --to ssh:user@host[:port]`, as
 * Juju's `enable-ha --to` places new controllers on machines of its choosing
 * (juju/juju cmd/juju/commands/enableha.go, `--to` placement directives). The member is
 * started over ssh the way the manual provider starts a machine agent
 * (providers/manual-provider.ts `startController`): this installation's agent bundle is
 * shipped once, and the member's identity, the group's network key and its command
 * (`run.sh`) go to `~/.cantrip/controller-<name>/cN` on that host, mode 0600. It listens
 * on every interface of that host at a fixed port (the group's port, else 17070, plus N)
 * and advertises the host's address as the placement names it; its machines directory
 * (the local provider's, used when it leads) is `~/.cantrip/controller-<name>/machines`.
 *
 * `--to 2` (a machine id) places the member on the host machine 2 was added on over ssh,
 * with that machine's key, as Juju's `enable-ha --to 2` uses an existing machine.
 *
 * `cantrip start-agent cN` starts it again over ssh from its kept `run.sh`;
 * `destroy-controller` stops it and removes what it put there.
 */
import { readFileSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { InvalidInputError } from '../../runtime/errors.ts'
import { isMachineId } from '../../runtime/ids.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { FullModel } from './connection.ts'
import { keptEnvironment } from '../agent-launch.ts'
import { createManualProvider } from '../create-manual-provider.ts'
import type { ManualProvider } from '../../providers/manual-provider.ts'
import type { ControllerEntry, ControllerMember } from './cli-home.ts'
import { controllerArgs, type NewMember, type SpawnOptions } from './controller-process.ts'
import { hostMultiaddr, readControllerNetwork } from './controller-network.ts'

/** The first member's port on another host when the group has no fixed port (Juju's API port). */
export const remoteControllerPortBase = 17070
const sshPlacement = /^ssh:([A-Za-z_][A-Za-z0-9_.-]{0,31})@([A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?$/
const loopback = /^(127\.|::1$|localhost$)/

/** Where one new member runs: a host over ssh, with the key that reaches it (default: ssh's own). */
export interface ControllerPlacement {
  placement: string
  sshKeyFile?: string
}

/**
 * `--to` as given: a comma-separated list of `ssh:user@host[:port]` or machine ids (a
 * machine of the default model added over ssh: its host), at most one per member to add;
 * one clear line for anything else.
 */
export function parseControllerPlacements (component: string, to: string | undefined, adding = Infinity): string[] {
  if (to === undefined) return []
  const placements = to.split(',').map(p => p.trim())
  for (const placement of placements) {
    if (!sshPlacement.test(placement) && !isMachineId(placement)) throw new InvalidInputError(component, '--to as a comma-separated list of ssh:user@host[:port] or machine ids', placement === '' ? to : placement)
  }
  if (placements.length > adding) throw new InvalidInputError(component, `at most ${adding} placement${adding === 1 ? '' : 's'} in --to (the members to add)`, String(placements.length))
  return placements
}

/**
 * Each placement as a host: `ssh:…` with `--private-key`; a machine id (Juju's `enable-ha
 * --to 2`) as the host that machine was added on, with its key. A machine of this
 * host's local provider has no host of its own to place a member on: refused.
 */
export async function resolveControllerPlacements (component: string, placements: readonly string[], sshKeyFile: string | undefined, loadModel: () => Promise<FullModel>): Promise<ControllerPlacement[]> {
  // The model is asked for only when a machine is named.
  const model = placements.some(isMachineId) ? await loadModel() : undefined
  return placements.map(placement => {
    if (sshPlacement.test(placement) || model === undefined) return { placement, ...(sshKeyFile === undefined ? {} : { sshKeyFile }) }
    const machine = readerOf(model.model).machine(placement)
    if (machine === undefined) throw new InvalidInputError(component, `--to machine ${placement} in model "default"`, 'no such machine')
    if (machine.placement === null || !sshPlacement.test(machine.placement)) {
      throw new InvalidInputError(component, `--to machine ${placement} added over ssh (its host runs the new member)`, 'a machine of this host (omit --to to run the member here)')
    }
    return { placement: machine.placement, ...(machine.privateKey === undefined ? {} : { sshKeyFile: machine.privateKey }) }
  })
}

/** A group other hosts can join listens on an address they reach: refused otherwise, before anything starts. */
export function checkReachableGroup (component: string, entry: ControllerEntry): void {
  const network = readControllerNetwork(entry.dir)
  if (loopback.test(network.advertise)) {
    throw new InvalidInputError(component, 'a controller other hosts can reach for --to (bootstrap --listen ADDRESS)', `controllers advertising ${network.advertise}`)
  }
}

/** The host part of a placement, bare, as the member advertises it. */
function placementAddress (placement: string): string {
  const host = sshPlacement.exec(placement)?.[2] ?? ''
  return host.startsWith('[') ? host.slice(1, -1) : host
}

function provider (entry: ControllerEntry, sshKeyFile: string | undefined): ManualProvider {
  return createManualProvider({
    // Hosts of controllers are not machines: kept apart from every manual-hosts.json.
    stateFile: join(entry.dir, 'controller-hosts.json'),
    ...(sshKeyFile === undefined ? {} : { sshKeyFile: resolve(sshKeyFile) })
  })
}

function dirName (entry: ControllerEntry, member: ControllerMember): string {
  return `controller-${basename(entry.dir)}/${basename(member['data-dir'])}`
}

/**
 * `member` (made by newMember on this host, its key in its local directory) placed on
 * `placement` instead: its port, address and data directory are the other host's. It is
 * started there and its record (host, key, remote directory, pid) filled in.
 */
export async function startRemoteMember (entry: ControllerEntry, member: NewMember, { placement, sshKeyFile }: ControllerPlacement, options: SpawnOptions): Promise<void> {
  const network = readControllerNetwork(entry.dir)
  const n = Number(basename(member['data-dir']).slice(1))
  member.port = (network.port ?? remoteControllerPortBase) + n
  const address = placementAddress(placement)
  member.addresses = [`${hostMultiaddr(address)}/tcp/${member.port}/p2p/${member['peer-id']}`]
  const agentKey = readFileSync(join(member['data-dir'], 'agent.key'))
  const local = { ...member }
  member.host = placement
  if (sshKeyFile !== undefined) member['ssh-key-file'] = resolve(sshKeyFile)
  const manual = provider(entry, sshKeyFile)
  try {
    const started = await manual.startController({
      placement,
      dirName: dirName(entry, local),
      member: {
        agentKey,
        networkKey: readFileSync(join(entry.dir, 'swarm.key')),
        command: dir => ['node', 'dist/cantripd-stub.mjs', ...controllerArgs({ ...local, 'data-dir': dir }, options, {
          networkKey: `${dir}/swarm.key`,
          listen: `/ip4/0.0.0.0/tcp/${member.port}`,
          advertise: address,
          machinesDir: `${dir.slice(0, dir.lastIndexOf('/'))}/machines`
        })],
        // The same CANTRIP_* settings a member on this host keeps in its launch record.
        env: keptEnvironment(process.env)
      }
    })
    member['data-dir'] = started.dir
    member.pid = started.pid
  } finally {
    await manual.close()
  }
}

/**
 * Starts the agent of a machine added over ssh again on its host, from the `run.sh` kept
 * there (`cantrip start-agent N`), reached with the key it was added with; its pid there,
 * and whether it ran already.
 */
export async function restartSshMachine (entry: ControllerEntry, placement: string, machineId: string, sshKeyFile: string | undefined): Promise<{ pid: number, already: boolean }> {
  const manual = provider(entry, undefined)
  try {
    return await manual.restartMachine(placement, machineId, sshKeyFile)
  } finally {
    await manual.close()
  }
}

/** Starts a member on another host again from what it kept there (`cantrip start-agent`); its pid there, and whether it ran already. */
export async function restartRemoteMember (entry: ControllerEntry, member: ControllerMember): Promise<{ pid: number, already: boolean }> {
  const manual = provider(entry, member['ssh-key-file'])
  try {
    return await manual.startController({ placement: member.host!, dirName: dirName(entry, member) })
  } finally {
    await manual.close()
  }
}

/**
 * Stops a member on another host and removes its directory there; with `purge`
 * (destroy-controller) the host's controller directory and the machines its members
 * started go too, and the hosts that host's manual provider knew are answered (JSON).
 */
export async function stopRemoteMember (entry: ControllerEntry, member: ControllerMember, purge: boolean): Promise<string | undefined> {
  const manual = provider(entry, member['ssh-key-file'])
  try {
    return await manual.stopController(member.host!, dirName(entry, member), purge)
  } finally {
    await manual.close()
  }
}
