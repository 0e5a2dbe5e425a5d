import { stringCompare } from '../../../runtime/ids.ts'
import type { Operation } from '../operation.ts'
import type { ResolverEffect, ResolverInput } from '../resolver-types.ts'

export type StorageResolution = Operation | { waiting: string } | undefined

/**
 * Storage hooks (§1.4 item 12, §2.13): `-storage-attached` for attached storage not yet
 * seen, `-storage-detaching` for seen storage that is dying (all of it when the unit is
 * dying). Runs when idle and, for machine charms, while the first install hook is still
 * queued, so storage hooks precede install. Before install the loop waits for storage
 * the unit was deployed with.
 */
export function storageOp ({ local, remote }: ResolverInput): StorageResolution {
  // Not before the charm is on disk: Juju's uniter starts with the charm deploy, whose
  // commit queues install; only then may storage hooks run (ahead of that install).
  if (local.charm === undefined) return undefined
  const op = local.operation
  const installQueued = op.kind === 'run-hook' && op.step === 'queued' && op.hook?.kind === 'install'
  if (op.kind !== 'continue' && !installQueued) return undefined
  const unitDying = remote.life !== 'alive'
  for (const id of Object.keys(local.storageAttached).sort(stringCompare)) {
    const storage = remote.storage[id]
    if (unitDying || storage === undefined || storage.life !== 'alive') {
      return { kind: 'run-hook', hook: { kind: 'storage-detaching', storageId: id, storageName: local.storageAttached[id]!.name }, source: 'resolver' }
    }
  }
  if (unitDying) return undefined
  for (const storage of Object.values(remote.storage).sort((a, b) => stringCompare(a.id, b.id))) {
    if (storage.life === 'alive' && storage.attached && !(storage.id in local.storageAttached)) {
      return { kind: 'run-hook', hook: { kind: 'storage-attached', storageId: storage.id, storageName: storage.name }, source: 'resolver' }
    }
  }
  if (!local.installed) {
    const missing = remote.storageRequiredForInstall.filter(id => remote.storage[id]?.attached !== true)
    if (missing.length > 0) return { waiting: `waiting for storage ${missing.sort(stringCompare).join(', ')}` }
  }
  return undefined
}

/**
 * Juju's maybeShortCircuitRemoval (internal/worker/uniter/storage/resolver.go): storage
 * that is no longer alive and whose `-storage-attached` never committed has no hook to
 * run; its attachment is removed at once. Asked again on every pass until the model drops
 * it (the command is idempotent).
 */
export function storageRemovals ({ local, remote }: ResolverInput, effects: ResolverEffect[]): void {
  for (const storage of Object.values(remote.storage).sort((a, b) => stringCompare(a.id, b.id))) {
    if (storage.life !== 'alive' && !(storage.id in local.storageAttached)) effects.push({ type: 'storage-detached', storageId: storage.id })
  }
}
