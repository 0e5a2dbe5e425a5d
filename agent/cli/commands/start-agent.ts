/**
 * `cantrip start-agent <cN | machine>`: brings a stopped agent on this host back from its
 * data directory, with the state it kept there — what Juju users do with
 * `juju ssh <machine> sudo systemctl start jujud-machine-<N>` (juju/juju
 * service/systemd/service.go). A controller member (`c1`, as `show-controller` names it)
 * is started from its launch record (`<data dir>/launch.json`, agent/agent-launch.ts), or
 * by `systemctl start` when it runs as a unit; it rejoins the group as the voter it was.
 * A machine of the local provider (`0`, in the current model or `-m`) is started by the
 * local provider's own restart of an instance (same bootstrap file and data directory), as
 * the leader's watchdog would. An agent that runs is left alone.
 *
 * A member on another host (`enable-ha --to ssh:…`), or a machine added over ssh
 * (`add-machine ssh:…`), is started there over ssh, from the `run.sh` it keeps beside its
 * data (agent/cli/remote-controller.ts, providers/agent-run-script.ts).
 *
 * A member whose data is gone cannot come back as itself: the command says so and names
 * `cantrip enable-ha`, which replaces it.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { InvalidInputError } from '../../../runtime/errors.ts'
import { isMachineId } from '../../../runtime/ids.ts'
import { silentLogger } from '../../../runtime/logger.ts'
import { readerOf } from '../../../runtime/model/model-draft.ts'
import { localInstanceDirName, modelMachinesHome } from '../../../providers/local-provider.ts'
import { readAgentLaunch, startAgentProcess } from '../../agent-launch.ts'
import { createLocalProvider } from '../../create-local-provider.ts'
import { identifyProcess } from '../../detached-processes.ts'
import { startAgentUnit } from '../../systemd-unit.ts'
import type { CliContext, RegisterCommand } from '../cli-context.ts'
import { groupMachineNetwork } from '../machine-network-of-group.ts'
import { controllerMemberName, modelTarget, readControllers, writeControllers, type ControllerEntry, type ControllerMember } from '../cli-home.ts'
import type { Connection } from '../connection.ts'
import { openConnection } from '../open-connection.ts'
import { progress } from '../progress.ts'
import { restartRemoteMember, restartSshMachine } from '../remote-controller.ts'
import { processRunsFrom } from '../stop-process.ts'

const component = 'cantrip start-agent'
/** How long a restarted controller may take to answer. */
const answerTimeoutMs = 60_000

export const registerStartAgent: RegisterCommand = (program, context) => {
  program.command('start-agent')
    .description('start a stopped controller (c0, c1, …) or machine agent (0, 1, …) from its data directory, here or over ssh on its host')
    .argument('<agent>', 'a controller member as show-controller names it (c1), or a machine id (2)')
    .option('-c, --controller <name>', 'controller (default: the current one)')
    .option('-m, --model <model>', 'the machine\'s model (default: the current one)')
    .action(async (agent: string, options: { controller?: string, model?: string }) => {
      const target = modelTarget(options.model, options.controller)
      if (/^c\d+$/.test(agent)) {
        await startController(context, target.controller, target.entry, agent)
        return
      }
      if (!isMachineId(agent)) throw new InvalidInputError(component, `a controller member (${memberNames(target.entry)}) or a machine id`, agent)
      await startMachine(context, target.controller, target.entry, target.model, agent)
    })
}

function memberNames (entry: ControllerEntry): string {
  return entry.controllers.map(controllerMemberName).join(', ')
}

/** Whether `pid` is a live process running from `dataDir` (a recycled pid is another program's). */
function runsFrom (pid: number, dataDir: string): boolean {
  return pid > 1 && identifyProcess(pid) !== undefined && processRunsFrom(pid, dataDir)
}

async function startController (context: CliContext, name: string, entry: ControllerEntry, agent: string): Promise<void> {
  const member = entry.controllers.find(m => controllerMemberName(m) === agent)
  if (member === undefined) {
    const removed = entry['removed-controllers']?.some(m => controllerMemberName(m) === agent) === true
    throw new InvalidInputError(component, `a member of controller "${name}" (${memberNames(entry)})${removed ? `; ${agent} was replaced by enable-ha` : ''}`, agent)
  }
  if (member.host !== undefined) {
    await startRemoteController(context, name, entry, member, agent)
    return
  }
  const dataDir = member['data-dir']
  if (runsFrom(member.pid, dataDir)) {
    context.out(`controller ${agent} is already running (pid ${member.pid})`)
    return
  }
  const launch = existsSync(dataDir) ? readAgentLaunch(dataDir) : undefined
  if (launch === undefined) {
    throw new InvalidInputError(component, `controller ${agent}'s data directory ${dataDir} with its launch.json (a member whose data is lost is replaced by "cantrip enable-ha")`, existsSync(dataDir) ? 'no launch.json' : 'no directory')
  }
  const step = progress(context, `starting controller ${agent} of "${name}"`)
  const pid = member.unit === undefined ? startAgentProcess(launch) : startAgentUnit(member.unit.name, member.unit.scope)
  recordPid(name, member, pid)
  step.update(`waiting for ${agent} (pid ${pid}) to answer`)
  await waitForAnswer(entry, member, agent)
  step.done(`started controller ${agent} (pid ${pid})`)
}

/**
 * A member on another host (`enable-ha --to`) is started there over ssh from the command
 * it keeps (`run.sh`), as the manual provider starts a machine agent; one that runs is
 * left alone.
 */
async function startRemoteController (context: CliContext, name: string, entry: ControllerEntry, member: ControllerMember, agent: string): Promise<void> {
  const where = member.host!.slice('ssh:'.length)
  const step = progress(context, `starting controller ${agent} of "${name}" on ${where}`)
  const { pid, already } = await restartRemoteMember(entry, member)
  recordPid(name, member, pid)
  if (already) {
    step.done(`controller ${agent} is already running on ${where} (pid ${pid})`)
    return
  }
  step.update(`waiting for ${agent} (pid ${pid} on ${where}) to answer`)
  await waitForAnswer(entry, member, agent)
  step.done(`started controller ${agent} on ${where} (pid ${pid})`)
}

function recordPid (name: string, member: ControllerMember, pid: number): void {
  member.pid = pid
  const file = readControllers()
  const recorded = file.controllers[name]?.controllers.find(m => m['peer-id'] === member['peer-id'])
  if (recorded !== undefined) recorded.pid = pid
  writeControllers(file)
}

/** Until the member answers `controller-status` itself (asked without the group's quorum check: this may be what restores it). */
async function waitForAnswer (entry: ControllerEntry, member: ControllerMember, agent: string): Promise<void> {
  const connection = await openConnection(entry)
  try {
    const until = Date.now() + answerTimeoutMs
    let last = 'no answer'
    while (Date.now() < until) {
      try {
        const reply = await connection.apiTo(member['peer-id'], { op: 'controller-status' }, { timeoutMs: 3_000, ...(member.addresses[0] === undefined ? {} : { address: member.addresses[0] }) })
        if (reply.ok) return
        last = reply.error
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
      }
      if (member.host === undefined && !runsFrom(member.pid, member['data-dir'])) throw new Error(`${component}: controller ${agent} exited; see ${join(member['data-dir'], 'cantripd.log')}`)
      await new Promise(resolve => setTimeout(resolve, 250))
    }
    throw new Error(`${component}: expected controller ${agent} to answer within ${answerTimeoutMs / 1000} s, got ${last}`)
  } finally {
    await connection.close().catch(() => {})
  }
}

async function startMachine (context: CliContext, controller: string, entry: ControllerEntry, model: string, machine: string): Promise<void> {
  const machines = join(entry.dir, 'machines')
  const home = model === 'default' ? machines : modelMachinesHome(machines, model)
  const dir = join(home, localInstanceDirName(machine))
  if (!existsSync(join(dir, 'token'))) {
    await startSshMachine(context, controller, entry, model, machine, dir)
    return
  }
  // The provider settings the group's controllers give their machines: an isolated machine comes back in its namespace.
  const provider = createLocalProvider({ home, logger: silentLogger, ...groupMachineNetwork(entry), ...(entry.inspect === true ? { extraArgs: ['--inspect', '0', ...(entry['inspect-data'] === true ? ['--inspect-data'] : [])] } : {}) })
  const running = (await provider.allInstances()).find(i => i.machineId === machine && i.status === 'running')
  if (running !== undefined) {
    context.out(`machine ${machine} is already running (${running.message})`)
    return
  }
  const step = progress(context, `starting machine ${machine}'s agent`)
  // The same token as its first start: the provider restarts that instance with its own bootstrap file and data.
  await provider.startInstance({ machineId: machine, token: readFileSync(join(dir, 'token'), 'utf8'), bootstrap: readFileSync(join(dir, 'bootstrap')), constraints: {} })
  const pid = readFileSync(join(dir, 'agent.pid'), 'utf8').trim().split(/\s+/)[0]
  step.done(`started machine ${machine} (pid ${pid})`)
}

/**
 * A machine added over ssh (`add-machine ssh:user@host`) has no instance here: its agent
 * is started on its host over ssh from the `run.sh` kept beside its data, as Juju users
 * run `juju ssh N sudo systemctl start jujud-machine-N`, with the key it was added with.
 */
async function startSshMachine (context: CliContext, controller: string, entry: ControllerEntry, model: string, machine: string, localDir: string): Promise<void> {
  const connection = await openConnection(entry, controller)
  let record
  try {
    connection.useModel(model)
    record = readerOf((await connection.model()).model).machine(machine)
  } finally {
    await connection.close().catch(() => {})
  }
  if (record === undefined) throw new InvalidInputError(component, `a machine of model "${model}"`, machine)
  const placement = record.placement
  if (placement === null || !placement.startsWith('ssh:')) {
    throw new InvalidInputError(component, `a machine of model "${model}" with a local instance on this host (${localDir}) or added over ssh`, `machine ${machine} with neither`)
  }
  const where = placement.slice('ssh:'.length)
  const step = progress(context, `starting machine ${machine}'s agent on ${where}`)
  const { pid, already } = await restartSshMachine(entry, placement, machine, record.privateKey)
  step.done(already ? `machine ${machine} is already running on ${where} (pid ${pid})` : `started machine ${machine} on ${where} (pid ${pid})`)
}
