/**
 * `cantrip integrate A[:endpoint] B[:endpoint]` (alias `relate`) and
 * `cantrip remove-relation A[:endpoint] B[:endpoint]` (or a relation id), as Juju's.
 * remove-relation finds the relation in the model; two or more matches are refused as
 * ambiguous, naming them, so the user can give the endpoints.
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { findRelations } from './deploy.ts'
import { type Connect, controllerFlags, controllerHelp, type Out, readModel } from './model-common.ts'
import { tableGet } from '../../../runtime/model/table.ts'

const endpointPattern = /^[a-z][a-z0-9]*(?:-[a-z0-9]*[a-z][a-z0-9]*)*(?::[a-z][a-z0-9_-]*)?$/

function checkEndpoint (component: string, ref: string): string {
  if (!endpointPattern.test(ref)) throw new InvalidInputError(component, 'an endpoint like "app" or "app:endpoint"', ref)
  return ref
}

export async function runIntegrate (connect: Connect, a: string, b: string, out: Out): Promise<void> {
  checkEndpoint('cantrip integrate', a)
  checkEndpoint('cantrip integrate', b)
  const client = await connect()
  const result = expectOk(await client.submit({ type: 'integrate', a, b }))
  if (result.relationId !== undefined) out(`added relation ${result.relationId}: ${a} - ${b}`)
}

export async function runRemoveRelation (connect: Connect, refs: readonly string[], out: Out): Promise<void> {
  const component = 'cantrip remove-relation'
  let id: number | undefined
  if (refs.length === 1 && /^\d+$/.test(refs[0]!)) {
    id = Number(refs[0])
  } else if (refs.length === 2) {
    checkEndpoint(component, refs[0]!)
    checkEndpoint(component, refs[1]!)
  } else {
    throw new InvalidInputError(component, 'two endpoints (A[:endpoint] B[:endpoint]) or one relation id', refs.join(' '))
  }
  const client = await connect()
  if (id === undefined) {
    const model = await readModel(client)
    const ids = findRelations(model, refs[0]!, refs[1]!)
    if (ids.length === 0) throw new InvalidInputError(component, `a relation between ${refs[0]!} and ${refs[1]!}`, 'none in the model')
    if (ids.length > 1) {
      const keys = ids.map(i => tableGet(model.relations, String(i))?.key ?? String(i))
      throw new InvalidInputError(component, 'endpoints naming one relation', `${ids.length} relations (${keys.join('; ')})`)
    }
    id = ids[0]!
  }
  expectOk(await client.submit({ type: 'remove-relation', relationId: id }))
  out(`removing relation ${id}`)
}

export const registerRelations: RegisterCommand = (program, context) => {
  program.command('integrate')
    .alias('relate')
    .description('integrate two applications')
    .addHelpText('after', '\nExamples:\n  cantrip integrate web kv\n  cantrip integrate web:backend kv:website')
    .argument('<a>', 'application[:endpoint]')
    .argument('<b>', 'application[:endpoint]')
    .option(controllerFlags, controllerHelp)
    .action(async (a: string, b: string, options: { controller?: string }) => {
      await runIntegrate(async () => await context.connect(options.controller), a, b, context.out)
    })

  program.command('remove-relation')
    .description('remove a relation between two applications')
    .argument('<endpoints...>', 'A[:endpoint] B[:endpoint], or a relation id')
    .option(controllerFlags, controllerHelp)
    .action(async (refs: string[], options: { controller?: string }) => {
      await runRemoveRelation(async () => await context.connect(options.controller), refs, context.out)
    })
}
