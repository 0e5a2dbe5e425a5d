/**
 * `cantrip refresh APP --path charm-dir [--force-units]`, as Juju's: the directory is
 * packed, uploaded and added under the next local revision of its charm (or the URL the
 * model already has for that content), then the application is refreshed to it. The
 * model refuses a charm of another name, a refresh to the charm it runs, and endpoints
 * the new charm drops while relations use them.
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { chooseCharmUrl, executePlan, prepareCharm } from './deploy.ts'
import { applicationRecord, checkApplication, type Connect, controllerFlags, controllerHelp, type Out, readModel } from './model-common.ts'

const component = 'cantrip refresh'

export async function runRefresh (connect: Connect, application: string, options: { path?: string, forceUnits?: boolean }, out: Out): Promise<void> {
  checkApplication(component, application)
  if (options.path === undefined) throw new InvalidInputError(component, '--path with a local charm directory', 'no --path')
  const charm = await prepareCharm(options.path, component)
  const client = await connect()
  const model = await readModel(client)
  const app = applicationRecord(model, application)
  if (app === undefined) throw new InvalidInputError(component, 'an application in the model', application)
  const { url, exists } = chooseCharmUrl(model, charm)
  if (url === app.charm) {
    out(`Already running charm ${url}; nothing to refresh`)
    return
  }
  await executePlan(client, { steps: [{ kind: 'charm', charm, url, exists, say: exists ? `Using charm ${url}` : `Added local charm "${charm.name}" as ${url}` }] }, out)
  expectOk(await client.submit({ type: 'refresh', application, charm: url, ...(options.forceUnits === true ? { force: true } : {}) }))
  out(`Application "${application}" refreshed to ${url}`)
}

export const registerRefresh: RegisterCommand = (program, context) => {
  program.command('refresh')
    .description('refresh an application to a new version of its charm')
    .argument('<application>', 'application name')
    .option('--path <charm-dir>', 'local charm directory or .charm file to refresh to')
    .option('--force-units', 'refresh units even while they are in hook error')
    .option(controllerFlags, controllerHelp)
    .action(async (application: string, options: { path?: string, forceUnits?: boolean, controller?: string }) => {
      await runRefresh(async () => await context.connect(options.controller), application, options, context.out)
    })
}
