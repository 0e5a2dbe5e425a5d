import { keys } from '../keys.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { ApplicationRecord, MachineRecord, RelationRecord, SettingsRecord, UnitRecord } from '../model-types.ts'
import { keyScope } from '../visibility.ts'

/**
 * Writes to the draft: each records the delta key watchers are told of.
 */

export function putApplication (d: ModelDraft, app: ApplicationRecord): void {
  d.applications.set(app.name, app)
  d.touch(keys.application(app.name))
}

export function putUnit (d: ModelDraft, unit: UnitRecord): void {
  d.units.set(unit.name, unit)
  d.touch(keys.unit(unit.name))
}

export function putMachine (d: ModelDraft, machine: MachineRecord): void {
  d.machines.set(machine.id, machine)
  d.touch(keys.machine(machine.id))
}

export function putRelation (d: ModelDraft, relation: RelationRecord): void {
  d.relations.set(String(relation.id), relation)
  d.touch(keys.relation(relation.id))
}

export function putSettings (d: ModelDraft, key: string, settings: SettingsRecord): void {
  d.settingsTable.set(key, settings)
  d.touch(key)
}

export function removeKey (d: ModelDraft, key: string): void {
  d.remove(key, keyScope(d, key))
}
