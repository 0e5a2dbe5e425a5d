import type { StorageId } from '../../ids.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { ModelCommand, StorageRecord, UnitRecord } from '../model-types.ts'
import { isAdmin, requireAdmin, requireUnitAgent } from './authorisation.ts'
import { text, unitName } from './fields.ts'
import { charmOf, getUnit } from './lookups.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'
import { checkStorageAddition, checkStorageSize, newStorageInstances } from './storage-records.ts'
import { putUnit } from './writes.ts'

/**
 * The storage commands (juju-semantics §2.13): the machine agent attaching what it
 * provisioned, `add-storage` / `storage-add` adding instances, `detach-storage` making an
 * attachment dying, and the unit agent's `storage-detached` once its `-storage-detaching`
 * hook has committed (Juju's uniter removes the attachment then: RemoveStorageAttachment
 * in internal/worker/uniter/storage/attachments.go).
 */

function storageOf (c: ModelCommand, unit: UnitRecord, id: unknown): StorageRecord {
  const storage = typeof id === 'string' && Object.hasOwn(unit.storage, id) ? unit.storage[id] : undefined
  if (storage === undefined) refuse(c, `unit ${q(unit.name)} has no storage ${q(id)}`)
  return storage
}

function withoutStorage (unit: UnitRecord, id: StorageId): UnitRecord {
  const storage = { ...unit.storage }
  delete storage[id]
  return { ...unit, storage, storageRequired: unit.storageRequired.filter(required => required !== id) }
}

function count (c: ModelCommand, value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1) refuse(c, `count must be greater than zero, got ${q(value)}`)
  return value as number
}

function addStorage (d: ModelDraft, c: ModelCommand & { type: 'add-storage' }): { storage: StorageId[] } {
  const name = unitName(c, c.unit)
  if (!isAdmin(c.proposer)) requireUnitAgent(d, c, name)
  const unit = getUnit(d, c, name)
  if (unit.life !== 'alive') refuse(c, `unit ${q(name)} is not alive`)
  const n = count(c, c.count)
  const charm = charmOf(d, d.application(unit.application)!)
  const existing = Object.values(unit.storage).filter(s => s.name === c.name).length
  const spec = checkStorageAddition(c, charm, c.name, existing, n)
  // New instances take the size of the unit's others of the store (the application's directive), else the charm's minimum.
  const sizeMiB = c.sizeMiB ?? d.application(unit.application)!.storage?.[c.name]?.sizeMiB ?? Math.max(spec.minimumSizeMiB, 1024)
  if (!Number.isSafeInteger(sizeMiB) || sizeMiB < 1) refuse(c, `size must be a whole number of MiB above zero, got ${q(sizeMiB)}`)
  checkStorageSize(c, charm, c.name, spec, sizeMiB)
  const added = newStorageInstances(d, c.name, spec, n, sizeMiB)
  putUnit(d, { ...unit, storage: { ...unit.storage, ...added } })
  return { storage: Object.keys(added) }
}

export const storageCommands: HandlerTable<'storage-attached' | 'add-storage' | 'detach-storage' | 'storage-detached'> = {
  'storage-attached': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    const storage = storageOf(c, unit, c.storageId)
    const location = c.location === undefined ? storage.location : text(c, 'location', c.location)
    if (storage.attached && storage.location === location) return {}
    putUnit(d, { ...unit, storage: { ...unit.storage, [storage.id]: { ...storage, attached: true, location } } })
    return {}
  },

  'add-storage': (d, c) => addStorage(d, c),

  'detach-storage': (d, c) => {
    requireAdmin(c)
    const unit = getUnit(d, c, unitName(c, c.unit))
    const storage = storageOf(c, unit, c.storageId)
    if (storage.life !== 'alive') return {}
    const spec = charmOf(d, d.application(unit.application)!).metadata.storage[storage.name]
    const remaining = Object.values(unit.storage).filter(s => s.name === storage.name && s.life === 'alive').length - 1
    if (unit.life === 'alive' && spec !== undefined && remaining < spec.countMin) {
      refuse(c, `removing storage ${storage.id} would leave ${remaining} instances of store ${q(storage.name)}, the charm requires at least ${spec.countMin}`)
    }
    // Never provisioned: nothing on the machine to tear down and no hook to run (Juju's maybeShortCircuitRemoval).
    if (!storage.attached) putUnit(d, withoutStorage(unit, storage.id))
    else putUnit(d, { ...unit, storage: { ...unit.storage, [storage.id]: { ...storage, life: 'dying' } } })
    return {}
  },

  'storage-detached': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = d.unit(name)
    if (unit === undefined || typeof c.storageId !== 'string' || !Object.hasOwn(unit.storage, c.storageId)) return {}
    putUnit(d, withoutStorage(unit, c.storageId))
    return {}
  }
}
