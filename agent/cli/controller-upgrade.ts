/**
 * The rolling restart of `cantrip upgrade-controller` (commands/upgrade-controller.ts):
 * the controller members of this host move to a new agent version one at a time, so the
 * group never has more than one member down and keeps its quorum (and its writes)
 * throughout, as etcd's and Juju's HA controllers are upgraded member by member.
 *
 * For each member, followers first and the leader last (one election, not one per member):
 *
 *  1. every member answers and a leader leads (else nothing is touched);
 *  2. the bundle is unpacked into `<data dir>/tools/<version>`, checked against its
 *     sha256, and `current` switched to it with the switch recorded
 *     (agent/tools/agent-tools-dir.ts: the layout machine agents use);
 *  3. the member is stopped (SIGTERM by pid, or systemctl stop) and started again from its
 *     launch record through the agent launcher (agent/cantripd-stub.ts), which runs the
 *     version `current` names;
 *  4. it must answer with the new version and rejoin with commit lag 0 at the leader
 *     (its health check) before the next member is touched; then the switch stands.
 *
 * A member that does not come back in time is stopped, switched back to the version it
 * ran and started again, and the upgrade stops there with one line saying so: the
 * members not reached keep their version, and running the command again resumes.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { CantripError } from '../../runtime/errors.ts'
import { launchThroughLauncher, readAgentLaunch, startAgentProcess, writeAgentLaunch, type AgentLaunch } from '../agent-launch.ts'
import { unpackCharm } from '../charm/charm-archive.ts'
import { installAgentUnit, stopAgentUnit } from '../systemd-unit.ts'
import { abandonUpgrade, beginUpgrade, completeUpgrade, currentVersion, hasVersion, versionDir } from '../tools/agent-tools-dir.ts'
import type { AgentBundle } from '../tools/agent-bundle.ts'
import { controllerMemberName, readControllers, writeControllers, type ControllerEntry, type ControllerMember } from './cli-home.ts'
import type { Connection } from './connection.ts'
import { groupStatus, type GroupStatus } from './group-status.ts'
import type { Progress } from './progress.ts'
import { processAlive, processRunsFrom, stopOwnedProcess } from './stop-process.ts'

const component = 'cantrip upgrade-controller'
/** How long a restarted member may take to answer on the new version and catch up. */
const memberUpgradeTimeoutMs = 120_000
/** How long the group may take to have every member answering before a member is stopped. */
const groupReadyTimeoutMs = 60_000
/** How long a stopped member's process may take to be gone (after SIGKILL, the kernel's part). */
const exitTimeoutMs = 30_000
const pollMs = 250

export class ControllerUpgradeError extends CantripError {
  override name = 'ControllerUpgradeError'
}

export interface ControllerUpgrade {
  /** The controller's name in $CANTRIP_HOME. */
  name: string
  entry: ControllerEntry
  /** To the controllers' default model (the group's own Raft state). */
  connection: Connection
  bundle: AgentBundle
  step: Progress
}

/** Members in the order they are restarted: followers first, the leader last. */
export function upgradeOrder (entry: ControllerEntry, group: GroupStatus, version: string): ControllerMember[] {
  const leader = group.leader?.id
  const pending = entry.controllers.filter((member, i) => group.members[i]?.status?.version !== version)
  return [...pending.filter(m => m['peer-id'] !== leader), ...pending.filter(m => m['peer-id'] === leader)]
}

/** Restarts each member of `order` into the bundle's version, one at a time; answers their names. */
export async function upgradeMembers (run: ControllerUpgrade, order: readonly ControllerMember[]): Promise<string[]> {
  const done: string[] = []
  for (const member of order) {
    await upgradeMember(run, member)
    done.push(controllerMemberName(member))
  }
  return done
}

async function upgradeMember (run: ControllerUpgrade, member: ControllerMember): Promise<void> {
  const label = controllerMemberName(member)
  const { version } = run.bundle
  const dataDir = member['data-dir']
  run.step.update(`waiting for every member to answer before ${label} is restarted`)
  const before = await everyMemberUp(run, label)
  const from = currentVersion(dataDir) ?? before
  run.step.update(`unpacking agent ${version} for ${label}`)
  await installVersion(dataDir, run.bundle, label)
  const launch = launcherRecord(dataDir, version, label)
  beginUpgrade(dataDir, from, version)
  run.step.update(`restarting ${label} into agent ${version}`)
  await stopMember(member)
  startMember(run, member, launch)
  try {
    run.step.update(`waiting for ${label} (pid ${member.pid}) to answer on ${version} and catch up`)
    await untilHealthy(run, member, version)
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    await rollBack(run, member, launch, from, `${label} did not come back on agent ${version}: ${why}`)
    throw new ControllerUpgradeError(`${component}: controller ${label} did not come back on agent ${version} within ${memberUpgradeTimeoutMs / 1000} s (${why}); it is back on ${from}, members not yet upgraded keep their version; see ${join(dataDir, 'cantripd.log')}`, { cause: error })
  }
  completeUpgrade(dataDir)
}

/**
 * Waits until every member answers and one leads: only then may one stop. Answers the
 * version `label` reports (the one it goes back to should the new one not come up).
 */
async function everyMemberUp (run: ControllerUpgrade, label: string): Promise<string> {
  const until = Date.now() + groupReadyTimeoutMs
  let missing = 'no answer'
  while (Date.now() < until) {
    const group = await groupStatus(run.connection, run.entry, 3_000).catch(() => undefined)
    const down = group === undefined ? [] : run.entry.controllers.filter((_, i) => group.members[i]?.status === undefined)
    const own = group?.members[run.entry.controllers.findIndex(m => controllerMemberName(m) === label)]?.status?.version
    if (group?.leader !== undefined && down.length === 0 && typeof own === 'string') return own
    missing = group === undefined ? 'no member answered' : down.length > 0 ? `${down.map(controllerMemberName).join(', ')} not answering` : 'no leader'
    await sleep(pollMs)
  }
  throw new ControllerUpgradeError(`${component}: expected every member of controller "${run.name}" to answer before ${label} is restarted (one member at a time is down during an upgrade), got ${missing}`)
}

/** The bundle unpacked (checked against its sha256) into the member's tools directory, unless it is there whole. */
async function installVersion (dataDir: string, bundle: AgentBundle, label: string): Promise<void> {
  const dir = versionDir(dataDir, bundle.version)
  if (hasVersion(dataDir, bundle.version)) return
  // A half-written directory from an interrupted run is replaced, never trusted.
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dirname(dir), { recursive: true })
  await unpackCharm(bundle.bytes, bundle.hash, dir)
  if (!hasVersion(dataDir, bundle.version)) {
    rmSync(dir, { recursive: true, force: true })
    throw new ControllerUpgradeError(`${component}: controller ${label}: expected agent bundle sha256 ${bundle.hash} to hold agent ${bundle.version} (package.json and dist/cantripd.mjs), got another`)
  }
}

/** The member's launch record, through the launcher (rewritten once for a member started before controllers used it). */
function launcherRecord (dataDir: string, version: string, label: string): AgentLaunch {
  const launch = readAgentLaunch(dataDir)
  if (launch === undefined) throw new ControllerUpgradeError(`${component}: expected controller ${label}'s launch record ${join(dataDir, 'launch.json')}, got none`)
  const through = launchThroughLauncher(launch, join(versionDir(dataDir, version), 'dist', 'cantripd-stub.mjs'))
  if (through !== launch) writeAgentLaunch(dataDir, through)
  return through
}

/** Stops the member (its unit, or SIGTERM then SIGKILL by pid) and waits until its process is gone, so the new one finds its port and store free. */
async function stopMember (member: ControllerMember): Promise<void> {
  if (member.unit !== undefined) stopAgentUnit(member.unit.name, member.unit.scope)
  else await stopOwnedProcess(member.pid, pid => processRunsFrom(pid, member['data-dir']), false)
  const until = Date.now() + exitTimeoutMs
  while (member.pid > 1 && processAlive(member.pid) && processRunsFrom(member.pid, member['data-dir'])) {
    if (Date.now() > until) throw new ControllerUpgradeError(`${component}: expected controller ${controllerMemberName(member)} (pid ${member.pid}) to exit within ${exitTimeoutMs / 1000} s of SIGKILL, got it still running`)
    await sleep(pollMs)
  }
}

/** Starts the member from its launch record (the unit rewritten with it) and records its new pid. */
function startMember (run: ControllerUpgrade, member: ControllerMember, launch: AgentLaunch): void {
  member.pid = member.unit === undefined ? startAgentProcess(launch) : installAgentUnit(launch, member.unit.scope)
  const file = readControllers()
  const recorded = file.controllers[run.name]?.controllers.find(m => m['peer-id'] === member['peer-id'])
  if (recorded !== undefined) recorded.pid = member.pid
  writeControllers(file)
}

/** The member's health check: it answers on `version` and the leader sees it caught up (commit lag 0). */
async function untilHealthy (run: ControllerUpgrade, member: ControllerMember, version: string): Promise<void> {
  const until = Date.now() + memberUpgradeTimeoutMs
  const address = member.addresses[0]
  let last = 'no answer'
  while (Date.now() < until) {
    if (member.unit === undefined && !processAlive(member.pid)) throw new ControllerUpgradeError(`its process ${member.pid} exited`)
    try {
      const own = await run.connection.apiTo(member['peer-id'], { op: 'controller-status' }, { timeoutMs: 3_000, ...(address === undefined ? {} : { address }) })
      if (!own.ok) last = own.error
      else if (own.version !== version) last = `it answers on agent ${String(own.version)}`
      else {
        const lag = (await groupStatus(run.connection, run.entry, 3_000)).leader?.progress[member['peer-id']]?.lag
        if (lag === 0) return
        last = lag === undefined ? 'no leader reports its progress' : `commit lag ${lag}`
      }
    } catch (error) {
      last = error instanceof Error ? error.message : String(error)
    }
    await sleep(pollMs)
  }
  throw new ControllerUpgradeError(last)
}

/**
 * The new version did not come up: the member is stopped, switched back, started on the
 * version it ran and waited for (bounded), so the group has all its members again before
 * the command says why it stopped.
 */
async function rollBack (run: ControllerUpgrade, member: ControllerMember, launch: AgentLaunch, from: string, why: string): Promise<void> {
  await stopMember(member).catch(() => {})
  abandonUpgrade(member['data-dir'], why)
  if (!existsSync(member['data-dir'])) return
  startMember(run, member, launch)
  run.step.update(`restarting ${controllerMemberName(member)} on ${from}`)
  await untilHealthy(run, member, from).catch(() => {})
}

async function sleep (ms: number): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, ms))
}
