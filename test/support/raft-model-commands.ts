/**
 * Commands the Raft host tests propose to a simulated controller group (the admin adds one
 * charm, then deploys applications of it, each with its own request id), and the proposing.
 */
import type { CommandResult, ModelCommand } from '../../runtime/model/model-types.ts'
import type { SimControllerGroup } from '../../sim/sim-controller-group.ts'

export const admin = { kind: 'user', name: 'admin' } as const

export const addCharm: ModelCommand = {
  type: 'add-charm', requestId: 'charm', proposer: admin, url: 'local:web-0', hash: 'ab'.repeat(8),
  metadata: { name: 'web', provides: { website: 'http' } }
}

export function deploy (name: string): ModelCommand {
  return { type: 'deploy', requestId: `deploy-${name}`, proposer: admin, application: name, charm: 'local:web-0', config: {}, constraints: {}, numUnits: 1 }
}

/** Drives the group until `promise` settles (or `ms` pass); returns how it settled. */
export async function settle<T> (group: SimControllerGroup, promise: Promise<T>, ms: number): Promise<{ ok: true, value: T } | { ok: false, error: unknown }> {
  let outcome: { ok: true, value: T } | { ok: false, error: unknown } | undefined
  promise.then(value => { outcome = { ok: true, value } }, (error: unknown) => { outcome = { ok: false, error } })
  await group.runUntil(() => outcome !== undefined, ms, 5)
  return outcome ?? { ok: false, error: new Error('still pending') }
}

/**
 * Proposes through whoever leads, retrying with the same request id (the model applies
 * a request id once) until it is acknowledged or the budget runs out.
 */
export async function proposeAcked (group: SimControllerGroup, command: ModelCommand, budgetMs: number): Promise<CommandResult | undefined> {
  const until = group.sim.clock.now() + budgetMs
  while (group.sim.clock.now() < until) {
    const leader = group.leader()
    if (leader === undefined) {
      await group.runFor(20)
      continue
    }
    const outcome = await settle(group, leader.propose(command), until - group.sim.clock.now())
    if (outcome.ok) return outcome.value
    await group.runFor(10)
  }
  return undefined
}
