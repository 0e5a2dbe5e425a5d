/**
 * `cantrip attach-resource APP NAME=PATH`, as Juju's: the file is uploaded to the
 * controllers' store and becomes the application's resource NAME at the next revision;
 * every unit then runs `upgrade-charm` (and `config-changed`), where charms call
 * resource-get for the new file. NAME must be a file resource the application's charm
 * declares. Silent on success, as Juju is.
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import { readerOf } from '../../../runtime/model/model-draft.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { checkDeclared, parseResourceArgs, readResourceFile, uploadResource } from '../resource-upload.ts'
import { applicationRecord, checkApplication, type Connect, controllerFlags, controllerHelp, type Out, readModel } from './model-common.ts'

const component = 'cantrip attach-resource'

export async function runAttachResource (connect: Connect, application: string, items: readonly string[], _out: Out): Promise<void> {
  checkApplication(component, application)
  if (items.length !== 1) throw new InvalidInputError(component, 'one NAME=PATH after the application', items.length === 0 ? 'none' : items.join(' '))
  const [[name, path]] = [...parseResourceArgs(component, items)] as [[string, string]]
  const file = readResourceFile(component, name, path)
  const client = await connect()
  const model = await readModel(client)
  const app = applicationRecord(model, application)
  if (app === undefined) throw new InvalidInputError(component, 'an application in the model', application)
  const charm = readerOf(model).charm(app.charm)
  checkDeclared(component, { name: charm?.metadata.name ?? app.charm, ...(charm?.metadata.resources === undefined ? {} : { resources: { ...charm.metadata.resources } }) }, name)
  await uploadResource(component, client, file)
  expectOk(await client.submit({ type: 'attach-resource', application, resource: name, hash: file.hash, size: file.bytes.byteLength }))
}

export const registerAttachResource: RegisterCommand = (program, context) => {
  program.command('attach-resource')
    .description('upload a file as a resource of an application')
    .argument('<application>', 'application name')
    .argument('<name=path>', 'the resource name and the file to upload')
    .option(controllerFlags, controllerHelp)
    .action(async (application: string, item: string, options: { controller?: string }) => {
      await runAttachResource(async () => await context.connect(options.controller), application, [item], context.out)
    })
}
