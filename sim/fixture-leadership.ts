import { limits } from '../runtime/limits.ts'
import { naturalCompare, type ApplicationName, type UnitName } from '../runtime/ids.ts'
import type { ModelCommandBody } from '../runtime/model/command-proposer.ts'
import { leaseHeld } from '../runtime/model/leases.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import type { ModelContext } from '../runtime/model/model-types.ts'
import { tableValues } from '../runtime/model/table.ts'

/**
 * Who leads in a model fixture. Leadership in the model is a lease that only a unit's
 * agent can claim, extend or release; the unit actors under test have no leadership
 * tracker (their hosts do), so the fixture claims on their behalf, as the trackers would:
 * the script's choice of leader, else the first alive unit, claims when the lease is
 * vacant or has run out, and the holder renews it at half its duration. A dying holder
 * is not renewed (the model refuses), so another unit takes over once its lease runs out
 * (juju-semantics §2.9). This decides only who proposes what; the model decides what is
 * granted.
 */

/** Lease duration the fixture's claims ask for (Juju's is one minute). */
export const fixtureLeaseDurationMs = limits.leadershipLeaseDurationMsDefault
/** How often the holders renew, as Juju's tracker does: at half the lease. */
export const fixtureLeaseRenewEveryMs = Math.floor(fixtureLeaseDurationMs / 2)

export interface LeadershipProposal {
  /** The unit whose agent proposes `body`. */
  readonly unit: UnitName
  readonly body: ModelCommandBody
}

export class FixtureLeadership {
  /** The script's choice per application (`setLeader`); otherwise the first alive unit. */
  readonly #chosen = new Map<ApplicationName, UnitName>()
  /** Applications left without a leader on purpose until the next renewal round. */
  readonly #vacant = new Set<ApplicationName>()

  /** The commands that hand `application`'s lease to `unit` now (none: leave it vacant). */
  handOver (context: ModelContext, application: ApplicationName, unit: UnitName | undefined, now: number): LeadershipProposal[] {
    const lease = readerOf(context).lease(application)
    const proposals: LeadershipProposal[] = []
    if (unit === undefined) this.#chosen.delete(application)
    else this.#chosen.set(application, unit)
    if (unit === undefined) this.#vacant.add(application)
    else this.#vacant.delete(application)
    if (lease !== undefined && lease.holder === unit && leaseHeld(lease, now)) return proposals
    if (lease !== undefined) proposals.push({ unit: lease.holder, body: { type: 'release-leadership', application, unit: lease.holder } })
    if (unit !== undefined) proposals.push({ unit, body: claim(application, unit, now) })
    return proposals
  }

  /** Claims for every application without a lease in force (after a handover to nobody, only once `renew` ran). */
  electVacant (context: ModelContext, now: number): LeadershipProposal[] {
    const proposals: LeadershipProposal[] = []
    for (const application of applicationsOf(context)) {
      if (this.#vacant.has(application)) continue
      const lease = readerOf(context).lease(application)
      if (lease !== undefined && leaseHeld(lease, now)) continue
      const unit = this.#candidate(context, application)
      if (unit !== undefined) proposals.push({ unit, body: claim(application, unit, now) })
    }
    return proposals
  }

  /** The periodic round: alive holders extend; vacancies (deliberate ones too) are filled. */
  renew (context: ModelContext, now: number): LeadershipProposal[] {
    this.#vacant.clear()
    const reader = readerOf(context)
    const proposals: LeadershipProposal[] = []
    for (const application of applicationsOf(context)) {
      const lease = reader.lease(application)
      if (lease === undefined || !leaseHeld(lease, now)) continue
      if (reader.unit(lease.holder)?.life !== 'alive') continue
      proposals.push({ unit: lease.holder, body: { type: 'extend-leadership', application, unit: lease.holder, now, durationMs: fixtureLeaseDurationMs } })
    }
    return [...proposals, ...this.electVacant(context, now)]
  }

  #candidate (context: ModelContext, application: ApplicationName): UnitName | undefined {
    const reader = readerOf(context)
    const chosen = this.#chosen.get(application)
    if (chosen !== undefined && reader.unit(chosen)?.life === 'alive') return chosen
    const units = [...(reader.application(application)?.units ?? [])].sort(naturalCompare)
    return units.find(unit => reader.unit(unit)?.life === 'alive')
  }
}

function claim (application: ApplicationName, unit: UnitName, now: number): ModelCommandBody {
  return { type: 'claim-leadership', application, unit, now, durationMs: fixtureLeaseDurationMs }
}

function applicationsOf (context: ModelContext): ApplicationName[] {
  return tableValues(context.applications).map(app => app.name).sort(naturalCompare)
}
