/**
 * The storage commands, as Juju's cmd/juju/storage: `cantrip storage [--format …]`
 * (list.go and its tabular formatter), `cantrip add-storage UNIT NAME[=[COUNT,][SIZE]]…`
 * (add.go: `added storage data/1 to kv/0` per instance) and `cantrip detach-storage ID…`
 * (detach.go: `detaching data/0`). Every argument is checked before anything is sent.
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import { parseStorageId } from '../../../runtime/ids.ts'
import type { ModelContext, StorageRecord, UnitRecord } from '../../../runtime/model/model-types.ts'
import { formatSizeMiB, parseStorageDirectives } from '../../../runtime/model/storage-directives.ts'
import { tableValues } from '../../../runtime/model/table.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { formatDocument, formatTable, parseFormat } from '../output-format.ts'
import { checkUnit, type Connect, controllerFlags, controllerHelp, type Out, readModel } from './model-common.ts'

interface StorageRow {
  readonly unit: UnitRecord
  readonly storage: StorageRecord
}

/** Juju's order: by unit, then by storage id, numbers compared as numbers. */
function rowsOf (model: ModelContext): StorageRow[] {
  const byId = (a: string, b: string): number => {
    const [x, y] = [parseStorageId(a), parseStorageId(b)]
    return x.name < y.name ? -1 : x.name > y.name ? 1 : x.number - y.number
  }
  const units = tableValues(model.units).sort((a, b) => byId(a.name, b.name))
  return units.flatMap(unit => Object.values(unit.storage).sort((a, b) => byId(a.id, b.id)).map(storage => ({ unit, storage })))
}

/** `pending` until the machine provisioned it, `attached`, `detaching` once dying. */
function statusOf (storage: StorageRecord): string {
  if (storage.life !== 'alive') return 'detaching'
  return storage.attached ? 'attached' : 'pending'
}

export function storageTable (model: ModelContext): string {
  const rows = rowsOf(model)
  if (rows.length === 0) return 'No storage to display.'
  return formatTable(['Unit', 'Storage ID', 'Type', 'Pool', 'Mountpoint', 'Size', 'Status', 'Message'], rows.map(({ unit, storage }) => [
    unit.name, storage.id, storage.kind, storage.pool ?? '', storage.attached ? storage.location : '',
    storage.sizeMiB === undefined ? '' : formatSizeMiB(storage.sizeMiB), statusOf(storage), ''
  ]))
}

/** Juju's `storage:` document: kind, life, status, persistent and the attachment. */
export function storageDocument (model: ModelContext): Record<string, unknown> {
  const storage: Record<string, unknown> = {}
  for (const { unit, storage: s } of rowsOf(model)) {
    storage[s.id] = {
      kind: s.kind,
      life: s.life,
      status: { current: statusOf(s) },
      persistent: false,
      ...(s.pool === undefined ? {} : { pool: s.pool }),
      ...(s.sizeMiB === undefined ? {} : { size: s.sizeMiB }),
      attachments: { units: { [unit.name]: { machine: unit.machine, ...(s.attached ? { location: s.location } : {}), life: s.life } } }
    }
  }
  return { storage }
}

export async function runStorage (connect: Connect, options: { format?: string }, out: Out): Promise<void> {
  const format = parseFormat('cantrip storage', options.format ?? 'tabular', ['tabular', 'yaml', 'json'])
  const model = await readModel(await connect())
  out(format === 'tabular' ? storageTable(model) : formatDocument(format, storageDocument(model)))
}

export async function runAddStorage (connect: Connect, unit: string, directives: readonly string[], out: Out): Promise<void> {
  const component = 'cantrip add-storage'
  checkUnit(component, unit)
  if (directives.length === 0) throw new InvalidInputError(component, 'a unit and a storage directive like "data=1" or "data=2,10G"', unit)
  const parsed = parseStorageDirectives(directives)
  if ('error' in parsed) throw new InvalidInputError(component, `storage directives NAME=[COUNT,][SIZE] (${parsed.error})`, directives.join(' '))
  const client = await connect()
  for (const name of Object.keys(parsed.directives).sort()) {
    const { count = 1, sizeMiB } = parsed.directives[name]!
    const result = expectOk(await client.submit({ type: 'add-storage', unit, name, count, ...(sizeMiB === undefined ? {} : { sizeMiB }) }))
    for (const id of result.storage ?? []) out(`added storage ${id} to ${unit}`)
  }
}

export async function runDetachStorage (connect: Connect, ids: readonly string[], out: Out): Promise<void> {
  const component = 'cantrip detach-storage'
  for (const id of ids) {
    try {
      parseStorageId(id)
    } catch {
      throw new InvalidInputError(component, 'a storage id like "data/0"', id)
    }
  }
  const client = await connect()
  const model = await readModel(client)
  for (const id of ids) {
    const holder = tableValues(model.units).find(unit => Object.hasOwn(unit.storage, id))
    if (holder === undefined) throw new InvalidInputError(component, 'the id of storage attached to a unit (see cantrip storage)', id)
    expectOk(await client.submit({ type: 'detach-storage', unit: holder.name, storageId: id }))
    out(`detaching ${id}`)
  }
}

export const registerStorage: RegisterCommand = (program, context) => {
  program.command('storage')
    .description('list the storage instances of the model\'s units')
    .option('--format <format>', 'tabular, yaml or json', 'tabular')
    .option(controllerFlags, controllerHelp)
    .action(async (options: { format?: string, controller?: string }) => {
      await runStorage(async () => await context.connect(options.controller), options, context.out)
    })

  program.command('add-storage')
    .description('add storage instances to a unit, e.g. data=2 or data=1,10G')
    .argument('<unit>', 'unit name, e.g. kv/0')
    .argument('[directives...]', 'NAME=[COUNT,][SIZE]')
    .option(controllerFlags, controllerHelp)
    .action(async (unit: string, directives: string[], options: { controller?: string }) => {
      await runAddStorage(async () => await context.connect(options.controller), unit, directives, context.out)
    })

  program.command('detach-storage')
    .description('detach storage instances from their units (the unit runs -storage-detaching)')
    .argument('<storage-ids...>', 'storage ids, e.g. data/0')
    .option(controllerFlags, controllerHelp)
    .action(async (ids: string[], options: { controller?: string }) => {
      await runDetachStorage(async () => await context.connect(options.controller), ids, context.out)
    })
}
