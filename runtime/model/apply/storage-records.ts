import type { ApplicationName, StorageId } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { isPlainRecord } from '../charm-summary.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { CharmRecord, CharmStorage, ModelCommand, StorageDirective, StorageRecord } from '../model-types.ts'
import { defaultStorageSizeMiB, formatSizeMiB } from '../storage-directives.ts'
import { q, refuse } from './refusal.ts'

/**
 * Storage instances coming into the model: the directives `deploy --storage` leaves on the
 * application, checked against the charm's stores as Juju's state/storage.go checks them
 * (count range, minimum size), and the instances each new unit gets from them.
 */

/** Juju's pools on its local clouds: filesystems from `rootfs`, block devices from `loop`. */
export const poolOf = (kind: 'filesystem' | 'block'): string => kind === 'block' ? 'loop' : 'rootfs'

function checkCount (c: ModelCommand, charm: CharmRecord, name: string, spec: CharmStorage, count: number): void {
  if (count < spec.countMin) refuse(c, `charm ${q(charm.metadata.name)} store ${q(name)}: ${spec.countMin} instances required, ${count} specified`)
  if (spec.countMax !== -1 && count > spec.countMax) refuse(c, `charm ${q(charm.metadata.name)} store ${q(name)}: at most ${spec.countMax} instances supported, ${count} specified`)
}

function checkSize (c: ModelCommand, charm: CharmRecord, name: string, spec: CharmStorage, sizeMiB: number): void {
  if (sizeMiB < spec.minimumSizeMiB) {
    refuse(c, `charm ${q(charm.metadata.name)} store ${q(name)}: minimum storage size is ${formatSizeMiB(spec.minimumSizeMiB)}, ${formatSizeMiB(sizeMiB)} specified`)
  }
}

function storeOf (c: ModelCommand, charm: CharmRecord, name: unknown): CharmStorage {
  const spec = typeof name === 'string' && Object.hasOwn(charm.metadata.storage, name) ? charm.metadata.storage[name] : undefined
  if (spec === undefined) refuse(c, `charm ${q(charm.metadata.name)} has no store called ${q(name)}`)
  return spec
}

const wholeOrUndefined = (value: unknown): value is number | undefined => value === undefined || (Number.isSafeInteger(value) && (value as number) >= 0)

/** Every store of the charm with its count and size: the user's directive, else the charm's minimum count and size (at least 1 GiB). */
export function storageDirectives (c: ModelCommand, charm: CharmRecord, input: unknown): Record<string, StorageDirective> {
  if (input !== undefined && !isPlainRecord(input)) refuse(c, 'storage must be a map of storage name to {count, sizeMiB}')
  const given = input ?? {}
  for (const name of Object.keys(given)) storeOf(c, charm, name)
  const out: Record<string, StorageDirective> = {}
  for (const [name, spec] of Object.entries(charm.metadata.storage)) {
    const directive = Object.hasOwn(given, name) ? given[name] : undefined
    if (directive !== undefined && (!isPlainRecord(directive) || !wholeOrUndefined(directive.count) || !wholeOrUndefined(directive.sizeMiB))) {
      refuse(c, `storage ${q(name)} must be {count, sizeMiB} as whole numbers, got ${q(directive)}`)
    }
    const count = (directive?.count as number | undefined) ?? spec.countMin ?? 1
    const sizeMiB = (directive?.sizeMiB as number | undefined) ?? Math.max(spec.minimumSizeMiB ?? 0, defaultStorageSizeMiB)
    checkCount(c, charm, name, spec, count)
    checkSize(c, charm, name, spec, sizeMiB)
    out[name] = { count, sizeMiB }
  }
  return out
}

/** `count` new instances of store `name`, numbered from the model's storage counter (`data/3`). */
export function newStorageInstances (d: ModelDraft, name: string, spec: CharmStorage, count: number, sizeMiB: number): Record<StorageId, StorageRecord> {
  const out: Record<StorageId, StorageRecord> = {}
  for (let i = 0; i < count; i++) {
    const number = d.counters.storage
    d.counters = { ...d.counters, storage: number + 1 }
    const id = `${name}/${number}`
    // Where Juju would mount it; the machine's storage provisioner says where it really is when it attaches it.
    const location = spec.type === 'block' ? '' : spec.location ?? `/var/lib/juju/storage/${name}/${number}`
    out[id] = { id, name, kind: spec.type, life: 'alive', attached: false, location, sizeMiB, pool: poolOf(spec.type) }
  }
  return out
}

/** The instances a new unit of `app` gets: its directives, or the charm's defaults for an application deployed before them. */
export function unitStorage (d: ModelDraft, app: { name: ApplicationName, storage?: Readonly<Record<string, StorageDirective>> }, charm: CharmRecord): Record<StorageId, StorageRecord> {
  const storage: Record<StorageId, StorageRecord> = {}
  for (const [name, spec] of Object.entries(charm.metadata.storage)) {
    const directive = app.storage?.[name]
    const count = directive?.count ?? spec.countMin ?? 1
    const sizeMiB = directive?.sizeMiB ?? Math.max(spec.minimumSizeMiB ?? 0, defaultStorageSizeMiB)
    Object.assign(storage, newStorageInstances(d, name, spec, count, sizeMiB))
    if (Object.keys(storage).length > limits.storagePerUnitMax) break
  }
  return storage
}

/** Checks that `count` more instances of `name` fit the charm's range: Juju's add-storage refusal otherwise. */
export function checkStorageAddition (c: ModelCommand, charm: CharmRecord, name: unknown, existing: number, count: number): CharmStorage {
  const spec = storeOf(c, charm, name)
  if (spec.countMax !== -1 && existing + count > spec.countMax) {
    refuse(c, `adding ${count} storage instances brings the total to ${existing + count}, exceeding the maximum of ${spec.countMax}`)
  }
  if (existing + count > limits.storagePerUnitMax) refuse(c, `a unit has at most ${limits.storagePerUnitMax} storage instances`)
  return spec
}

export { checkSize as checkStorageSize }
