import type { UnitName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { isPlainRecord } from '../charm-summary.ts'
import type { ModelDraft } from '../model-draft.ts'
import { tableEntries } from '../table.ts'
import type { ModelCommand, UnitRecord } from '../model-types.ts'
import { rotateIntervalMs, type SecretGrant, type SecretRecord } from '../secret-types.ts'
import { expireTrigger, rotateTrigger } from '../secret-triggers.ts'
import { requireAdmin, requireAnyController, requireUnitAgent } from './authorisation.ts'
import { applicationName, clockReading, relationId, text, unitName } from './fields.ts'
import { getApplication, getUnit } from './lookups.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'
import {
  checkedUpsert, dropSecret, getSecret, newSecret, ownedBy, ownerLabelTaken, putSecret, readableBy, sealedContent, secretId, upsertSecret
} from './secret-records.ts'

/**
 * Secrets (Juju 3: apiserver/facades/agent/secretsmanager, domain/secret): a charm's
 * changes arrive with its hook's commit (`commitSecretChanges`), what a consumer reads is
 * tracked by `secret-consumed`, and the operator's user secrets by the admin commands.
 * Who may do what is checked here again, whatever the unit agent checked before:
 * a unit manages its own secrets and, while it leads, its application's.
 */

/** The unit may change the secret: it owns it, and for an application's secret it leads. */
function requireManager (d: ModelDraft, c: ModelCommand, secret: SecretRecord, unit: UnitRecord): void {
  if (!ownedBy(secret, unit)) refuse(c, `permission denied: ${q(unit.name)} does not own secret ${q(secret.id)}`)
  if (secret.owner.kind === 'application' && d.lease(unit.application)?.holder !== unit.name) {
    refuse(c, `${q(unit.name)} is not the leader of ${q(unit.application)}`)
  }
}

function list (c: ModelCommand, field: string, value: unknown): unknown[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) refuse(c, `secret ${field} must be a list`)
  return value
}

/** The hook's secret changes, in Juju's order: creates, updates, grants, revokes, removes. */
export function commitSecretChanges (d: ModelDraft, c: ModelCommand, unit: UnitRecord, value: unknown, now: number): void {
  if (value === undefined) return
  if (!isPlainRecord(value)) refuse(c, 'secret changes must be a map')
  const creates = list(c, 'creates', value.creates)
  const updates = list(c, 'updates', value.updates)
  const grants = list(c, 'grants', value.grants)
  const revokes = list(c, 'revokes', value.revokes)
  const removes = list(c, 'removes', value.removes)
  const total = creates.length + updates.length + grants.length + revokes.length + removes.length
  if (total > limits.secretChangesPerHookMax) refuse(c, `${total} secret changes exceed the maximum of ${limits.secretChangesPerHookMax} per hook`)
  for (const entry of creates) createSecret(d, c, unit, entry, now)
  for (const entry of updates) {
    const change = checkedUpsert(c, entry)
    const secret = getSecret(d, c, change.id)
    requireManager(d, c, secret, unit)
    putSecret(d, updatedSecret(d, c, secret, change, now))
  }
  for (const entry of grants) grantOrRevoke(d, c, unit, entry, 'grant')
  for (const entry of revokes) grantOrRevoke(d, c, unit, entry, 'revoke')
  for (const entry of removes) removeFromHook(d, c, unit, entry)
}

function createSecret (d: ModelDraft, c: ModelCommand, unit: UnitRecord, entry: unknown, now: number): void {
  const change = checkedUpsert(c, entry)
  if (change.sealed === undefined) refuse(c, `secret ${q(change.id)} has no content`)
  if (d.secret(change.id) !== undefined) refuse(c, `secret ${q(change.id)} already exists`)
  if (d.secrets.size >= limits.modelSecretsMax) refuse(c, `the model already keeps ${limits.modelSecretsMax} secrets`)
  const ownerKind = (entry as { owner?: unknown }).owner
  if (ownerKind !== 'application' && ownerKind !== 'unit') refuse(c, `secret owner must be "application" or "unit", got ${q(ownerKind)}`)
  const owner = ownerKind === 'unit' ? { kind: 'unit' as const, name: unit.name } : { kind: 'application' as const, name: unit.application }
  const secret = newSecret(change.id, owner, change, now)
  requireManager(d, c, secret, unit)
  if (ownerLabelTaken(d, secret, secret.label)) refuse(c, `secret with label ${q(secret.label)} already exists`)
  putSecret(d, secret)
}

function updatedSecret (d: ModelDraft, c: ModelCommand, secret: SecretRecord, change: ReturnType<typeof checkedUpsert>, now: number): SecretRecord {
  if (change.label !== undefined && ownerLabelTaken(d, secret, change.label)) refuse(c, `secret with label ${q(change.label)} already exists`)
  return upsertSecret(secret, change, now)
}

function grantOrRevoke (d: ModelDraft, c: ModelCommand, unit: UnitRecord, entry: unknown, what: 'grant' | 'revoke'): void {
  if (!isPlainRecord(entry)) refuse(c, `each secret ${what} must be a map`)
  const secret = getSecret(d, c, secretId(c, entry.id))
  requireManager(d, c, secret, unit)
  const id = relationId(c, entry.relationId)
  const relation = d.relation(id)
  if (relation === undefined || !relation.endpoints.some(ep => ep.application === unit.application)) refuse(c, `relation ${id} not found`)
  const own = relation.endpoints.find(ep => ep.application === unit.application)!
  const remote = relation.peer ? own.application : relation.endpoints.find(ep => ep.application !== unit.application)!.application
  const target: SecretGrant['target'] = entry.unit === undefined
    ? { kind: 'application', name: remote }
    : { kind: 'unit', name: unitName(c, entry.unit) }
  if (target.kind === 'unit' && target.name.slice(0, target.name.lastIndexOf('/')) !== remote) {
    refuse(c, `cannot specify unit ${q(target.name)} in relation to application ${q(remote)}`)
  }
  const same = (g: SecretGrant): boolean => g.relationId === id && g.target.kind === target.kind && g.target.name === target.name
  if (what === 'grant') {
    if (secret.grants.some(same)) return
    if (secret.grants.length >= limits.secretGrantsMax) refuse(c, `secret ${q(secret.id)} already has ${limits.secretGrantsMax} grants`)
    putSecret(d, { ...secret, grants: [...secret.grants, { target, relationId: id }] })
    return
  }
  // Revoking an application's grant also revokes its units' grants in the relation (Juju's RevokeSecretAccess).
  const revoked = (g: SecretGrant): boolean => same(g) || (target.kind === 'application' && g.relationId === id && g.target.kind === 'unit' && g.target.name.startsWith(`${remote}/`))
  putSecret(d, withoutConsumers(d, { ...secret, grants: secret.grants.filter(g => !revoked(g)) }))
}

/** Consumers that can no longer read the secret stop tracking it. */
function withoutConsumers (d: ModelDraft, secret: SecretRecord): SecretRecord {
  const consumers: Record<UnitName, SecretRecord['consumers'][string]> = {}
  for (const [name, consumer] of Object.entries(secret.consumers)) {
    const unit = d.unit(name)
    if (unit !== undefined && readableBy(d, secret, unit)) consumers[name] = consumer
  }
  return { ...secret, consumers }
}

function removeFromHook (d: ModelDraft, c: ModelCommand, unit: UnitRecord, entry: unknown): void {
  if (!isPlainRecord(entry)) refuse(c, 'each secret removal must be a map')
  const secret = getSecret(d, c, secretId(c, entry.id))
  requireManager(d, c, secret, unit)
  removeRevisions(d, c, secret, entry.revision)
}

function removeRevisions (d: ModelDraft, c: ModelCommand, secret: SecretRecord, revision: unknown): void {
  if (revision === undefined) {
    dropSecret(d, secret)
    return
  }
  if (!Number.isSafeInteger(revision) || !secret.revisions.some(r => r.revision === revision)) refuse(c, `secret revision ${q(revision)} not found`)
  const revisions = secret.revisions.filter(r => r.revision !== revision)
  if (revisions.length === 0) dropSecret(d, secret)
  else putSecret(d, { ...secret, revisions })
}

function userSecret (d: ModelDraft, c: ModelCommand, id: unknown): SecretRecord {
  requireAdmin(c)
  const secret = getSecret(d, c, secretId(c, id))
  if (secret.owner.kind !== 'model') refuse(c, `secret ${q(secret.id)} is a charm secret; only its owner changes it`)
  return secret
}

function applicationsOf (d: ModelDraft, c: ModelCommand, value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > limits.secretGrantsMax) refuse(c, `applications must be a list of 1 to ${limits.secretGrantsMax} names`)
  return value.map(name => getApplication(d, c, applicationName(c, name)).name)
}

export const secretCommands: HandlerTable<'secret-consumed' | 'add-secret' | 'update-secret' | 'remove-secret' | 'grant-secret' | 'revoke-secret' | 'secret-rotated' | 'secret-rotate-due' | 'secret-expire-due'> = {
  'secret-consumed': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    const secret = getSecret(d, c, secretId(c, c.id))
    if (!readableBy(d, secret, unit)) refuse(c, 'permission denied')
    if (!Number.isSafeInteger(c.revision) || c.revision < 1 || c.revision > secret.latestRevision) refuse(c, `secret revision ${q(c.revision)} not found`)
    const previous = secret.consumers[name]
    const label = c.label === undefined ? previous?.label ?? '' : text(c, 'secret label', c.label, 256)
    if (previous === undefined && Object.keys(secret.consumers).length >= limits.secretConsumersMax) refuse(c, `secret ${q(secret.id)} already has ${limits.secretConsumersMax} consumers`)
    if (label !== '' && consumerLabelTaken(d, secret.id, name, label)) refuse(c, `secret with label ${q(label)} already exists`)
    const consumers = { ...secret.consumers, [name]: { revision: c.revision, label } }
    putSecret(d, { ...secret, consumers: Object.fromEntries(Object.entries(consumers).sort(([a], [b]) => a < b ? -1 : 1)) })
    return {}
  },
  'add-secret': (d, c) => {
    requireAdmin(c)
    const id = secretId(c, c.id)
    if (d.secret(id) !== undefined) refuse(c, `secret ${q(id)} already exists`)
    if (d.secrets.size >= limits.modelSecretsMax) refuse(c, `the model already keeps ${limits.modelSecretsMax} secrets`)
    const label = text(c, 'secret name', c.label, 256)
    if (label === '') refuse(c, 'a user secret needs a name')
    const change = checkedUpsert(c, { id, label, ...(c.description === undefined ? {} : { description: c.description }), content: c.content })
    const secret = newSecret(id, { kind: 'model' }, { ...change, sealed: sealedContent(c, c.content) }, clockReading(c, c.now))
    if (ownerLabelTaken(d, secret, label)) refuse(c, `secret with name ${q(label)} already exists`)
    putSecret(d, secret)
    return {}
  },
  'update-secret': (d, c) => {
    const change = checkedUpsert(c, c.secret)
    const secret = userSecret(d, c, change.id)
    putSecret(d, updatedSecret(d, c, secret, change, clockReading(c, c.now)))
    return {}
  },
  'remove-secret': (d, c) => {
    removeRevisions(d, c, userSecret(d, c, c.id), c.revision)
    return {}
  },
  'grant-secret': (d, c) => {
    const secret = userSecret(d, c, c.id)
    const grants = [...secret.grants]
    for (const name of applicationsOf(d, c, c.applications)) {
      if (!grants.some(g => g.relationId === null && g.target.kind === 'application' && g.target.name === name)) grants.push({ target: { kind: 'application', name }, relationId: null })
    }
    if (grants.length > limits.secretGrantsMax) refuse(c, `secret ${q(secret.id)} would have more than ${limits.secretGrantsMax} grants`)
    putSecret(d, { ...secret, grants })
    return {}
  },
  'revoke-secret': (d, c) => {
    const secret = userSecret(d, c, c.id)
    const names = new Set(applicationsOf(d, c, c.applications))
    const grants = secret.grants.filter(g => !(g.relationId === null && g.target.kind === 'application' && names.has(g.target.name)))
    putSecret(d, withoutConsumers(d, { ...secret, grants }))
    return {}
  },
  'secret-rotated': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const secret = getSecret(d, c, secretId(c, c.id))
    requireManager(d, c, secret, getUnit(d, c, name))
    if (!Number.isSafeInteger(c.originalRevision) || c.originalRevision < 0) refuse(c, `original revision must be a revision, got ${q(c.originalRevision)}`)
    // A report of a rotation the model has already rescheduled (sent again after a crash) changes nothing.
    if (secret.rotateDue === undefined) return {}
    putSecret(d, rotatedSecret(secret, c.originalRevision, clockReading(c, c.now)))
    return {}
  },
  'secret-rotate-due': (d, c) => {
    requireAnyController(c)
    const secret = getSecret(d, c, secretId(c, c.id))
    const deadline = dueDeadline(c, c.deadline, c.now)
    // Proposed again by a controller that took over, or overtaken by a rotation or a new policy: nothing to mark.
    if (rotateTrigger(secret) !== deadline) return {}
    putSecret(d, { ...secret, rotateDue: deadline })
    return {}
  },
  'secret-expire-due': (d, c) => {
    requireAnyController(c)
    const secret = getSecret(d, c, secretId(c, c.id))
    const deadline = dueDeadline(c, c.deadline, c.now)
    const revision = secret.revisions.find(r => r.revision === c.revision)
    if (revision === undefined || expireTrigger(secret, revision) !== deadline) return {}
    // Retried from when it fired, not from the deadline: a controller that was down for
    // a while fires once, not once per missed retry (Juju's secretexpire does the same).
    const firedAt = clockReading(c, c.now)
    putSecret(d, { ...secret, revisions: secret.revisions.map(r => r === revision ? { ...r, expireDue: firedAt } : r) })
    return {}
  }
}

/** A trigger's deadline, which the proposing controller's clock must have passed. */
function dueDeadline (c: ModelCommand, deadline: unknown, now: unknown): number {
  const at = clockReading(c, deadline)
  if (clockReading(c, now) < at) refuse(c, `secret trigger at ${at} is not due at ${q(now)}`)
  return at
}

/**
 * The next rotation after the owner answered a due one (Juju's SecretsRotated): the
 * policy's interval from the deadline, or the retry delay when the hook made no new
 * revision, or when the latest revision expires before the next rotation would come.
 */
function rotatedSecret (secret: SecretRecord, originalRevision: number, now: number): SecretRecord {
  const { rotateDue: _, ...rest } = secret
  const last = secret.nextRotateTime ?? now
  const interval = rotateIntervalMs(secret.rotatePolicy)
  if (interval === null) return rest
  const expires = secret.revisions.find(r => r.revision === secret.latestRevision)?.expireTime ?? null
  const forced = last + limits.secretRotateRetryDelayMs
  const willExpire = expires !== null && expires < last + interval
  const next = (willExpire && forced < expires) || secret.latestRevision === originalRevision ? forced : last + interval
  return { ...rest, nextRotateTime: next }
}

function consumerLabelTaken (d: ModelDraft, id: string, unit: UnitName, label: string): boolean {
  let taken = false
  for (const [otherId, other] of tableEntries(d.secrets.finish())) {
    if (otherId !== id && other.consumers[unit]?.label === label) taken = true
  }
  return taken
}
