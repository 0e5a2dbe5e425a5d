/**
 * `cantrip enable-ha [-n 3|5|7]`: grows the current controller group to N members, as
 * Juju's `enable-ha` does. Each new member starts as a detached `cantripd --join` (a
 * controller with an empty store that waits for the leader), then the leader adds it as a
 * Raft voter (`add-controller`, admins only) and the command waits until its commit lag
 * is 0 before the next one: with one voter added at a time the group keeps a quorum
 * throughout. Each member is written to controllers.yaml (atomically) once it votes; a
 * member that could not be added is stopped and its directory removed, so nothing is left
 * half-applied.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { InvalidInputError } from '../../../runtime/errors.ts'
import { peerIdOfKey, readPeerKey } from '../../mesh/peer-identity.ts'
import type { CliContext, RegisterCommand } from '../cli-context.ts'
import { controllerEntry, readControllers, writeControllers, type ControllerEntry } from '../cli-home.ts'
import type { Connection } from '../connection.ts'
import { controllerGroupSizeMax, newMember, spawnController, validGroupSize, type NewMember } from '../controller-process.ts'
import { groupStatus } from '../group-status.ts'
import { progress, type Progress } from '../progress.ts'

const component = 'cantrip enable-ha'
/** How long a new member may take to start and answer, to be added, and to catch up. */
const startTimeoutMs = 120_000
const addTimeoutMs = 60_000
const catchUpTimeoutMs = 120_000
const pollMs = 250

export const registerEnableHa: RegisterCommand = (program, context) => {
  program.command('enable-ha')
    .description('grow the controller group to N members (odd, at most 7), one voter at a time')
    .option('-n <n>', 'controllers wanted in the group (3, 5 or 7)', '3')
    .option('-c, --controller <name>', 'controller (default: the current one)')
    .action(async (options: { n: string, controller?: string }) => {
      const { name, entry } = controllerEntry(options.controller)
      const wanted = Number(options.n)
      const have = entry.controllers.length
      if (!validGroupSize(wanted)) throw new InvalidInputError(component, `-n as an odd number from 1 to ${controllerGroupSizeMax}`, options.n)
      if (wanted <= have) throw new InvalidInputError(component, `-n above the ${have} member${have === 1 ? '' : 's'} controller "${name}" has`, options.n)
      const connection = await context.connect(name)
      // The controller group is the default model's Raft group (other models keep their founding members).
      connection.useModel('default')
      await enableHa(context, connection, name, entry, wanted)
    })
}

async function enableHa (context: CliContext, connection: Connection, name: string, entry: ControllerEntry, wanted: number): Promise<void> {
  const step = progress(context, `enabling HA for controller "${name}": ${entry.controllers.length} → ${wanted} members`)
  const admin = peerIdOfKey(await readPeerKey(join(entry.dir, 'admin.key')))
  const added: string[] = []
  while (entry.controllers.length < wanted) {
    const member = await newMember(entry.dir)
    const label = `c${entry.controllers.length} (${member['peer-id'].slice(-8)})`
    try {
      step.update(`starting ${label}`)
      spawnController(member, {
        dir: entry.dir,
        controllers: [...entry.controllers.map(m => m['peer-id']), member['peer-id']],
        seeds: entry.controllers.flatMap(m => m.addresses),
        admin,
        join: true,
        ...(entry.inspect === true ? { inspect: true } : {})
      })
      await waitUntil(step, `${label} to answer`, startTimeoutMs, async () => {
        const reply = await connection.apiTo(member['peer-id'], { op: 'controller-status' }, { address: member.addresses[0]!, timeoutMs: 3_000 })
        return reply.ok
      })
      step.update(`adding ${label} as a voter`)
      await addVoter(connection, entry, member, step, label)
    } catch (error) {
      // A request that timed out may still have added it: a voter is kept (and recorded), never killed.
      if (await isVoter(connection, entry, member['peer-id'])) {
        const { port: _port, ...recorded } = member
        entry.controllers.push(recorded)
        record(name, entry)
      } else {
        abandon(member)
      }
      throw error
    }
    // It votes now: recorded before the wait, so the CLI reaches it whatever follows.
    const { port: _port, ...recorded } = member
    entry.controllers.push(recorded)
    record(name, entry)
    added.push(label)
    step.update(`waiting for ${label} to catch up`)
    await waitUntil(step, `${label} to catch up`, catchUpTimeoutMs, async () => {
      const group = await groupStatus(connection, entry)
      return group.leader?.progress[member['peer-id']]?.lag === 0
    })
  }
  step.done(`Controller "${name}" has ${wanted} members: added ${added.join(', ')}`)
}

/** Asks the leader (following its hint) to add `member`; bounded by addTimeoutMs. */
async function addVoter (connection: Connection, entry: ControllerEntry, member: NewMember, step: Progress, label: string): Promise<void> {
  let last = 'no leader answered'
  await waitUntil(step, `the leader to add ${label}`, addTimeoutMs, async () => {
    const group = await groupStatus(connection, entry)
    if (group.leader === undefined) {
      last = 'no leader among the members'
      return false
    }
    const reply = await connection.apiTo(group.leader.id, { op: 'add-controller', peer: member['peer-id'] }, { timeoutMs: addTimeoutMs / 2 })
    if (!reply.ok) last = reply.error
    return reply.ok
  }, () => last)
}

async function isVoter (connection: Connection, entry: ControllerEntry, peer: string): Promise<boolean> {
  try {
    return (await groupStatus(connection, entry)).leader?.voters.includes(peer) ?? false
  } catch {
    return false
  }
}

/** The process of a member that never became a voter is stopped and its directory removed. */
function abandon (member: NewMember): void {
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
