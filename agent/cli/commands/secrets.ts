/**
 * User secrets and the secrets listing, as Juju 3's cmd/juju/secrets: `add-secret NAME
 * key=value…` (prints the URI), `update-secret`, `remove-secret [--revision]`,
 * `grant-secret`/`revoke-secret ID|NAME APP[,APP…]`, `secrets [--format]` and
 * `show-secret ID|NAME [--reveal] [--revision N]`. Content reaches the controllers over
 * the authenticated mesh and is sealed there; only `--reveal` brings it back.
 */
import { readFileSync } from 'node:fs'
import { stringify } from 'yaml'
import { InvalidInputError } from '../../../runtime/errors.ts'
import type { ModelContext } from '../../../runtime/model/model-types.ts'
import { parseSecretUri, secretUri, type SecretRecord } from '../../../runtime/model/secret-types.ts'
import { tableValues } from '../../../runtime/model/table.ts'
import { newSecretId } from '../../uniter/unit-hook-secrets.ts'
import { expectOk, type CliContext, type RegisterCommand } from '../cli-context.ts'
import { controllerFlags, controllerHelp, type Out } from './model-common.ts'

const keyPattern = /^[a-z](?:-?[a-z0-9]){2,}$/

/** `key=value`, `key#base64=…`, `key#file=PATH` (Juju's CreateSecretData). */
export function secretData (component: string, args: readonly string[]): Record<string, string> {
  const data: Record<string, string> = {}
  for (const arg of args) {
    const eq = arg.indexOf('=')
    if (eq <= 0) throw new InvalidInputError(component, 'key=value', arg)
    let key = arg.slice(0, eq)
    let value = arg.slice(eq + 1)
    if (key.endsWith('#base64')) {
      key = key.slice(0, -7)
      value = Buffer.from(value, 'base64').toString('utf8')
    } else if (key.endsWith('#file')) {
      key = key.slice(0, -5)
      value = readFileSync(value, 'utf8')
    }
    if (!keyPattern.test(key)) throw new InvalidInputError(component, 'a secret key of lower-case letters, digits and hyphens, at least 3 long', key)
    data[key] = value
  }
  return data
}

function secretsOf (model: ModelContext): SecretRecord[] {
  return model.secrets === undefined ? [] : tableValues(model.secrets).sort((a, b) => a.id < b.id ? -1 : 1)
}

/** A secret by URI, bare id, or a user secret's name. */
export function findSecret (component: string, model: ModelContext, ref: string): SecretRecord {
  const id = parseSecretUri(ref)
  const found = secretsOf(model).find(s => s.id === id || (s.owner.kind === 'model' && s.label === ref))
  if (found === undefined) throw new InvalidInputError(component, 'a secret URI or a user secret\'s name', ref)
  return found
}

function ownerName (secret: SecretRecord): string {
  return secret.owner.kind === 'model' ? '<model>' : secret.owner.name
}

function listing (secret: SecretRecord): Record<string, unknown> {
  return {
    revision: secret.latestRevision,
    ...(secret.rotatePolicy === 'never' ? {} : { rotation: secret.rotatePolicy }),
    owner: ownerName(secret),
    ...(secret.description === '' ? {} : { description: secret.description }),
    ...(secret.label === '' ? {} : { [secret.owner.kind === 'model' ? 'name' : 'label']: secret.label }),
    created: new Date(secret.createdAt).toISOString(),
    updated: new Date(secret.updatedAt).toISOString()
  }
}

function table (secrets: SecretRecord[]): string {
  const rows = [['ID', 'Name', 'Owner', 'Rotation', 'Revision', 'Last updated'],
    ...secrets.map(s => [s.id, s.owner.kind === 'model' ? s.label : '-', ownerName(s), s.rotatePolicy, String(s.latestRevision), new Date(s.updatedAt).toISOString()])]
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map(r => r[i]!.length)))
  return rows.map(r => r.map((cell, i) => i === 4 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n'
}

async function modelOf (context: CliContext, controller: string | undefined): Promise<{ model: ModelContext, client: Awaited<ReturnType<CliContext['connect']>> }> {
  const client = await context.connect(controller)
  return { client, model: (await client.model()).model }
}

function applicationsArg (value: string): string[] {
  return value.split(',').map(a => a.trim()).filter(a => a !== '')
}

export const registerSecrets: RegisterCommand = (program, context) => {
  const out: Out = context.out
  program.command('add-secret').description('add a user secret; prints its URI')
    .argument('<name>').argument('[data...]', 'key=value, key#base64=value or key#file=path')
    .option('--info <description>', 'the secret description').option(controllerFlags, controllerHelp)
    .action(async (name: string, data: string[], options: { info?: string, controller?: string }) => {
      const content = secretData('cantrip add-secret', data)
      if (Object.keys(content).length === 0) throw new InvalidInputError('cantrip add-secret', 'at least one key=value', '')
      const client = await context.connect(options.controller)
      const id = newSecretId()
      expectOk(await client.submit({ type: 'add-secret', id, label: name, content: { plain: content }, now: Date.now(), ...(options.info === undefined ? {} : { description: options.info }) }))
      out(`${secretUri(id)}\n`)
    })
  program.command('update-secret').description('update a user secret: new content makes a new revision')
    .argument('<secret>', 'URI or name').argument('[data...]')
    .option('--info <description>', 'the secret description').option('--name <name>', 'a new name').option(controllerFlags, controllerHelp)
    .action(async (ref: string, data: string[], options: { info?: string, name?: string, controller?: string }) => {
      const content = secretData('cantrip update-secret', data)
      const { client, model } = await modelOf(context, options.controller)
      const secret = findSecret('cantrip update-secret', model, ref)
      expectOk(await client.submit({
        type: 'update-secret',
        now: Date.now(),
        secret: {
          id: secret.id,
          ...(Object.keys(content).length === 0 ? {} : { content: { plain: content } }),
          ...(options.info === undefined ? {} : { description: options.info }),
          ...(options.name === undefined ? {} : { label: options.name })
        }
      }))
    })
  program.command('remove-secret').description('remove a user secret, or one revision of it')
    .argument('<secret>', 'URI or name').option('--revision <n>', 'remove only this revision').option(controllerFlags, controllerHelp)
    .action(async (ref: string, options: { revision?: string, controller?: string }) => {
      const { client, model } = await modelOf(context, options.controller)
      const secret = findSecret('cantrip remove-secret', model, ref)
      const revision = options.revision === undefined ? undefined : Number(options.revision)
      if (revision !== undefined && (!Number.isSafeInteger(revision) || revision < 1)) throw new InvalidInputError('cantrip remove-secret', '--revision to be a revision number', options.revision ?? '')
      expectOk(await client.submit({ type: 'remove-secret', id: secret.id, ...(revision === undefined ? {} : { revision }) }))
    })
  for (const verb of ['grant', 'revoke'] as const) {
    program.command(`${verb}-secret`).description(`${verb} applications access to a user secret`)
      .argument('<secret>', 'URI or name').argument('<applications>', 'app[,app...]').option(controllerFlags, controllerHelp)
      .action(async (ref: string, apps: string, options: { controller?: string }) => {
        const { client, model } = await modelOf(context, options.controller)
        const secret = findSecret(`cantrip ${verb}-secret`, model, ref)
        expectOk(await client.submit({ type: `${verb}-secret`, id: secret.id, applications: applicationsArg(apps) }))
      })
  }
  program.command('secrets').description('list the model\'s secrets (never their content)')
    .option('--format <format>', 'tabular, yaml or json', 'tabular').option(controllerFlags, controllerHelp)
    .action(async (options: { format: string, controller?: string }) => {
      const { model } = await modelOf(context, options.controller)
      const secrets = secretsOf(model)
      if (options.format === 'tabular') out(secrets.length === 0 ? 'No secrets to display.\n' : table(secrets))
      else if (options.format === 'json') out(`${JSON.stringify(Object.fromEntries(secrets.map(s => [s.id, listing(s)])))}\n`)
      else if (options.format === 'yaml') out(secrets.length === 0 ? '{}\n' : stringify(Object.fromEntries(secrets.map(s => [s.id, listing(s)]))))
      else throw new InvalidInputError('cantrip secrets', 'a format of tabular, yaml or json', options.format)
    })
  program.command('show-secret').description('show a secret; --reveal also shows its content')
    .argument('<secret>', 'URI or name').option('--reveal', 'include the content').option('--revision <n>', 'the revision to reveal')
    .option('--format <format>', 'yaml or json', 'yaml').option(controllerFlags, controllerHelp)
    .action(async (ref: string, options: { reveal?: boolean, revision?: string, format: string, controller?: string }) => {
      const { client, model } = await modelOf(context, options.controller)
      const secret = findSecret('cantrip show-secret', model, ref)
      const shown: Record<string, unknown> = listing(secret)
      if (options.reveal === true) {
        const reply = await client.api({ op: 'reveal-secret', id: secret.id, ...(options.revision === undefined ? {} : { revision: Number(options.revision) }) })
        shown['content'] = reply.content
      }
      const doc = { [secret.id]: shown }
      out(options.format === 'json' ? `${JSON.stringify(doc)}\n` : stringify(doc))
    })
}
