/**
 * `cantrip upgrade-model [--agent-version X] [--dry-run]`, as Juju's (juju/juju
 * cmd/juju/commands/upgrademodel.go): sets the model's agent-version, by default to the
 * client's own version, whose bundle the client uploads to the controllers' agent store;
 * any other version must be there already (copied by `cantrip sync-agent-binary`,
 * sync-agent-binary.ts, as Juju's controllers without internet access are fed by
 * `juju sync-agent-binary`). Every machine agent of the model then
 * fetches that bundle, checks it, switches to it and restarts into it
 * (agent/tools/agent-upgrader.ts); `status` shows each machine's version as it reports it.
 *
 * Refused, with one line naming the controller's version, the version wanted, the
 * versions there are and where: a version below the controllers' or the model's
 * (downgrades, in Juju's words "cannot change version from X to lower version Y"), or
 * one the store does not hold.
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import { parseAgentVersion } from '../../../runtime/model/agent-binaries.ts'
import { controllerVersion, modelAgentVersion, upgradeModelAgents } from '../agent-binaries.ts'
import { cantripVersion, type RegisterCommand } from '../cli-context.ts'
import { controllerFlags, controllerHelp } from './model-common.ts'

const component = 'cantrip upgrade-model'

export const registerUpgrade: RegisterCommand = (program, context) => {
  program.command('upgrade-model')
    .description('upgrade the agents of every machine in a model to a new version (default: this client\'s)')
    .option('--agent-version <version>', 'upgrade to this version')
    .option('--dry-run', 'say what would change, change nothing')
    .option(controllerFlags, controllerHelp)
    .action(async (options: { agentVersion?: string, dryRun?: boolean, controller?: string }) => {
      const wanted = options.agentVersion ?? cantripVersion
      if (parseAgentVersion(wanted) === undefined) throw new InvalidInputError(component, '--agent-version as a version like "0.2.0"', wanted)
      const connection = await context.connect(options.controller)
      const full = await connection.model()
      const name = full.modelName ?? 'default'
      const controller = await controllerVersion(connection)
      const current = modelAgentVersion(full.model) ?? controller
      if (options.dryRun === true) {
        context.out(wanted === current ? 'no upgrades available' : `upgrade to ${wanted} available (model "${name}" runs ${current})`)
        return
      }
      const changed = await upgradeModelAgents(connection, { subject: `model "${name}"`, controller, wanted, model: full.model })
      context.out(changed ? `started upgrade to ${wanted}` : 'no upgrades available')
    })
}
