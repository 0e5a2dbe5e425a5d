/**
 * `cantrip trust APP [--remove]`, as Juju's `juju trust`: sets the application's `trust`
 * (what `deploy --trust` and `config APP trust=true` set), which lets its units read the
 * model's cloud with credential-get; `--remove` takes it away. A change runs
 * `config-changed` on every unit (the trust hash, juju-semantics §2.8). Silent, as Juju is.
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { applicationRecord, checkApplication, type Connect, controllerFlags, controllerHelp, type Out, readModel } from './model-common.ts'

const component = 'cantrip trust'

export async function runTrust (connect: Connect, application: string, options: { remove?: boolean }, _out: Out): Promise<void> {
  checkApplication(component, application)
  const client = await connect()
  if (applicationRecord(await readModel(client), application) === undefined) throw new InvalidInputError(component, 'an application in the model', application)
  expectOk(await client.submit({ type: 'set-config', application, config: {}, trust: options.remove !== true }))
}

export const registerTrust: RegisterCommand = (program, context) => {
  program.command('trust')
    .description('let an application\'s units read the cloud credential (credential-get)')
    .argument('<application>', 'application name')
    .option('--remove', 'take the trust away')
    .option(controllerFlags, controllerHelp)
    .action(async (application: string, options: { remove?: boolean, controller?: string }) => {
      await runTrust(async () => await context.connect(options.controller), application, options, context.out)
    })
}
