import type { ApplicationName, UnitName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { isPlainRecord } from '../charm-summary.ts'
import { keys } from '../keys.ts'
import type { ModelDraft, ModelReader } from '../model-draft.ts'
import type { KeyScope, ModelCommand } from '../model-types.ts'
import { isSecretId, rotateIntervalMs, secretRotatePolicies, type SecretContentField, type SecretRecord, type SecretRotatePolicy, type SecretUpsert } from '../secret-types.ts'
import { q, refuse } from './refusal.ts'
import { text } from './fields.ts'
import { tableEntries } from '../table.ts'

/**
 * Reading and writing secret records inside a command: field checks, who may see and
 * read a secret, and the one write that records the delta key.
 */

const labelLengthMax = 256
const descriptionLengthMax = 1024

export function secretId (c: ModelCommand, value: unknown): string {
  if (!isSecretId(value)) refuse(c, `${q(value)} is not a secret id (20 characters 0-9, a-v)`)
  return value
}

export function getSecret (d: ModelDraft, c: ModelCommand, id: string): SecretRecord {
  const secret = d.secret(id)
  if (secret === undefined) refuse(c, `secret ${q(id)} not found`)
  return secret
}

/**
 * Content as the log may hold it: sealed by a controller. Plain content here means a
 * controller proposed it without sealing: refused, so plaintext never stays in the model.
 */
export function sealedContent (c: ModelCommand, value: unknown): string {
  if (!isPlainRecord(value)) refuse(c, 'secret content must be {sealed}')
  if (Object.hasOwn(value, 'plain')) refuse(c, 'secret content reached the log unsealed')
  const sealed = value.sealed
  if (typeof sealed !== 'string' || sealed === '' || sealed.length > limits.secretSealedBytesMax) {
    refuse(c, `sealed secret content must be a string of 1 to ${limits.secretSealedBytesMax} characters`)
  }
  return sealed
}

export function rotatePolicy (c: ModelCommand, value: unknown): SecretRotatePolicy {
  if (!(secretRotatePolicies as readonly unknown[]).includes(value)) refuse(c, `${q(value)} is not a rotate policy (${secretRotatePolicies.join(', ')})`)
  return value as SecretRotatePolicy
}

function timestamp (c: ModelCommand, field: string, value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) refuse(c, `${field} must be a time in whole milliseconds, got ${q(value)}`)
  return value as number
}

/** The upsert's fields, checked; content is sealed. */
export function checkedUpsert (c: ModelCommand, value: unknown): SecretUpsert & { sealed?: string } {
  if (!isPlainRecord(value)) refuse(c, 'each secret change must be a map')
  const out: { -readonly [K in keyof SecretUpsert]: SecretUpsert[K] } & { sealed?: string } = { id: secretId(c, value.id) }
  if (value.content !== undefined) out.sealed = sealedContent(c, value.content)
  if (value.label !== undefined) out.label = text(c, 'secret label', value.label, labelLengthMax)
  if (value.description !== undefined) out.description = text(c, 'secret description', value.description, descriptionLengthMax)
  if (value.rotatePolicy !== undefined) out.rotatePolicy = rotatePolicy(c, value.rotatePolicy)
  if (value.expireTime !== undefined) out.expireTime = value.expireTime === null ? null : timestamp(c, 'expire time', value.expireTime)
  return out
}

export function nextRotateTime (policy: SecretRotatePolicy, now: number): number | null {
  const interval = rotateIntervalMs(policy)
  return interval === null ? null : now + interval
}

/** Applies an upsert's fields to a secret: new content is a new revision. */
export function upsertSecret (secret: SecretRecord, change: SecretUpsert & { sealed?: string }, now: number): SecretRecord {
  let next: SecretRecord = { ...secret, updatedAt: now }
  if (change.label !== undefined) next = { ...next, label: change.label }
  if (change.description !== undefined) next = { ...next, description: change.description }
  if (change.rotatePolicy !== undefined && change.rotatePolicy !== secret.rotatePolicy) {
    // A new policy starts a new schedule: a rotation due under the old one is not owed.
    const { rotateDue: _, ...rest } = next
    next = { ...rest, rotatePolicy: change.rotatePolicy, nextRotateTime: nextRotateTime(change.rotatePolicy, now) }
  }
  const expireTime = change.expireTime
  if (change.sealed !== undefined) {
    const revision = secret.latestRevision + 1
    const revisions = [...secret.revisions, { revision, sealed: change.sealed, createdAt: now, expireTime: expireTime ?? null }]
    next = { ...next, latestRevision: revision, revisions: revisions.slice(-limits.secretRevisionsMax) }
  } else if (expireTime !== undefined && next.revisions.length > 0) {
    // A new expiry starts afresh: triggers of the old one are not retried.
    const revisions = next.revisions.map(r => r.revision === next.latestRevision ? { revision: r.revision, sealed: r.sealed, createdAt: r.createdAt, expireTime } : r)
    next = { ...next, revisions }
  }
  return next
}

/** A new secret with its first revision. */
export function newSecret (id: string, owner: SecretRecord['owner'], change: SecretUpsert & { sealed?: string }, now: number): SecretRecord {
  const policy = change.rotatePolicy ?? 'never'
  const empty: SecretRecord = {
    id,
    owner,
    label: change.label ?? '',
    description: change.description ?? '',
    rotatePolicy: policy,
    nextRotateTime: nextRotateTime(policy, now),
    createdAt: now,
    updatedAt: now,
    latestRevision: 0,
    revisions: [],
    grants: [],
    consumers: {}
  }
  return upsertSecret(empty, { ...change, rotatePolicy: policy }, now)
}

export function ownerLabelTaken (d: ModelDraft, secret: SecretRecord, label: string): boolean {
  if (label === '') return false
  let taken = false
  // The draft's table as it stands: secrets created earlier in this command count too.
  for (const [id, other] of tableEntries(d.secrets.finish())) {
    if (id === secret.id || other.label !== label) continue
    if (sameOwner(other.owner, secret.owner)) taken = true
  }
  return taken
}

function sameOwner (a: SecretRecord['owner'], b: SecretRecord['owner']): boolean {
  if (a.kind === 'model' || b.kind === 'model') return a.kind === b.kind
  return a.kind === b.kind && a.name === b.name
}

/** Applications whose agents may know of the secret: owner, grantees, consumers. */
export function secretApplications (secret: SecretRecord): ApplicationName[] {
  const apps = new Set<ApplicationName>()
  if (secret.owner.kind !== 'model') apps.add(applicationOfName(secret.owner.name, secret.owner.kind))
  for (const grant of secret.grants) apps.add(applicationOfName(grant.target.name, grant.target.kind))
  for (const unit of Object.keys(secret.consumers)) apps.add(applicationOfName(unit, 'unit'))
  return [...apps].sort()
}

function applicationOfName (name: string, kind: 'application' | 'unit'): ApplicationName {
  return kind === 'application' ? name : name.slice(0, name.lastIndexOf('/'))
}

export function secretScope (secret: SecretRecord): KeyScope {
  return { kind: 'relation', applications: secretApplications(secret) }
}

export function putSecret (d: ModelDraft, secret: SecretRecord): void {
  d.secrets.set(secret.id, withObsoleteRevisions(secret))
  d.touch(keys.secret(secret.id))
}

/**
 * Marks the revisions no consumer tracks, other than the latest, obsolete, as Juju's
 * state does whenever a revision is added or a consumer moves on (a charm's secrets
 * only: a user secret's old revisions have no owner to tell).
 */
function withObsoleteRevisions (secret: SecretRecord): SecretRecord {
  if (secret.owner.kind === 'model') return secret
  const tracked = new Set(Object.values(secret.consumers).map(consumer => consumer.revision))
  let changed = false
  const revisions = secret.revisions.map(r => {
    if (r.obsolete === true || r.revision === secret.latestRevision || tracked.has(r.revision)) return r
    changed = true
    return { ...r, obsolete: true as const }
  })
  return changed ? { ...secret, revisions } : secret
}

export function dropSecret (d: ModelDraft, secret: SecretRecord): void {
  d.secrets.delete(secret.id)
  d.remove(keys.secret(secret.id), secretScope(secret))
}

/** The unit owns the secret: its own, or its application's (every unit reads it; the leader manages it). */
export function ownedBy (secret: SecretRecord, unit: { name: UnitName, application: ApplicationName }): boolean {
  if (secret.owner.kind === 'unit') return secret.owner.name === unit.name
  if (secret.owner.kind === 'application') return secret.owner.name === unit.application
  return false
}

/**
 * Whether `unit` may read the secret's content: it owns it, or holds a grant whose
 * relation still exists (Juju removes a relation's grants with the relation).
 */
export function readableBy (reader: ModelReader, secret: SecretRecord, unit: { name: UnitName, application: ApplicationName }): boolean {
  if (ownedBy(secret, unit)) return true
  return secret.grants.some(grant =>
    (grant.target.kind === 'application' ? grant.target.name === unit.application : grant.target.name === unit.name) &&
    (grant.relationId === null || reader.relation(grant.relationId) !== undefined))
}
