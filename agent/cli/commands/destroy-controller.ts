/**
 * `cantrip destroy-controller NAME --no-prompt`: stops everything the controller runs on
 * this host and removes its directory — the controllers first (so their provisioner and
 * watchdog restart nothing), then every machine agent's process group, then the unit
 * workloads by their pid files, in every model — and forgets it. Processes are found by pid and killed
 * only while their command line still names this controller's directory, so a reused
 * pid is never hit. Machines added over ssh (the manual provider's hosts, with the keys
 * they were added with) are stopped there, and their agent code removed, as are controller
 * members on other hosts (`enable-ha --to`, over ssh) and what they put there; isolated local
 * machines' network namespaces and their bridge go last.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { InvalidInputError } from '../../../runtime/errors.ts'
import type { RegisterCommand } from '../cli-context.ts'
import { controllerMemberName, forgetController, readControllers, type ControllerEntry, type ControllerMember } from '../cli-home.ts'
import { stopRemoteMember } from '../remote-controller.ts'
import { progress } from '../progress.ts'
import { removeAgentUnit } from '../../systemd-unit.ts'
import { readControllerNetwork } from '../controller-network.ts'
import { createManualProvider } from '../../create-manual-provider.ts'
import { NetnsMachineNetwork } from '../../netns-machine-network.ts'
import { ask } from '../ask.ts'
import { processCmdline as cmdline, stopOwnedProcess as stop } from '../stop-process.ts'

const component = 'cantrip destroy-controller'

export const registerDestroyController: RegisterCommand = (program, context) => {
  program.command('destroy-controller')
    .description('stop every process of a controller on this host and remove its data')
    .argument('<name>', 'controller name')
    .option('--no-prompt', 'do not ask for confirmation (required when not on a terminal)')
    .action(async (name: string, options: { prompt: boolean }) => {
      const file = readControllers()
      const entry = file.controllers[name]
      if (entry === undefined) throw new InvalidInputError(component, `a known controller (${Object.keys(file.controllers).join(', ') || 'none'})`, name)
      if (options.prompt) {
        if (process.stdin.isTTY !== true) throw new InvalidInputError(component, '--no-prompt when not on a terminal', 'no terminal to ask')
        const answer = await ask(`This destroys controller "${name}", its machines and their units. Continue? (y/N) `)
        if (!/^y(es)?$/i.test(answer.trim())) throw new Error(`${component}: aborted`)
      }
      const step = progress(context, `destroying controller "${name}"`)
      const owned = (pid: number): boolean => cmdline(pid).includes(entry.dir)
      step.update('stopping controllers')
      // Units first (disabled and stopped), so systemd restarts none of them; then every process, removed members' too.
      const members = [...entry.controllers, ...(entry['removed-controllers'] ?? [])]
      for (const member of members) if (member.unit !== undefined) removeAgentUnit(member.unit.name, member.unit.scope)
      await Promise.all(members.filter(m => m.host === undefined).map(async member => { await stop(member.pid, owned, false) }))
      // Members on other hosts are stopped there over ssh; the hosts their manual providers knew are cleaned up below.
      const remoteHosts = await stopRemoteMembers(entry, members, text => { context.err(`${component}: ${text}`) })
      step.update('stopping machine agents')
      const agents = machineDirs(join(entry.dir, 'machines'))
      await Promise.all(agents.map(async d => {
        const pid = pidIn(join(d, 'agent.pid'))
        if (pid !== undefined) await stop(pid, owned, true)
      }))
      step.update('stopping workloads')
      for (const d of agents) for (const pid of workloadPids(join(d, 'agent'))) await stop(pid, () => true, false)
      step.update('stopping machines on other hosts')
      const remote = await stopManualMachines(join(entry.dir, 'machines'), remoteHosts, text => { context.err(`${component}: ${text}`) })
      const network = readControllerNetwork(entry.dir)
      if (network.machineNetwork !== undefined) new NetnsMachineNetwork(network.machineNetwork).removeAll()
      rmSync(entry.dir, { recursive: true, force: true })
      forgetController(name)
      step.done(`Destroyed controller "${name}": ${entry.controllers.length} controller${entry.controllers.length === 1 ? '' : 's'} and ${agents.length + remote} machine agent${agents.length + remote === 1 ? '' : 's'} stopped, ${entry.dir} removed`)
    })
}

/**
 * Every manual provider state file under the machines dir (the default model's and each
 * other model's): every agent it lists is stopped over ssh and the hosts' code removed.
 * A host that cannot be reached is named, not waited for.
 */
async function stopManualMachines (machines: string, adopted: readonly string[], warn: (text: string) => void): Promise<number> {
  if (!existsSync(machines) && adopted.length === 0) return 0
  const homes = existsSync(machines) ? [machines, ...readdirSync(machines).filter(d => d.startsWith('m-')).map(d => join(machines, d))] : []
  let stopped = 0
  for (const [i, home] of [...homes, machines].entries()) {
    const stateFile = join(home, 'manual-hosts.json')
    // Last, the hosts that members on other hosts knew (a machine added while one of them led), on a state file of their own.
    const others = i === homes.length
    if (others ? adopted.length === 0 : !existsSync(stateFile)) continue
    const manual = createManualProvider({ stateFile: others ? join(machines, 'adopted-manual-hosts.json') : stateFile })
    if (others) for (const state of adopted) manual.adoptHosts(state)
    try {
      stopped += await manual.destroyAll()
    } catch (error) {
      warn(`cannot clean up the machines added over ssh (${stateFile}): ${error instanceof Error ? error.message : String(error)}`)
    } finally {
      await manual.close()
    }
  }
  return stopped
}

/** Each member on another host stopped and removed there (purged: its host's controller directory too); the manual host lists they kept. */
async function stopRemoteMembers (entry: ControllerEntry, members: readonly ControllerMember[], warn: (text: string) => void): Promise<string[]> {
  const states: string[] = []
  for (const member of members.filter(m => m.host !== undefined)) {
    try {
      const state = await stopRemoteMember(entry, member, true)
      if (state !== undefined) states.push(state)
    } catch (error) {
      warn(`cannot stop controller ${controllerMemberName(member)} on ${member.host!.slice('ssh:'.length)}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  return states
}

/** Every machine's directory: the default model's `machine-N` and the other models' `m-<name>/machine-N` (modelMachinesHome). */
function machineDirs (machines: string): string[] {
  if (!existsSync(machines)) return []
  const entries = readdirSync(machines)
  const own = entries.filter(d => d.startsWith('machine-')).map(d => join(machines, d))
  const others = entries.filter(d => d.startsWith('m-')).flatMap(m => readdirSync(join(machines, m)).filter(d => d.startsWith('machine-')).map(d => join(machines, m, d)))
  return [...own, ...others]
}

function pidIn (file: string): number | undefined {
  if (!existsSync(file)) return undefined
  const pid = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0])
  return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined
}

/** Unit workloads record their pids in `<agent>/agents/<unit>/state/*.pid`. */
function workloadPids (agentDir: string): number[] {
  const agents = join(agentDir, 'agents')
  if (!existsSync(agents)) return []
  const pids: number[] = []
  for (const unit of readdirSync(agents)) {
    const state = join(agents, unit, 'state')
    if (!existsSync(state)) continue
    for (const f of readdirSync(state).filter(n => n.endsWith('.pid'))) {
      const pid = pidIn(join(state, f))
      if (pid !== undefined) pids.push(pid)
    }
  }
  return pids
}
