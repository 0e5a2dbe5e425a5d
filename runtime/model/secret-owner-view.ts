import type { UnitRecord, ModelContext } from './model-types.ts'
import type { RemoteState, SecretExpiryDue, SecretRotationDue } from '../unit-remote-state.ts'
import { forEachTableEntry } from './table.ts'
import type { SecretRecord } from './secret-types.ts'

/**
 * What the owner of secrets is told (Juju's remote state SecretRotations,
 * ExpiredSecretRevisions and ObsoleteSecretRevisions): rotations and expiries the
 * controllers found due, and revisions no consumer tracks. A unit is told of its own
 * secrets, and of its application's only while it believes it leads, as Juju's uniter
 * watches application secrets from the leader alone.
 */
export type SecretOwnerView = Pick<RemoteState, 'secretRotations' | 'secretExpirations' | 'secretObsolete'>

function manages (secret: SecretRecord, unit: UnitRecord, leader: boolean): boolean {
  if (secret.owner.kind === 'unit') return secret.owner.name === unit.name
  return secret.owner.kind === 'application' && secret.owner.name === unit.application && leader
}

export function secretOwnerView (context: ModelContext, unit: UnitRecord, leader: boolean): SecretOwnerView {
  if (context.secrets === undefined || context.secrets.size === 0 || unit.life !== 'alive') return {}
  const rotations: Record<string, SecretRotationDue> = {}
  const expirations: Record<string, SecretExpiryDue> = {}
  const obsolete: Record<string, { label: string, revisions: number[] }> = {}
  forEachTableEntry(context.secrets, (id, secret) => {
    if (!manages(secret, unit, leader)) return
    if (secret.rotateDue !== undefined) rotations[id] = { due: secret.rotateDue, label: secret.label, revision: secret.latestRevision }
    for (const r of secret.revisions) {
      if (r.expireDue !== undefined) expirations[`${id}/${r.revision}`] = { id, revision: r.revision, due: r.expireDue, label: secret.label }
      if (r.obsolete === true) (obsolete[id] ??= { label: secret.label, revisions: [] }).revisions.push(r.revision)
    }
  })
  return {
    ...(Object.keys(rotations).length === 0 ? {} : { secretRotations: rotations }),
    ...(Object.keys(expirations).length === 0 ? {} : { secretExpirations: expirations }),
    ...(Object.keys(obsolete).length === 0 ? {} : { secretObsolete: obsolete })
  }
}
