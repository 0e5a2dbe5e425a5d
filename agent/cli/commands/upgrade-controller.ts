/**
 * `cantrip upgrade-controller [--agent-version X] [--dry-run]`, as Juju 3's (juju/juju
 * cmd/juju/commands/upgradecontroller.go, which upgrades the controller model's agents
 * as upgrade-model does a model's): the controllers move to X, by default the client's
 * own version, whose bundle the client puts into the controllers' agent store; any other
 * version must be there already (`cantrip sync-agent-binary`). The hosted models keep
 * their agent-version: each is upgraded by `upgrade-model`, as in Juju.
 *
 * Unlike Juju's, which returns once the new version is set, the command rolls the
 * members itself, one at a time (agent/cli/controller-upgrade.ts), so the group keeps
 * its quorum; it prints `started upgrade to X`, then the members it upgraded, and
 * `show-controller` and `version --all` show each member's version throughout.
 *
 * Refused, with one line naming the controllers' version, the version wanted and the
 * versions there are: a version below the controllers' ("cannot change version from X
 * to lower version Y", Juju's words), one the store does not hold, a member that does not
 * answer (one member at a time may be down), and a member on another host.
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import { compareAgentVersions, noAgentBinaries, parseAgentVersion, sortAgentVersions } from '../../../runtime/model/agent-binaries.ts'
import { agentPlatform, type AgentBundle } from '../../tools/agent-bundle.ts'
import { AgentVersionError, clientAgentBundle, fetchAgentBinary, putAgentBinary, recordedBinaries, recordedBinary } from '../agent-binaries.ts'
import { cantripVersion, type RegisterCommand } from '../cli-context.ts'
import { controllerEntry, controllerMemberName, readControllers, writeControllers } from '../cli-home.ts'
import type { Connection } from '../connection.ts'
import { ControllerUpgradeError, upgradeMembers, upgradeOrder } from '../controller-upgrade.ts'
import { groupStatus } from '../group-status.ts'
import { progress } from '../progress.ts'

const component = 'cantrip upgrade-controller'

export const registerUpgradeController: RegisterCommand = (program, context) => {
  program.command('upgrade-controller')
    .description('upgrade the controllers\' agents to a new version (default: this client\'s), one member at a time')
    .addHelpText('after', '\nExamples:\n  cantrip upgrade-controller --dry-run\n  cantrip upgrade-controller --agent-version 0.2.0\n\nSee also: upgrade-model, sync-agent-binary')
    .option('--agent-version <version>', 'upgrade to this version')
    .option('--dry-run', 'say what would change, change nothing')
    .option('-c, --controller <name>', 'controller (default: the current one)')
    .action(async (options: { agentVersion?: string, dryRun?: boolean, controller?: string }) => {
      const wanted = options.agentVersion ?? cantripVersion
      if (parseAgentVersion(wanted) === undefined) throw new InvalidInputError(component, '--agent-version as a version like "0.2.0"', wanted)
      const { name, entry } = controllerEntry(options.controller)
      const remote = entry.controllers.find(member => member.host !== undefined)
      if (remote !== undefined) throw new ControllerUpgradeError(`${component}: cannot upgrade controller ${controllerMemberName(remote)} on ${remote.host!.slice('ssh:'.length)}: only members on this host are restarted by upgrade-controller`)
      const connection = await context.connect(name)
      // The group's own Raft state and agent store are the default model's, whichever model is current.
      connection.useModel('default')
      const group = await groupStatus(connection, entry)
      const down = entry.controllers.filter((_, i) => group.members[i]?.status === undefined)
      if (down.length > 0) throw new ControllerUpgradeError(`${component}: expected every member of controller "${name}" to answer (one member at a time is down during an upgrade), got ${down.map(controllerMemberName).join(', ')} not answering`)
      const running = sortAgentVersions(group.members.map(m => m.status?.version ?? cantripVersion))
      const lowest = running[0] ?? cantripVersion
      const fail = (why: string): never => { throw new AgentVersionError(`controller ${lowest}: cannot upgrade controller "${name}" to agent ${wanted}: ${why}`) }
      if (compareAgentVersions(wanted, lowest) < 0) fail(`cannot change version from ${lowest} to lower version ${wanted}`)
      const order = upgradeOrder(entry, group, wanted)
      if (order.length === 0) {
        context.out('no upgrades available')
        return
      }
      const bundle = await bundleFor(connection, wanted, fail)
      if (options.dryRun === true) {
        context.out(`upgrade to ${wanted} available (controller "${name}" runs ${running.join(', ')}; would restart ${order.map(controllerMemberName).join(', ')} in turn)`)
        return
      }
      // Held by the controllers (and recorded in the default model), so add-model and upgrade-model can hand it out too.
      await putAgentBinary(connection, bundle)
      context.out(`started upgrade to ${wanted}`)
      const step = progress(context, `upgrading controller "${name}" to ${wanted}`)
      const upgraded = await upgradeMembers({ name, entry, connection, bundle, step }, order)
      const file = readControllers()
      const recorded = file.controllers[name]
      if (recorded !== undefined) {
        recorded.version = wanted
        writeControllers(file)
      }
      step.done(`upgraded ${upgraded.join(', ')} to ${wanted}`)
    })
}

/** The bundle of `wanted`: the client's own, or one the controller store holds; otherwise refused in one line. */
async function bundleFor (connection: Connection, wanted: string, fail: (why: string) => never): Promise<AgentBundle> {
  if (wanted === cantripVersion) return clientAgentBundle()
  const { model } = await connection.model()
  const record = recordedBinary(model, wanted)
  if (record !== undefined) return await fetchAgentBinary(connection, record)
  // Juju: "no matching agent versions available"; a controller without internet access is fed by sync-agent-binary.
  return fail(`${noAgentBinaries(wanted, agentPlatform, 'the controller store', recordedBinaries(model).map(b => b.version))}; copy one there with "cantrip sync-agent-binary --agent-version ${wanted} --source <installation>"`)
}
