/**
 * What the secret-* hook tools see of a unit's secrets during one run (Juju's
 * HookContext secret methods, internal/worker/uniter/runner/context/context.go): adds,
 * updates, grants, revokes and removals are buffered and committed with the hook's other
 * changes when it exits 0; reads see them (a secret added in this hook can be read back,
 * an update's content is what `--peek` returns). Content is read through a controller,
 * which alone can open it. Refusals throw a HookToolError.
 */
import type { SecretRotatePolicy } from '../../runtime/model/secret-types.ts'

/** The fields `secret-add` and `secret-set` take; absent fields are left as they are. */
export interface SecretFields {
  label?: string
  description?: string
  rotatePolicy?: SecretRotatePolicy
  /** ms since the epoch. */
  expireTime?: number
}

/** A secret as `secret-info-get` prints it (the owner's view). */
export interface SecretMetadataView {
  /** The bare id, as Juju keys its output. */
  id: string
  revision: number
  label: string
  owner: 'application' | 'unit'
  description: string
  rotation: SecretRotatePolicy | ''
  /** ms; the latest revision's expiry. */
  expiry: number | null
  /** ms; when the next rotation is due. */
  rotates: number | null
  access: Array<{ target: string, scope: string, role: 'view' }>
}

export interface SecretRef {
  /** A bare id (the URI is parsed by the tool). */
  id?: string
  label?: string
}

export interface HookSecrets {
  /** Returns the new secret's URI (`secret:<id>`). */
  add (owner: 'application' | 'unit', content: Record<string, string>, fields: SecretFields): Promise<string>
  get (ref: SecretRef, options: { refresh: boolean, peek: boolean }): Promise<Record<string, string>>
  set (id: string, content: Record<string, string> | undefined, fields: SecretFields): Promise<void>
  remove (id: string, revision: number | undefined): Promise<void>
  grant (id: string, relationId: number, unit: string | undefined): Promise<void>
  revoke (id: string, relationId: number, unit: string | undefined): Promise<void>
  /** URIs of the secrets this unit owns (its own and its application's), sorted. */
  ids (): Promise<string[]>
  /** An owned secret's metadata, by id or owner label; undefined when there is none. */
  info (ref: SecretRef): Promise<SecretMetadataView | undefined>
}
