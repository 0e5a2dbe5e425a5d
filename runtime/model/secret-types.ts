import type { ApplicationName, RelationId, UnitName } from '../ids.ts'

/**
 * Juju 3's secrets as the model keeps them (core/secrets, domain/secret): a secret is
 * owned by an application (its leader manages it, every unit of it reads it), by one
 * unit, or by the model (a user secret, `juju add-secret`); it has revisions, an owner
 * label, a description, a rotation policy and an expiry; it is granted to applications or
 * units, for a charm's secrets in the scope of a relation; and each consumer unit tracks
 * the revision it reads until it refreshes.
 *
 * The content of a revision is kept only sealed: a controller encrypts it before the
 * command reaches the log (runtime/model/secret-sealing.ts), so the Raft log, its
 * RaftSnapshots and the applied model hold ciphertext, and only a controller, with the
 * key from its own data directory, can open it for a unit entitled to read it.
 */

export type SecretRotatePolicy = 'never' | 'hourly' | 'daily' | 'weekly' | 'monthly' | 'quarterly' | 'yearly'
export const secretRotatePolicies: readonly SecretRotatePolicy[] = ['never', 'hourly', 'daily', 'weekly', 'monthly', 'quarterly', 'yearly']

export type SecretOwner =
  | { readonly kind: 'application', readonly name: ApplicationName }
  | { readonly kind: 'unit', readonly name: UnitName }
  /** A user secret (`juju add-secret`): the model owns it. */
  | { readonly kind: 'model' }

/** A revision's content: sealed by a controller (what the log holds), or plain on its way to one. */
export type SecretContentField =
  | { readonly sealed: string }
  | { readonly plain: Readonly<Record<string, string>> }

export interface SecretRevisionRecord {
  readonly revision: number
  /** The sealed content; '' in the views agents get (they read content through a controller). */
  readonly sealed: string
  readonly createdAt: number
  /** When this revision expires (ms); null: never. */
  readonly expireTime: number | null
  /**
   * When the controllers last found this revision's expiry due (ms, the proposing
   * controller's clock): the owner runs `secret-expired` for it, and the next trigger is
   * this plus limits.secretExpireRetryDelayMs until the revision is removed (Juju's
   * secretexpire).
   */
  readonly expireDue?: number
  /**
   * Not the latest and tracked by no consumer (Juju's obsolete revisions): the owner runs
   * `secret-remove` for it, and no consumer can come back to it.
   */
  readonly obsolete?: true
}

/** Read access for an application or a unit, in the scope of a relation (charm grants) or the model (user grants). */
export interface SecretGrant {
  readonly target: { readonly kind: 'application', readonly name: ApplicationName } | { readonly kind: 'unit', readonly name: UnitName }
  /** The relation the grant lives in; null for a grant in the model's scope. */
  readonly relationId: RelationId | null
}

/** What one consumer unit tracks of a secret it reads. */
export interface SecretConsumer {
  /** The revision `secret-get` returns until `--refresh`. */
  readonly revision: number
  /** The consumer's own label for the secret ('' for none). */
  readonly label: string
}

export interface SecretRecord {
  /** Juju's 20-character xid (base32hex, lower case); the URI is `secret:<id>`. */
  readonly id: string
  readonly owner: SecretOwner
  /** The owner's label ('' for none); a user secret's name. */
  readonly label: string
  readonly description: string
  readonly rotatePolicy: SecretRotatePolicy
  /** When the owner's next `secret-rotate` is due (ms); null when the policy is never. */
  readonly nextRotateTime: number | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly latestRevision: number
  /** Revisions still kept, ascending. */
  readonly revisions: readonly SecretRevisionRecord[]
  readonly grants: readonly SecretGrant[]
  /** Consumer units, by name, sorted. */
  readonly consumers: Readonly<Record<UnitName, SecretConsumer>>
  /**
   * The rotation deadline the controllers found due (ms, equal to `nextRotateTime` then):
   * the owner runs `secret-rotate` for it; cleared when the owner reports the rotation.
   */
  readonly rotateDue?: number
}

// ---------------------------------------------------------------------------------
// What commands carry

/** `secret-add` and `secret-set` fields; absent fields leave the value as it is. */
export interface SecretUpsert {
  readonly id: string
  readonly content?: SecretContentField
  readonly label?: string
  readonly description?: string
  readonly rotatePolicy?: SecretRotatePolicy
  /** ms since the epoch; null clears the expiry. */
  readonly expireTime?: number | null
}

/**
 * The secret changes of one hook, committed with its other changes (Juju's
 * CommitHookChanges: creates, updates, grants, revokes, deletes, then track-latest).
 */
export interface SecretHookChanges {
  /** The unit agent's clock when the hook ended: creation, update and rotation times. */
  readonly now?: number
  readonly creates?: ReadonlyArray<SecretUpsert & { readonly owner: 'application' | 'unit', readonly content: SecretContentField }>
  readonly updates?: readonly SecretUpsert[]
  /** `secret-grant`: to the relation's other application, or one unit of it. */
  readonly grants?: ReadonlyArray<{ readonly id: string, readonly relationId: RelationId, readonly unit?: UnitName }>
  readonly revokes?: ReadonlyArray<{ readonly id: string, readonly relationId: RelationId, readonly unit?: UnitName }>
  /** `secret-remove`: one revision, or the whole secret. */
  readonly removes?: ReadonlyArray<{ readonly id: string, readonly revision?: number }>
}

export type SecretCommand =
  /** The unit read the secret: it now tracks `revision`, and `label` if given (secret-get). */
  | { readonly type: 'secret-consumed', readonly unit: UnitName, readonly id: string, readonly revision: number, readonly label?: string }
  /** `juju add-secret NAME k=v…`: a user secret, owned by the model. */
  | { readonly type: 'add-secret', readonly id: string, readonly label: string, readonly description?: string, readonly content: SecretContentField, readonly now: number }
  | { readonly type: 'update-secret', readonly secret: SecretUpsert, readonly now: number }
  | { readonly type: 'remove-secret', readonly id: string, readonly revision?: number }
  | { readonly type: 'grant-secret', readonly id: string, readonly applications: readonly ApplicationName[] }
  | { readonly type: 'revoke-secret', readonly id: string, readonly applications: readonly ApplicationName[] }
  /**
   * The owner committed `secret-rotate` (Juju's SecretsRotated): the next rotation is
   * scheduled from the deadline that fell due by the policy, or only
   * limits.secretRotateRetryDelayMs later when the hook made no new revision.
   */
  | { readonly type: 'secret-rotated', readonly unit: UnitName, readonly id: string, readonly originalRevision: number, readonly now: number }
  /** A controller's clock passed a rotation deadline (plus the drift margin): the owner is told. */
  | { readonly type: 'secret-rotate-due', readonly id: string, readonly deadline: number, readonly now: number }
  /** A controller's clock passed a revision's expiry trigger (plus the drift margin): the owner is told. */
  | { readonly type: 'secret-expire-due', readonly id: string, readonly revision: number, readonly deadline: number, readonly now: number }

export type SecretCommandType = SecretCommand['type']
export const secretCommandTypes = [
  'secret-consumed', 'add-secret', 'update-secret', 'remove-secret', 'grant-secret', 'revoke-secret', 'secret-rotated', 'secret-rotate-due', 'secret-expire-due'
] as const satisfies readonly SecretCommandType[]

// ---------------------------------------------------------------------------------
// URIs

const idPattern = /^[0-9a-v]{20}$/

export function isSecretId (value: unknown): value is string {
  return typeof value === 'string' && idPattern.test(value)
}

/** `secret:<id>`, as Juju prints a secret of the same model. */
export function secretUri (id: string): string {
  return `secret:${id}`
}

/**
 * The id in `secret:<id>`, `secret://<model uuid>/<id>` or a bare id, as Juju's
 * secrets.ParseURI accepts them; undefined for anything else.
 */
export function parseSecretUri (text: string): string | undefined {
  let rest = text
  if (rest.startsWith('secret://')) {
    rest = rest.slice('secret://'.length)
    const slash = rest.indexOf('/')
    if (slash < 0) return undefined
    rest = rest.slice(slash + 1)
  } else if (rest.startsWith('secret:')) {
    rest = rest.slice('secret:'.length)
  }
  return isSecretId(rest) ? rest : undefined
}

/** The interval a rotation policy sets until the next `secret-rotate` (Juju's RotatePolicy.NextRotateTime). */
export function rotateIntervalMs (policy: SecretRotatePolicy): number | null {
  const hour = 3_600_000
  switch (policy) {
    case 'never': return null
    case 'hourly': return hour
    case 'daily': return 24 * hour
    case 'weekly': return 7 * 24 * hour
    case 'monthly': return 30 * 24 * hour
    case 'quarterly': return 90 * 24 * hour
    case 'yearly': return 365 * 24 * hour
  }
}
