import type { Operation } from '../operation.ts'
import type { ResolverInput } from '../resolver-types.ts'
import type { HookInfo } from '../hook-info.ts'

/**
 * Secrets (§1.4 item 9), after Juju's internal/worker/uniter/secrets/resolver.go: only
 * once installed, while alive and idle, in Juju's order — an expired revision first,
 * then a due rotation, then a changed consumed secret, then an obsolete revision.
 *
 * - `secret-expired` for each expiry trigger the controllers marked due that this unit
 *   has not committed (they mark it again every retry delay until the revision goes);
 * - `secret-rotate` for a rotation deadline marked due and not yet committed;
 * - `secret-changed` for a consumed secret whose latest revision is newer than both the
 *   revision the unit tracks and the last one a committed `secret-changed` told it of (a
 *   first read tracks the latest revision, so reading never fires the hook by itself);
 * - `secret-remove` for each obsolete revision of a secret it manages not yet committed.
 * Keys are taken in sorted order, one hook at a time.
 */
export function secretsOp ({ local, remote }: ResolverInput): Operation | undefined {
  if (!local.installed || remote.life !== 'alive' || local.operation.kind !== 'continue') return undefined
  const state: Input = { local, remote }
  const hook = expiredHook(state) ?? rotateHook(state) ?? changedHook(state) ?? removeHook(state)
  return hook === undefined ? undefined : { kind: 'run-hook', hook, source: 'resolver' }
}

type Input = Pick<ResolverInput, 'local' | 'remote'>
const sorted = (record: object | undefined): string[] => record === undefined ? [] : Object.keys(record).sort()
const withLabel = (label: string): Pick<HookInfo, 'secretLabel'> => label === '' ? {} : { secretLabel: label }

function expiredHook ({ local, remote }: Input): HookInfo | undefined {
  for (const key of sorted(remote.secretExpirations)) {
    const due = remote.secretExpirations![key]!
    if (local.secretExpired?.[key] === due.due) continue
    return { kind: 'secret-expired', secretId: due.id, secretRevision: due.revision, secretDue: due.due, ...withLabel(due.label) }
  }
  return undefined
}

function rotateHook ({ local, remote }: Input): HookInfo | undefined {
  for (const id of sorted(remote.secretRotations)) {
    const due = remote.secretRotations![id]!
    if (local.secretRotated?.[id] === due.due) continue
    return { kind: 'secret-rotate', secretId: id, secretDue: due.due, secretOriginalRevision: due.revision, ...withLabel(due.label) }
  }
  return undefined
}

function changedHook ({ local, remote }: Input): HookInfo | undefined {
  for (const id of sorted(remote.secretsConsumed)) {
    const info = remote.secretsConsumed![id]!
    const told = Math.max(local.secretRevisions?.[id] ?? 0, info.tracked)
    if (info.latest > told) return { kind: 'secret-changed', secretId: id, secretRevision: info.latest, ...withLabel(info.label) }
  }
  return undefined
}

function removeHook ({ local, remote }: Input): HookInfo | undefined {
  for (const id of sorted(remote.secretObsolete)) {
    const obsolete = remote.secretObsolete![id]!
    const done = local.secretRemoved?.[id] ?? []
    const revision = obsolete.revisions.find(r => !done.includes(r))
    if (revision !== undefined) return { kind: 'secret-remove', secretId: id, secretRevision: revision, ...withLabel(obsolete.label) }
  }
  return undefined
}
