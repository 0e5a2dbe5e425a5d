import type { UnitName } from '../ids.ts'
import { readerOf } from './model-draft.ts'
import type { ModelContext } from './model-types.ts'
import { ownedBy, readableBy } from './apply/secret-records.ts'
import type { SecretRecord } from './secret-types.ts'
import { tableValues } from './table.ts'

/**
 * Which revision of which secret a unit's `secret-get` reads (Juju's secretsmanager
 * GetSecretContentInfo): an owner always reads the latest; a consumer reads the revision
 * it tracks, the latest on its first read and with `--refresh` (which then tracks it),
 * the latest just this once with `--peek`. A label names the owner's label of a secret
 * the unit owns, else the unit's own consumer label. What the consumer should track
 * afterwards comes back as `track`, for the controller to commit (`secret-consumed`).
 */
export interface SecretReadRequest {
  readonly id?: string
  readonly label?: string
  readonly refresh?: boolean
  readonly peek?: boolean
}

export type SecretReadPlan =
  | { readonly ok: true, readonly id: string, readonly revision: number, readonly sealed: string, readonly track?: { readonly revision: number, readonly label?: string } }
  | { readonly ok: false, readonly error: string }

function byLabel (model: ModelContext, unit: { name: UnitName, application: string }, label: string): SecretRecord | undefined {
  const secrets = model.secrets === undefined ? [] : tableValues(model.secrets)
  return secrets.find(s => ownedBy(s, unit) && s.label === label) ??
    secrets.find(s => s.consumers[unit.name]?.label === label)
}

export function planSecretRead (model: ModelContext, unitName: UnitName, request: SecretReadRequest): SecretReadPlan {
  const reader = readerOf(model)
  const unit = reader.unit(unitName)
  if (unit === undefined) return { ok: false, error: `unit ${JSON.stringify(unitName)} not found` }
  const viewer = { name: unit.name, application: unit.application }
  const secret = request.id !== undefined ? reader.secret(request.id) : byLabel(model, viewer, request.label ?? '')
  if (secret === undefined) {
    return { ok: false, error: request.id !== undefined ? `secret ${JSON.stringify(request.id)} not found` : `secret with label ${JSON.stringify(request.label ?? '')} not found` }
  }
  // Juju's ErrPerm: whether it exists is not the caller's to learn either.
  if (!readableBy(reader, secret, viewer)) return { ok: false, error: 'permission denied' }
  const owner = ownedBy(secret, viewer)
  const tracked = secret.consumers[unit.name]
  let revision = secret.latestRevision
  let track: { revision: number, label?: string } | undefined
  if (!owner) {
    if (tracked !== undefined && request.refresh !== true && request.peek !== true) revision = tracked.revision
    if (tracked === undefined || request.refresh === true) track = { revision }
    const label = request.id !== undefined ? request.label : undefined
    if (label !== undefined && label !== tracked?.label) track = { revision: track?.revision ?? tracked?.revision ?? revision, label }
  }
  const stored = secret.revisions.find(r => r.revision === revision)
  if (stored === undefined) return { ok: false, error: `secret revision ${revision} not found` }
  return { ok: true, id: secret.id, revision, sealed: stored.sealed, ...(track === undefined ? {} : { track }) }
}
