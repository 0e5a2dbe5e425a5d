/**
 * `cantrip add-unit APP [-n N] [--to M[,M...]]`, `cantrip remove-unit UNIT...` and
 * `cantrip remove-application APP... [--force]`, as Juju's (`--force` for units whose
 * agents are gone, cmd/juju/application/removeunit.go): every argument is checked before
 * anything is sent; the model's refusal of one is reported as `controller 0.1.0: cannot …`.
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { checkApplication, checkUnit, type Connect, controllerFlags, controllerHelp, type Out, parseCount, parseMachineList } from './model-common.ts'

export async function runAddUnit (connect: Connect, application: string, options: { n?: string, to?: string }, out: Out): Promise<void> {
  const component = 'cantrip add-unit'
  checkApplication(component, application)
  const numUnits = parseCount(component, options.n, 1)
  const to = parseMachineList(component, options.to)
  if (to.length > numUnits) throw new InvalidInputError(component, `at most -n (${numUnits}) machines in --to`, options.to)
  const client = await connect()
  const result = expectOk(await client.submit({ type: 'add-unit', application, numUnits, ...(to.length > 0 ? { placement: to } : {}) }))
  for (const unit of result.units ?? []) out(`added unit ${unit}`)
}

/** `force`: the units leave the model at once, their agents or not (a unit whose agent is gone can be removed). */
export async function runRemoveUnit (connect: Connect, units: readonly string[], out: Out, options: { force?: boolean } = {}): Promise<void> {
  for (const unit of units) checkUnit('cantrip remove-unit', unit)
  const client = await connect()
  for (const unit of units) {
    expectOk(await client.submit({ type: 'remove-unit', unit, ...(options.force === true ? { force: true } : {}) }))
    out(`will remove unit ${unit}`)
  }
}

export async function runRemoveApplication (connect: Connect, applications: readonly string[], out: Out, options: { force?: boolean } = {}): Promise<void> {
  for (const application of applications) checkApplication('cantrip remove-application', application)
  const client = await connect()
  for (const application of applications) {
    expectOk(await client.submit({ type: 'remove-application', application, ...(options.force === true ? { force: true } : {}) }))
    out(`will remove application ${application}`)
  }
}

export const registerUnits: RegisterCommand = (program, context) => {
  program.command('add-unit')
    .description('add units to an application')
    .addHelpText('after', '\nExamples:\n  cantrip add-unit kv\n  cantrip add-unit kv -n 2 --to 0,1')
    .argument('<application>', 'application name')
    .option('-n, --num-units <n>', 'number of units to add', '1')
    .option('--to <machines>', 'machines for the new units in turn, e.g. 0,1')
    .option(controllerFlags, controllerHelp)
    .action(async (application: string, options: { numUnits?: string, to?: string, controller?: string }) => {
      await runAddUnit(async () => await context.connect(options.controller), application, { ...(options.numUnits === undefined ? {} : { n: options.numUnits }), ...(options.to === undefined ? {} : { to: options.to }) }, context.out)
    })

  program.command('remove-unit')
    .description('remove units from the model')
    .argument('<units...>', 'unit names, e.g. web/1')
    .option('--force', 'remove the units now, even when their agents do not answer (no stop or remove hooks)')
    .option('--no-wait', 'with --force: do not wait for the agents (cantrip never does)')
    .option(controllerFlags, controllerHelp)
    .addHelpText('after', '\nRemoving the last unit on a machine removes the machine too (its agent and instance\n' +
      'stopped), as Juju does, unless a controller runs there.\n' +
      '\nExamples:\n  cantrip remove-unit web/1\n  cantrip remove-unit --force kv/2   # its machine is gone')
    .action(async (units: string[], options: { force?: boolean, controller?: string }) => {
      await runRemoveUnit(async () => await context.connect(options.controller), units, context.out, options)
    })

  program.command('remove-application')
    .description('remove applications, their units and relations')
    .addHelpText('after', '\nMachines left with no unit are removed too (their agents and instances stopped), as Juju does;\n' +
      'a machine that still hosts another application\'s unit, or where a controller runs, stays.\n' +
      '\nExamples:\n  cantrip remove-application web\n  cantrip remove-application --force web')
    .argument('<applications...>', 'application names')
    .option('--force', 'remove the units now, even when their agents do not answer')
    .option('--no-wait', 'with --force: do not wait for the agents (cantrip never does)')
    .option(controllerFlags, controllerHelp)
    .action(async (applications: string[], options: { force?: boolean, controller?: string }) => {
      await runRemoveApplication(async () => await context.connect(options.controller), applications, context.out, options)
    })
}
