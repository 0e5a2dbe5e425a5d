/**
 * `cantrip ssh UNIT|MACHINE [-- COMMAND…]`, as Juju's (cmd/juju/ssh/ssh.go): a shell on
 * the target's machine, or the command run there, with its exit status passed through.
 * A local-provider machine is a directory on this host, so the shell starts there — in
 * the unit's agent directory for a unit — with JUJU_MACHINE_ID (and JUJU_UNIT_NAME) set;
 * a manual machine (`add-machine ssh:user@host`) is reached with the system's ssh.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { CommanderError } from 'commander'
import { CantripError, InvalidInputError } from '../../../runtime/errors.ts'
import { defaultModelName, isMachineId, isUnitName } from '../../../runtime/ids.ts'
import { tableGet } from '../../../runtime/model/table.ts'
import { localInstanceDirName, modelMachinesHome } from '../../../providers/local-provider.ts'
import type { RegisterCommand } from '../cli-context.ts'
import { modelTarget } from '../cli-home.ts'
import { controllerFlags, controllerHelp, readModel } from './model-common.ts'

const component = 'cantrip ssh'

export const registerSsh: RegisterCommand = (program, context) => {
  program.command('ssh')
    .description('open a shell on a unit\'s or machine\'s machine, or run a command there')
    .argument('<target>', 'a unit (kv/0) or a machine id (0)')
    .argument('[command...]', 'the command to run instead of a shell (put -- before it)')
    .option(controllerFlags, controllerHelp)
    .addHelpText('after', '\nExamples:\n  cantrip ssh kv/0\n  cantrip ssh 0 -- ls -l agent/log')
    .action(async (target: string, command: string[], options: { controller?: string }) => {
      if (!isUnitName(target) && !isMachineId(target)) throw new InvalidInputError(component, 'a unit like "kv/0" or a machine id like "0"', target)
      const { entry, model: modelName } = modelTarget(context.model, options.controller)
      const model = await readModel(await context.connect(options.controller))
      const unit = isUnitName(target) ? tableGet(model.units, target) : undefined
      if (isUnitName(target) && unit === undefined) throw new CantripError(`${component}: unit ${JSON.stringify(target)} not found`)
      const machineId = unit?.machine ?? target
      const machine = tableGet(model.machines, machineId)
      if (machine === undefined) throw new CantripError(`${component}: machine ${JSON.stringify(machineId)} not found`)
      let run
      if (machine.placement?.startsWith('ssh:') === true) {
        run = spawnSync('ssh', [machine.placement.slice('ssh:'.length), ...command], { stdio: 'inherit' })
      } else {
        if (entry.provider !== 'local') throw new CantripError(`${component}: machine ${machineId} is not on this host (provider ${JSON.stringify(entry.provider)})`)
        const machinesHome = join(entry.dir, 'machines')
        const machineDir = join(modelName === defaultModelName ? machinesHome : modelMachinesHome(machinesHome, modelName), localInstanceDirName(machineId))
        const unitDir = unit === undefined ? undefined : join(machineDir, 'agent', 'agents', `unit-${unit.name.replace('/', '-')}`)
        const cwd = unitDir !== undefined && existsSync(unitDir) ? unitDir : machineDir
        if (!existsSync(cwd)) throw new CantripError(`${component}: machine ${machineId} has no instance on this host yet`)
        const shell = process.env['SHELL'] ?? '/bin/bash'
        run = spawnSync(shell, command.length === 0 ? ['-i'] : ['-c', command.join(' ')], {
          cwd, stdio: 'inherit', env: { ...process.env, JUJU_MACHINE_ID: machineId, ...(unit === undefined ? {} : { JUJU_UNIT_NAME: unit.name }) }
        })
      }
      const code = run.status ?? 1
      // The remote status passes through, as Juju's ssh does, without an ERROR line of ours.
      if (code !== 0) throw new CommanderError(code, 'cantrip.ssh', '')
    })
}
