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
 * `cantrip start-agent cN` starts it again over ssh from its kept `run.sh`;
 * `destroy-controller` stops it and removes what it put there.
 */
import { readFileSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { InvalidInputError } from '../../runtime/errors.ts'
import { createManualProvider } from '../create-manual-provider.ts'
import type { ManualProvider } from '../../providers/manual-provider.ts'
import type { ControllerEntry, ControllerMember } from './cli-home.ts'
import { controllerArgs, type NewMember, type SpawnOptions } from './controller-process.ts'
import { hostMultiaddr, readControllerNetwork } from './controller-network.ts'

/** The first member's port on another host when the group has no fixed port (Juju's API port). */
export const remoteControllerPortBase = 17070
const sshPlacement = /^ssh:([A-Za-z_][A-Za-z0-9_.-]{0,31})@([A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?$/
const loopback = /^(127\.|::1$|localhost$)/

/**
 * `--to` as given: a comma-separated list of `ssh:user@host[:port]`, at most one per
 * member to add; one clear line for anything else.
 */
export function parseControllerPlacements (component: string, to: string | undefined, adding = Infinity): string[] {
  if (to === undefined) return []
  const placements = to.split(',').map(p => p.trim())
  for (const placement of placements) {
    if (!sshPlacement.test(placement)) throw new InvalidInputError(component, '--to as a comma-separated list of ssh:user@host[:port]', placement === '' ? to : placement)
  }
  if (placements.length > adding) throw new InvalidInputError(component, `at most ${adding} placement${adding === 1 ? '' : 's'} in --to (the members to add)`, String(placements.length))
  return placements
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
export async function startRemoteMember (entry: ControllerEntry, member: NewMember, placement: string, sshKeyFile: string | undefined, options: SpawnOptions): Promise<void> {
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
        })]
      }
    })
    member['data-dir'] = started.dir
    member.pid = started.pid
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
