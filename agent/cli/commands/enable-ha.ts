/**
 * `cantrip enable-ha [-n 3|5|7]`: makes the current controller group N members that work,
 * as Juju's `enable-ha` does (juju/juju cmd/juju/commands/enableha.go, state/enableha.go):
 * members that answer are maintained, members that are down are removed, and new ones are
 * added until there are N (without -n: the group's own size, at least 3), so it both grows
 * a group and replaces lost members. The plan is agent/cli/ha-plan.ts.
 *
 * Every step is one Raft configuration change, so the group keeps a quorum throughout:
 * a down member is removed first (`remove-controller`: the leader takes the vote of a
 * voter it cannot reach), then its replacement starts as a detached `cantripd --join` (a
 * controller with an empty store that waits for the leader), the leader adds it as a voter
 * (`add-controller`) and the command waits until its commit lag is 0 before the next step.
 * Each change is written to controllers.yaml (atomically) as soon as it is made — a
 * removed member moves to `removed-controllers` — and a new member that could not be added
 * is stopped and its directory removed, so nothing is left half-applied.
 *
 * `--to ssh:user@h2,ssh:user@h3` places the new members on other hosts, in order, as
 * Juju's `enable-ha --to` takes placement directives (a machine id is the host that
 * machine was added on over ssh, with its key): each is started there over ssh
 * with this installation's agent bundle (agent/cli/remote-controller.ts), with the key of
 * `--private-key` if given; members beyond the list run on this host.
 */
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { peerIdOfKey, readPeerKey } from '../../mesh/peer-identity.ts'
import type { CliContext, RegisterCommand } from '../cli-context.ts'
import { controllerEntry, controllerMemberName, readControllers, writeControllers, type ControllerEntry, type ControllerMember } from '../cli-home.ts'
import type { Connection } from '../connection.ts'
import { newMember, spawnController, type NewMember, type SpawnOptions } from '../controller-process.ts'
import { checkReachableGroup, parseControllerPlacements, resolveControllerPlacements, startRemoteMember, stopRemoteMember, type ControllerPlacement } from '../remote-controller.ts'
import { InvalidInputError } from '../../../runtime/errors.ts'
import { groupStatus } from '../group-status.ts'
import { haPlanLines, planHa, type HaPlan, type PlannedMember } from '../ha-plan.ts'
import { progress, type Progress } from '../progress.ts'
import { removeAgentUnit } from '../../systemd-unit.ts'

const component = 'cantrip enable-ha'
/** How long a new member may take to start and answer, to be added, and to catch up; a removal, to be made. */
const startTimeoutMs = 120_000
const changeTimeoutMs = 60_000
const catchUpTimeoutMs = 120_000
const pollMs = 250

interface Run {
  context: CliContext
  connection: Connection
  name: string
  entry: ControllerEntry
  step: Progress
  /** `--to`: where the next new members run, in order (taken as they are added); the rest run on this host. */
  placements: ControllerPlacement[]
}

export const registerEnableHa: RegisterCommand = (program, context) => {
  program.command('enable-ha')
    .description('make the controller group N working members (odd, at most 7): add members, replace those that are down')
    .option('-n <n>', 'controllers wanted in the group (3, 5 or 7; default: its size, at least 3)')
    .option('--to <placements>', 'where the new members run: ssh:user@host[:port] or a machine added over ssh, comma-separated, one per member in order (the rest: this host)')
    .option('--private-key <file>', 'the ssh private key that reaches the --to hosts (default: ssh\'s own)')
    .option('-c, --controller <name>', 'controller (default: the current one)')
    .action(async (options: { n?: string, to?: string, privateKey?: string, controller?: string }) => {
      const { name, entry } = controllerEntry(options.controller)
      // Checked before anything is asked of the group.
      planHa(name, entry.controllers.map(m => ({ name: controllerMemberName(m), peer: m['peer-id'], up: true })), options.n)
      parseControllerPlacements(component, options.to)
      if (options.to !== undefined) checkReachableGroup(component, entry)
      if (options.privateKey !== undefined && !existsSync(options.privateKey)) throw new InvalidInputError(component, '--private-key as an existing key file', options.privateKey)
      const connection = await context.connect(name)
      // The controller group is the default model's Raft group (other models keep their founding members).
      connection.useModel('default')
      const group = await groupStatus(connection, entry)
      const plan = planHa(name, entry.controllers.map((m, i) => ({ name: controllerMemberName(m), peer: m['peer-id'], up: group.members[i]?.status !== undefined })), options.n)
      const given = parseControllerPlacements(component, options.to, plan.add)
      const placements = await resolveControllerPlacements(component, given, options.privateKey, async () => await connection.model())
      const step = progress(context, `enabling HA for controller "${name}": ${plan.maintain.length} of ${entry.controllers.length} members up, ${plan.wanted} wanted`)
      await enableHa({ context, connection, name, entry, step, placements }, plan)
    })
}

async function enableHa (run: Run, plan: HaPlan): Promise<void> {
  const admin = peerIdOfKey(await readPeerKey(join(run.entry.dir, 'admin.key')))
  const added: string[] = []
  const removed: string[] = []
  // Each lost member is replaced before the next is removed: the group is never smaller than it must be.
  for (const lost of plan.remove) {
    await removeMember(run, lost)
    removed.push(lost.name)
    if (run.entry.controllers.length < plan.wanted) added.push(await addMember(run, admin))
  }
  while (run.entry.controllers.length < plan.wanted) added.push(await addMember(run, admin))
  run.step.done(haPlanLines(plan.maintain.map(m => m.name), added, removed))
}

/** Asks the leader to take the vote of `lost` (one configuration change), then records it as removed. */
async function removeMember (run: Run, lost: PlannedMember): Promise<void> {
  const label = `${lost.name} (${lost.peer.slice(-8)})`
  run.step.update(`removing ${label}, which is down, from the voters`)
  await askLeader(run, `the leader to remove ${label}`, { op: 'remove-controller', peer: lost.peer })
  const member = run.entry.controllers.find(m => m['peer-id'] === lost.peer)
  run.entry.controllers = run.entry.controllers.filter(m => m['peer-id'] !== lost.peer)
  if (member !== undefined) run.entry['removed-controllers'] = [...(run.entry['removed-controllers'] ?? []), { ...member, 'removed-at': new Date().toISOString() }]
  record(run.name, run.entry)
}

/** Starts a new member, has the leader add it as a voter and waits for it to catch up; returns its name. */
async function addMember (run: Run, admin: string): Promise<string> {
  const { entry, connection, step } = run
  const taken = [...entry.controllers, ...(entry['removed-controllers'] ?? [])].map(controllerMemberName)
  const member = await newMember(entry.dir, taken)
  const name = controllerMemberName(member)
  const label = `${name} (${member['peer-id'].slice(-8)})`
  const placement = run.placements.shift()
  try {
    const options: SpawnOptions = {
      dir: entry.dir,
      controllers: [...entry.controllers.map(m => m['peer-id']), member['peer-id']],
      seeds: entry.controllers.flatMap(m => m.addresses),
      admin,
      join: true,
      ...(entry.inspect === true ? { inspect: true } : {}),
      ...(entry['inspect-data'] === true ? { inspectData: true } : {}),
      ...(entry.systemd === true && placement === undefined ? { systemd: true } : {})
    }
    if (placement === undefined) {
      step.update(`starting ${label}`)
      spawnController(member, options)
    } else {
      step.update(`starting ${label} on ${placement.placement.slice('ssh:'.length)}`)
      await startRemoteMember(entry, member, placement, options)
    }
    await waitUntil(step, `${label} to answer`, startTimeoutMs, async () => {
      const reply = await connection.apiTo(member['peer-id'], { op: 'controller-status' }, { address: member.addresses[0]!, timeoutMs: 3_000 })
      return reply.ok
    })
    step.update(`adding ${label} as a voter`)
    await askLeader(run, `the leader to add ${label}`, { op: 'add-controller', peer: member['peer-id'] })
  } catch (error) {
    // A request that timed out may still have added it: a voter is kept (and recorded), never killed.
    if (await isVoter(run, member['peer-id'])) keep(run, member)
    else await abandon(run.entry, member)
    throw error
  }
  // It votes now: recorded before the wait, so the CLI reaches it whatever follows.
  keep(run, member)
  step.update(`waiting for ${label} to catch up`)
  await waitUntil(step, `${label} to catch up`, catchUpTimeoutMs, async () => {
    const group = await groupStatus(connection, entry)
    return group.leader?.progress[member['peer-id']]?.lag === 0
  })
  return name
}

/** Sends a membership change to the leader (following its hint), until it is made; bounded by changeTimeoutMs. */
async function askLeader (run: Run, what: string, request: { op: 'add-controller' | 'remove-controller', peer: string }): Promise<void> {
  let last = 'no leader answered'
  await waitUntil(run.step, what, changeTimeoutMs, async () => {
    const group = await groupStatus(run.connection, run.entry)
    if (group.leader === undefined) {
      last = 'no leader among the members'
      return false
    }
    const reply = await run.connection.apiTo(group.leader.id, request, { timeoutMs: changeTimeoutMs / 2 })
    if (!reply.ok) last = reply.error
    return reply.ok
  }, () => last)
}

async function isVoter (run: Run, peer: string): Promise<boolean> {
  try {
    return (await groupStatus(run.connection, run.entry)).leader?.voters.includes(peer) ?? false
  } catch {
    return false
  }
}

function keep (run: Run, member: NewMember): void {
  const { port: _port, ...recorded } = member
  run.entry.controllers.push(recorded satisfies ControllerMember)
  record(run.name, run.entry)
}

/** The process of a member that never became a voter is stopped and its directory removed (on its host too). */
async function abandon (entry: ControllerEntry, member: NewMember): Promise<void> {
  if (member.host !== undefined) {
    await stopRemoteMember(entry, member, false).catch(() => {})
    rmSync(join(entry.dir, controllerMemberName(member)), { recursive: true, force: true })
    return
  }
  // A unit first, or systemd would start the killed process again.
  if (member.unit !== undefined) removeAgentUnit(member.unit.name, member.unit.scope)
  if (member.pid > 1) {
    try { process.kill(member.pid, 'SIGKILL') } catch { /* already gone */ }
  }
  rmSync(member['data-dir'], { recursive: true, force: true })
}

/** The entry as it is now, written whole (controllers.yaml is replaced atomically). */
function record (name: string, entry: ControllerEntry): void {
  const file = readControllers()
  file.controllers[name] = entry
  writeControllers(file)
}

async function waitUntil (step: Progress, what: string, timeoutMs: number, check: () => Promise<boolean>, why: () => string = () => ''): Promise<void> {
  const until = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < until) {
    try {
      if (await check()) return
    } catch (error) {
      last = error instanceof Error ? error.message : String(error)
    }
    await new Promise(resolve => setTimeout(resolve, pollMs))
  }
  const reason = why() || last
  step.update(`gave up waiting for ${what}`)
  throw new Error(`${component}: expected ${what} within ${timeoutMs / 1000} s, got ${reason === '' ? 'no answer' : reason}`)
}
