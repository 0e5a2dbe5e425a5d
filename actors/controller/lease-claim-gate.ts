/**
 * Leadership claims at the leading controller, taken the way Juju's lease manager takes
 * them (worker/lease/manager.go, handleClaim): a claim for a lease that another unit
 * holds is answered from the leases this controller has applied and written nowhere;
 * only a claim that can win (no lease, an expired one, or the claimant's own) is
 * proposed. At a first deploy every unit of an application claims at once and all but
 * one lose: committed, each of those losing claims cost a log entry's share, an apply on
 * every controller and a remembered request id, about one command in ten of a deploy.
 *
 * A claim that arrives while another unit's claim for the same application is proposed
 * and not yet applied waits for that one first and then looks again, as if the two had
 * been applied one after the other; otherwise every claim of a burst would find the
 * lease free and be proposed. The refusal is the very line applying the claim would give
 * (runtime/model/apply/leadership-commands.ts claimLosesTo), at the revision it was
 * decided on.
 */
import { claimLosesTo } from '../../runtime/model/apply/leadership-commands.ts'
import type { CommandOf, CommandResult, ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'

type Claim = CommandOf<'claim-leadership'>

export class LeaseClaimGate {
  readonly #model: () => ModelContext
  /**
   * Application → the last claim proposed here and not yet settled, with its unit. One
   * entry per application at most: bounded by the model's applications.
   */
  readonly #inFlight = new Map<string, { unit: string, settled: Promise<unknown> }>()

  constructor (model: () => ModelContext) {
    this.#model = model
  }

  /** Whether `command` is a leadership claim (the only command this gate looks at). */
  static isClaim (command: ModelCommand): command is Claim {
    return command.type === 'claim-leadership' && typeof command.application === 'string'
  }

  /** The refusal `claim` gets now without a proposal, or undefined when it must wait or be proposed. */
  refusalNow (claim: Claim): CommandResult | undefined {
    const model = this.#model()
    const lost = claimLosesTo(model, claim)
    return lost === undefined ? undefined : { ok: false, index: model.revision, error: lost }
  }

  /** Whether another unit's claim for the same application is proposed and not yet applied. */
  mustWait (claim: Claim): boolean {
    const pending = this.#inFlight.get(claim.application)
    return pending !== undefined && pending.unit !== claim.unit
  }

  /** Records `proposed`, the result of proposing `claim` now, so later claims wait for it. */
  proposed (claim: Claim, proposed: Promise<CommandResult>): Promise<CommandResult> {
    const entry = { unit: claim.unit, settled: proposed.catch(() => undefined) }
    this.#inFlight.set(claim.application, entry)
    void entry.settled.then(() => {
      if (this.#inFlight.get(claim.application) === entry) this.#inFlight.delete(claim.application)
    })
    return proposed
  }

  /**
   * A claim that had to wait: once the claims before it have settled, refused from what
   * they left, or proposed with `propose` (and waited for by the claims after it).
   */
  async afterPending (claim: Claim, propose: (claim: Claim) => Promise<CommandResult>): Promise<CommandResult> {
    // Each wait is for a claim proposed after the previous one settled: bounded by the claims in flight.
    for (let pending = this.#inFlight.get(claim.application); pending !== undefined && pending.unit !== claim.unit; pending = this.#inFlight.get(claim.application)) {
      await pending.settled
    }
    return this.refusalNow(claim) ?? await this.proposed(claim, propose(claim))
  }
}
