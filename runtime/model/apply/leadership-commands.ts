import { utcTimestamp } from '../../utc-time.ts'
import type { UnitName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { controllerLeaseHeld, validControllerLeaseDuration } from '../controller-leases.ts'
import { keys } from '../keys.ts'
import { leaseHeld, validLeaseDuration } from '../leases.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { ApplicationRecord, CommandOf, ControllerLeaseRecord, LeaseRecord, ModelContext, UnitRecord } from '../model-types.ts'
import { tableGet } from '../table.ts'
import { requireUnitAgent, requireController } from './authorisation.ts'
import { changedBag } from './bags.ts'
import { applicationName, unitName, controllerId, controllerLeaseName, clockReading, stringRecord } from './fields.ts'
import { getApplication, unitOfApplication } from './lookups.ts'
import { q, refuse, refusalMessage, type HandlerTable } from './refusal.ts'
import { removeKey } from './writes.ts'

/**
 * The lease commands: application leadership (and its settings) and the controllers' own leases.
 */

function extendLease (d: ModelDraft, lease: LeaseRecord, expiry: number): { holder: UnitName, expiry: number } {
  // Never earlier: a holder's older copy must not outlive what the model believes.
  if (expiry > lease.expiry) {
    d.leases.set(lease.application, { ...lease, expiry })
    d.touch(keys.leadership(lease.application))
  }
  return { holder: lease.holder, expiry: Math.max(expiry, lease.expiry) }
}

/** What a claim or an extension of an application's lease is checked for first: who asks, for which unit, when, for how long. */
function leaseRequest (d: ModelDraft, c: CommandOf<'claim-leadership' | 'extend-leadership'>): { name: UnitName, app: ApplicationRecord, unit: UnitRecord, now: number } {
  const name = unitName(c, c.unit)
  requireUnitAgent(d, c, name)
  const app = getApplication(d, c, applicationName(c, c.application))
  const unit = unitOfApplication(d, c, name, app.name)
  const now = clockReading(c, c.now)
  if (!validLeaseDuration(c.durationMs)) refuse(c, `duration must be ${limits.leadershipLeaseDurationMsMin} to ${limits.leadershipLeaseDurationMsMax} ms, got ${q(c.durationMs)}`)
  return { name, app, unit, now }
}

/** Why a claim by `unit` at `now` loses to `lease` (held by another unit until after `now`), or undefined. */
function heldByAnother (lease: LeaseRecord | undefined, unit: UnitName, now: number): string | undefined {
  if (lease === undefined || lease.holder === unit || !leaseHeld(lease, now)) return undefined
  return `${q(lease.holder)} holds it until ${utcTimestamp(lease.expiry)}`
}

/**
 * The refusal `claim` gets from `model` because another unit holds the lease at the
 * claim's `now`, or undefined. Juju's lease manager answers such a claim from the leases
 * it knows and writes nothing (worker/lease/manager.go handleClaim): the leading
 * controller does the same before proposing (actors/controller/lease-claim-gate.ts), so a
 * losing claim never reaches the log. Leases only move later or go away, so a refusal
 * here is the one applying the claim would give, unless a release is on its way (then the
 * unit claims again, as a Juju unit does once the lease is released).
 */
export function claimLosesTo (model: ModelContext, claim: CommandOf<'claim-leadership'>): string | undefined {
  const { application, unit, now } = claim as { application: unknown, unit: unknown, now: unknown }
  if (typeof application !== 'string' || typeof unit !== 'string' || !Number.isSafeInteger(now)) return undefined
  const why = heldByAnother(tableGet(model.leases, application), unit, now as number)
  return why === undefined ? undefined : refusalMessage(claim, why)
}

function extendControllerLease (d: ModelDraft, lease: ControllerLeaseRecord, expiry: number): { holder: string, expiry: number } {
  // Never earlier: the holder may already be acting on the later expiry it was told.
  if (expiry > lease.expiry) {
    d.controllerLeases.set(lease.lease, { ...lease, expiry })
    d.touch(keys.controllerLease(lease.lease))
  }
  return { holder: lease.holder, expiry: Math.max(expiry, lease.expiry) }
}

export const leadershipCommands: HandlerTable<'leader-settings' | 'claim-leadership' | 'extend-leadership' | 'release-leadership' | 'claim-controller-lease' | 'release-controller-lease'> = {
  'leader-settings': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const app = getApplication(d, c, applicationName(c, c.application))
    unitOfApplication(d, c, name, app.name)
    if (d.lease(app.name)?.holder !== name) refuse(c, `unit ${q(name)} is not the leader`)
    const values = changedBag(c, app.leaderSettings, stringRecord(c, 'settings', c.settings))
    if (values === undefined) return {}
    d.applications.set(app.name, { ...app, leaderSettings: values, leaderSettingsVersion: app.leaderSettingsVersion + 1 })
    d.touch(keys.leaderSettings(app.name))
    return {}
  },

  'claim-leadership': (d, c) => {
    const { name, app, unit, now } = leaseRequest(d, c)
    if (unit.life !== 'alive') refuse(c, `unit ${q(name)} is ${unit.life}`)
    const lease = d.lease(app.name)
    const lost = heldByAnother(lease, name, now)
    if (lost !== undefined) refuse(c, lost)
    if (lease !== undefined && leaseHeld(lease, now)) return { lease: extendLease(d, lease, now + c.durationMs) }
    const granted = { application: app.name, holder: name, start: now, expiry: now + c.durationMs, grantedAt: d.revision }
    d.leases.set(app.name, granted)
    d.touch(keys.leadership(app.name))
    return { lease: { holder: name, expiry: granted.expiry } }
  },

  'extend-leadership': (d, c) => {
    const { name, app, unit, now } = leaseRequest(d, c)
    const lease = d.lease(app.name)
    if (lease === undefined || lease.holder !== name) refuse(c, `unit ${q(name)} does not hold the lease`)
    if (!leaseHeld(lease, now)) refuse(c, `the lease expired at ${lease.expiry}; claim it again`)
    // A dying unit is not renewed, so another unit can take over once the lease runs out.
    if (unit.life !== 'alive') refuse(c, `unit ${q(name)} is ${unit.life}`)
    return { lease: extendLease(d, lease, now + c.durationMs) }
  },

  'release-leadership': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const app = getApplication(d, c, applicationName(c, c.application))
    unitOfApplication(d, c, name, app.name)
    const lease = d.lease(app.name)
    if (lease === undefined) return {}
    if (lease.holder !== name) refuse(c, `${q(lease.holder)} holds the lease`)
    // The holder stopped believing before it proposed this, so the lease may go at once.
    removeKey(d, keys.leadership(app.name))
    d.leases.delete(app.name)
    return {}
  },

  'claim-controller-lease': (d, c) => {
    const controller = controllerId(c, c.controller)
    requireController(c, controller)
    const name = controllerLeaseName(c, c.lease)
    const now = clockReading(c, c.now)
    if (!validControllerLeaseDuration(c.durationMs)) {
      refuse(c, `duration must be ${limits.controllerLeaseDurationMsMin} to ${limits.controllerLeaseDurationMsMax} ms, got ${q(c.durationMs)}`)
    }
    const lease = d.controllerLease(name)
    if (lease !== undefined && controllerLeaseHeld(lease, now)) {
      if (lease.holder !== controller) refuse(c, `controller ${q(lease.holder)} holds it until ${utcTimestamp(lease.expiry)}`)
      return { lease: extendControllerLease(d, lease, now + c.durationMs) }
    }
    const granted: ControllerLeaseRecord = { lease: name, holder: controller, start: now, expiry: now + c.durationMs, grantedAt: d.revision }
    d.controllerLeases.set(name, granted)
    d.touch(keys.controllerLease(name))
    return { lease: { holder: controller, expiry: granted.expiry } }
  },

  'release-controller-lease': (d, c) => {
    const controller = controllerId(c, c.controller)
    requireController(c, controller)
    const name = controllerLeaseName(c, c.lease)
    const lease = d.controllerLease(name)
    if (lease === undefined) return {}
    if (lease.holder !== controller) refuse(c, `controller ${q(lease.holder)} holds the lease`)
    // The holder stopped its singular workers before it proposed this, so the lease may go at once.
    removeKey(d, keys.controllerLease(name))
    d.controllerLeases.delete(name)
    return {}
  }
}
