import { limits } from '../../limits.ts'
import { keys } from '../keys.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { ModelCommand, RelationRecord, UnitRecord } from '../model-types.ts'
import { tableGet } from '../table.ts'
import { sortedRecord, defineOwn } from './fields.ts'
import { q, refuse } from './refusal.ts'
import { putSettings } from './writes.ts'

/**
 * Relation databags: which one a unit may write, and writing changes to it.
 */

/**
 * The key of the databag `unit` may write in `relation`: its application's (leader
 * only) or its own (in scope only). Shared by `relation-settings` and `commit-hook-changes`.
 */
export function writableBagKey (d: ModelDraft, c: ModelCommand, unit: UnitRecord, relation: RelationRecord, application: boolean): string {
  if (application) {
    if (d.lease(unit.application)?.holder !== unit.name) refuse(c, `unit ${q(unit.name)} is not the leader of ${q(unit.application)}`)
    return keys.applicationSettings(relation.id, unit.application)
  }
  if (tableGet(relation.members, unit.name)?.inScope !== true) refuse(c, `unit ${q(unit.name)} is not in scope of relation ${relation.id}`)
  return keys.unitSettings(relation.id, unit.name)
}

/** Applies databag changes to the bag at `key`, bumping its version only when something changed. */
export function writeBag (d: ModelDraft, c: ModelCommand, key: string, changes: Readonly<Record<string, string>>, field = 'settings'): void {
  const previous = d.settings(key)
  const values = changedBag(c, previous?.values ?? {}, changes, field)
  if (values === undefined) return
  putSettings(d, key, { version: (previous?.version ?? 0) + 1, values })
}

/** Applies databag changes (empty value deletes); undefined when nothing changes. */
export function changedBag (c: ModelCommand, current: Readonly<Record<string, string>>, changes: Readonly<Record<string, string>>, field = 'settings'): Record<string, string> | undefined {
  const next: Record<string, string> = {}
  for (const key of Object.keys(current)) defineOwn(next, key, current[key]!)
  let changed = false
  for (const [key, value] of Object.entries(changes)) {
    const had = Object.hasOwn(next, key)
    if (value === '') {
      if (had) { delete next[key]; changed = true }
    } else if (!had || next[key] !== value) {
      defineOwn(next, key, value)
      changed = true
    }
  }
  if (!changed) return undefined
  const sorted = sortedRecord(next)
  let bytes = 0
  for (const [key, value] of Object.entries(sorted)) bytes += key.length + value.length
  if (bytes > limits.modelSettingsBytesMax) refuse(c, `${field} would exceed ${limits.modelSettingsBytesMax} bytes`)
  return sorted
}
