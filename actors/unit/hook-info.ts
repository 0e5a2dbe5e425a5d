import type { RelationId, StorageId, UnitName, ApplicationName } from '../../runtime/ids.ts'

/**
 * Hook kinds the uniter runs (juju-semantics §7.1). `leader-deposed` is declared by
 * Juju but never executed, so it is not a kind here.
 */
export type UnitHookKind =
  | 'install' | 'start' | 'config-changed' | 'upgrade-charm' | 'stop' | 'remove'
  | 'leader-elected' | 'leader-settings-changed' | 'update-status'

export type RelationHookKind =
  | 'relation-created' | 'relation-joined' | 'relation-changed' | 'relation-departed' | 'relation-broken'

export type StorageHookKind = 'storage-attached' | 'storage-detaching'

/** Juju 3's secret hooks (internal/worker/uniter/secrets/resolver.go). */
export type SecretHookKind = 'secret-changed' | 'secret-rotate' | 'secret-expired' | 'secret-remove'

export type HookKind = UnitHookKind | RelationHookKind | StorageHookKind | SecretHookKind

/** What the uniter persists about the current or last hook (Juju's `hook` blob). */
export interface HookInfo {
  kind: HookKind
  relationId?: RelationId
  /** Endpoint name of the relation, for the hook name `<ep>-relation-<kind>`. */
  endpoint?: string
  remoteUnit?: UnitName
  remoteApplication?: ApplicationName
  /** The remote settings version this hook observes; recorded on commit. */
  changeVersion?: number
  /** For `-departed`: the unit that is leaving (the remote unit, or this unit when it is dying). */
  departee?: UnitName
  storageId?: StorageId
  storageName?: string
  /**
   * For `-relation-created`: the relation's kind, so its local state can be made even if
   * the relation is gone by the time the hook commits (retried after an error or a crash).
   */
  relationKind?: { peer: boolean, implicit: boolean, containerScoped: boolean }
  /** Secret hooks: the secret's bare id (JUJU_SECRET_ID is its URI), label and revision. */
  secretId?: string
  secretLabel?: string
  secretRevision?: number
  /** `secret-rotate` and `secret-expired`: the trigger the hook answers, so it runs once per trigger. */
  secretDue?: number
  /** `secret-rotate`: the latest revision when the rotation fell due (did the hook make a new one?). */
  secretOriginalRevision?: number
}

export function isSecretHook (kind: HookKind): kind is SecretHookKind {
  return kind.startsWith('secret-')
}

export function isRelationHook (kind: HookKind): kind is RelationHookKind {
  return kind.startsWith('relation-')
}

export function isStorageHook (kind: HookKind): kind is StorageHookKind {
  return kind.startsWith('storage-')
}

/** The executable name Juju runs: `install`, `db-relation-joined`, `data-storage-attached`. */
export function hookName (hook: HookInfo): string {
  if (isRelationHook(hook.kind)) return `${hook.endpoint ?? '?'}-${hook.kind}`
  if (isStorageHook(hook.kind)) return `${hook.storageName ?? '?'}-${hook.kind}`
  return hook.kind
}

/** A short description for logs and traces: `db-relation-joined mysql/0 (rel 3)`. */
export function describeHook (hook: HookInfo): string {
  const parts = [hookName(hook)]
  if (hook.remoteUnit !== undefined) parts.push(hook.remoteUnit)
  else if (hook.remoteApplication !== undefined && hook.kind === 'relation-changed') parts.push(`app ${hook.remoteApplication}`)
  if (hook.storageId !== undefined) parts.push(hook.storageId)
  return parts.join(' ')
}
