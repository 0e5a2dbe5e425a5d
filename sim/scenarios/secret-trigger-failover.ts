/**
 * Secret rotation and expiry across a controller failover, one seed at a time.
 *
 * Three controllers (ModelReplica: Raft host, model, singular workers) run the real
 * secret clock worker (actors/controller/secret-trigger-worker.ts) on the holder of the
 * singular lease. A unit's hook commits a secret with `--rotate hourly` and an
 * `--expire` drawn between 10 and 50 minutes; then the controller running the worker is
 * killed at a drawn moment between that commit and the first deadline (often just
 * before it), and restarted a drawn while later. Clocks drift (100 ppm, a free-running
 * quartz); messages are delayed.
 *
 * Checked: every trigger the deadlines imply — the rotation at +1 h, the expiry and its
 * retries every 5 minutes (Juju's ExpireRetryDelay) — is marked due in the replicated
 * model, never before its deadline in true time and at most `latenessMaxMs` after it;
 * no trigger is marked that the deadlines do not imply; and the owner's resolver, on the
 * remote state the model gives it, runs `secret-expired` then `secret-rotate` with
 * Juju's hook data (internal/worker/uniter/secrets/resolver.go).
 *
 * `deadlinesInMemory` is the mutation the scenario must catch: a worker that learns
 * deadlines only from changes it saw while running (in its memory, as Juju's unit-side
 * workers keep them) instead of from the model, so the controller that takes over knows
 * nothing of a secret committed before the failover.
 */
import { startSecretTriggerWorker } from '../../actors/controller/secret-trigger-worker.ts'
import type { ModelReplica } from '../../actors/controller/model-replica.ts'
import { initialLocalState, initialMemory } from '../../actors/unit/local-state.ts'
import { secretsOp } from '../../actors/unit/resolvers/secrets-resolver.ts'
import type { HookInfo } from '../../actors/unit/hook-info.ts'
import { limits } from '../../runtime/limits.ts'
import { createMemoryLogger } from '../../runtime/logger.ts'
import type { ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { remoteStateFor } from '../../runtime/model/remote-state-view.ts'
import { tableFrom, tableEntries, tableGet } from '../../runtime/model/table.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'
import { SimControllerGroup } from '../sim-controller-group.ts'
import { Simulation } from '../simulation.ts'

export interface SecretTriggerScenarioOptions {
  seed: number
  keepTrace?: boolean
  /** The mutation: the worker keeps deadlines in memory, learnt only while it runs. */
  deadlinesInMemory?: boolean
}

export interface SecretTriggerScenarioResult {
  seed: number
  hash: string
  failure: string | undefined
  /** True time from the secret's commit to the kill, and to the deadlines. */
  killAfterMs: number
  rotateAfterMs: number
  expireAfterMs: number
  /** How late each trigger was marked (true time after its deadline). */
  latenessMs: number[]
  /** Controllers that ran the worker over the run. */
  workerStarts: number
}

const admin = { kind: 'user', name: 'admin' } as const
const owner = 'vault/0'
const secretId = 'v'.repeat(20)
const hourMs = 3_600_000
const leaseDurationMs = 20_000
/**
 * A failover (the dead holder's lease runs out, an election, a new claim) plus the
 * margin: within the minute Juju allows itself (it truncates deadlines to the minute).
 */
export const latenessMaxMs = 60_000

export async function runSecretTriggerFailover (options: SecretTriggerScenarioOptions): Promise<SecretTriggerScenarioResult> {
  const sim = new Simulation({
    seed: options.seed,
    keepTrace: options.keepTrace ?? false,
    replay: `CANTRIP_SEED=${options.seed} node --import tsx test/sim-secret-triggers.test.ts`
  })
  const faults = sim.random('faults')
  const listeners = new Map<NodeId, Set<() => void>>()
  let group: SimControllerGroup | undefined
  let workerStarts = 0
  let holder: NodeId | undefined
  const marks = new Map<string, number>()
  group = await SimControllerGroup.create(sim, {
    size: 3,
    // Coarse ticks: an hour of simulated time stays a few CPU-seconds.
    tickMs: 1_000,
    electionTicks: 10,
    heartbeatTicks: 2,
    latency: { kind: 'uniform', minMs: 1, maxMs: 8 },
    clockDriftMax: 0.0001,
    snapshotEveryEntries: 256,
    leaseDurationMs,
    singularWorkers: controller => {
      const node = group?.node(group.indexOf(controller))
      if (node === undefined) return { stop: () => {} }
      workerStarts++
      holder = controller
      sim.trace(`secret worker starts on ${controller}`)
      const worker = startWorker(node, listeners, options.deadlinesInMemory === true)
      return { stop: () => { if (holder === controller) holder = undefined; worker.stop() } }
    },

    hostOptions: id => ({
      proposeTimeoutMs: 2_000,
      readTimeoutMs: 1_000,
      onApplied: () => {
        // The true time each mark first appears on any controller.
        const host = group?.host(group.indexOf(id))
        if (host !== undefined) recordMarks(host.state(), marks, sim.clock.now())
        for (const listener of listeners.get(id) ?? []) listener()
      }
    })
  })
  const base = { seed: options.seed, killAfterMs: 0, rotateAfterMs: hourMs, expireAfterMs: 0, latenessMs: [] as number[], workerStarts: 0 }
  const result = (failure: string | undefined, extra: Partial<SecretTriggerScenarioResult> = {}): SecretTriggerScenarioResult => ({
    ...base, ...extra, workerStarts, hash: sim.traceHash(), failure: failure === undefined ? undefined : sim.failure('liveness', failure)
  })

  if (!await group.runUntil(() => group!.leaderNode() !== undefined, 60_000, 100)) return result('no leader elected at startup')
  for (const command of setupCommands()) {
    const outcome = await drive(group, group.leaderNode()!.submit(command), 10_000)
    if (outcome === undefined || !outcome.ok) return result(`setup command ${command.type} failed: ${outcome === undefined ? 'no answer' : outcome.error}`)
  }
  // Let the singular lease settle, so the kill below hits the controller running the worker.
  if (!await group.runUntil(() => workerStarts > 0, 30_000)) return result('the singular workers never started')

  // The owner's hook commits the secret: rotate hourly, expire after a drawn while.
  const committedAt = sim.clock.now()
  const expireAfterMs = faults.int(10, 50) * 60_000
  const leader = group.leaderNode()!
  const now = Math.floor(leader.clock.now())
  const created = await drive(group, leader.submit(ownerHook(now, now + expireAfterMs)), 10_000)
  if (created === undefined || !created.ok) return result(`the owner's secret-add did not commit: ${created === undefined ? 'no answer' : created.error}`)
  const secret = tableGet(leader.host.state().secrets!, secretId)!
  const rotateAt = secret.nextRotateTime!
  const expireAt = secret.revisions[0]!.expireTime!
  Object.assign(base, { expireAfterMs })

  // Kill the worker's controller between the commit and the first deadline, often just before it.
  const first = Math.min(rotateAt, expireAt) - now
  const killAfterMs = faults.next() < 0.5 ? Math.max(1_000, first - faults.int(0, 20_000)) : faults.int(1_000, first)
  base.killAfterMs = killAfterMs
  await group.runFor(Math.max(0, committedAt + killAfterMs - sim.clock.now()))
  const killed = holder
  if (killed === undefined) return result(`no controller ran the worker at the kill (${killAfterMs} ms after the commit)`)
  group.crash(group.indexOf(killed))
  sim.trace(`killed ${killed} ${killAfterMs} ms after the secret was committed`)
  const downForMs = faults.int(5_000, 600_000)

  // Run past the rotation, watching the model for marks after every step.
  const endAt = committedAt + (rotateAt - now) + latenessMaxMs + 60_000
  const restartAt = sim.clock.now() + downForMs
  while (sim.clock.now() < endAt) {
    if (!group.isUp(group.indexOf(killed)) && sim.clock.now() >= restartAt) await group.restart(group.indexOf(killed))
    await group.runFor(Math.min(5_000, endAt - sim.clock.now()))
  }

  const problem = checkMarks({ rotateAt, expireAt, now, committedAt, endTrue: sim.clock.now() }, marks)
  if (problem.failure !== undefined) return result(problem.failure)
  const final = group.leaderNode()?.host.state()
  const hooks = ownerHooks(final, Math.floor(group.leaderNode()?.clock.now() ?? 0))
  const lastExpire = final?.secrets === undefined ? undefined : tableGet(final.secrets, secretId)?.revisions[0]?.expireDue
  const want = [`secret-expired ${secretId} rev 1 due ${lastExpire}`, `secret-rotate ${secretId} rev 1 due ${rotateAt}`]
  if (hooks.join(', ') !== want.join(', ')) return result(`the owner's resolver runs [${hooks.join(', ')}], expected [${want.join(', ')}]`)
  return result(undefined, { latenessMs: problem.lateness })
}

function setupCommands (): ModelCommand[] {
  return [
    { type: 'add-charm', requestId: 'setup-charm', proposer: admin, url: 'local:vault-0', hash: 'ab'.repeat(8), metadata: { name: 'vault' } },
    { type: 'deploy', requestId: 'setup-deploy', proposer: admin, application: 'vault', charm: 'local:vault-0', config: {}, constraints: {}, numUnits: 1 }
  ]
}

/** `secret-add --owner unit --rotate hourly --expire <t>` in one of vault/0's hooks. */
function ownerHook (now: number, expireTime: number): ModelCommand {
  return {
    type: 'commit-hook-changes',
    requestId: 'owner-hook-1',
    proposer: { kind: 'unit', name: owner },
    unit: owner,
    secrets: { now, creates: [{ id: secretId, owner: 'unit', content: { plain: { password: 'canary' } }, label: 'db-password', rotatePolicy: 'hourly', expireTime }] }
  }
}

function startWorker (node: ModelReplica, listeners: Map<NodeId, Set<() => void>>, inMemory: boolean): { stop: () => void } {
  const set = listeners.get(node.id) ?? new Set()
  listeners.set(node.id, set)
  // The mutant sees only secrets that appear after it starts, as a worker fed by a change stream alone would.
  const known = new Set(inMemory ? tableEntries(node.host.state().secrets ?? tableFrom([])).map(([id]) => id) : [])
  const model = (): ModelContext => {
    const state = node.host.state()
    if (!inMemory || state.secrets === undefined) return state
    return { ...state, secrets: tableFrom(tableEntries(state.secrets).filter(([id]) => !known.has(id))) }
  }
  return startSecretTriggerWorker({
    controllerId: node.id,
    incarnation: `${node.host.term}-${node.clock.now()}`,
    clock: node.clock,
    model,
    onModelChange: listener => { set.add(listener); return () => { set.delete(listener) } },
    sink: node,
    logger: createMemoryLogger('secret-triggers', [], 100)
  })
}

/** First true time at which any controller's model showed each mark. */
function recordMarks (model: ModelContext, marks: Map<string, number>, at: number): void {
  const secret = model.secrets === undefined ? undefined : tableGet(model.secrets, secretId)
  if (secret === undefined) return
  if (secret.rotateDue !== undefined && !marks.has(`rotate ${secret.rotateDue}`)) marks.set(`rotate ${secret.rotateDue}`, at)
  for (const r of secret.revisions) {
    if (r.expireDue !== undefined && !marks.has(`expire ${r.expireDue}`)) marks.set(`expire ${r.expireDue}`, at)
  }
}

interface Deadlines { rotateAt: number, expireAt: number, now: number, committedAt: number, endTrue: number }

/**
 * Every mark against the deadlines: the rotation at its deadline; the expiry at its
 * deadline and then again every retry delay after each firing (on the controllers' clock,
 * which is what `expireDue` records), with none missing by the end. "On time" is never
 * before the deadline in true time and at most `latenessMaxMs` after it. The secret's
 * clock reading `now` was taken at true time `committedAt`; drift over an hour is far
 * below the margin.
 */
function checkMarks (d: Deadlines, marks: Map<string, number>): { failure?: string, lateness: number[] } {
  const toTrue = (deadline: number): number => d.committedAt + (deadline - d.now)
  const lateness: number[] = []
  const onTime = (what: string, at: number | undefined, deadline: number): string | undefined => {
    if (at === undefined) return `${what} (due at ${deadline} ms) was never marked`
    if (at < deadline) return `${what} was marked at ${at} ms, before its deadline ${deadline} ms`
    if (at - deadline > latenessMaxMs) return `${what} was marked ${at - deadline} ms after its deadline (at most ${latenessMaxMs})`
    lateness.push(at - deadline)
    return undefined
  }
  const rotate = onTime(`rotation at ${d.rotateAt}`, marks.get(`rotate ${d.rotateAt}`), toTrue(d.rotateAt))
  if (rotate !== undefined) return { failure: rotate, lateness }
  const expiries = [...marks.keys()].filter(k => k.startsWith('expire ')).map(k => Number(k.slice('expire '.length))).sort((x, y) => x - y)
  let deadline = d.expireAt
  for (const fired of expiries) {
    const problem = onTime(`expiry trigger at ${deadline}`, marks.get(`expire ${fired}`), toTrue(deadline))
    if (problem !== undefined) return { failure: problem, lateness }
    deadline = fired + limits.secretExpireRetryDelayMs
  }
  if (toTrue(deadline) + latenessMaxMs < d.endTrue) return { failure: `expiry trigger at ${deadline} (true ${toTrue(deadline)} ms) was never marked`, lateness }
  const extra = [...marks.keys()].filter(k => !k.startsWith('expire ') && k !== `rotate ${d.rotateAt}`)
  if (extra.length > 0) return { failure: `marks no deadline implies: ${extra.join(', ')}`, lateness }
  return { lateness }
}

/** The hooks the owner's resolver runs next on the model's remote state: one, then the next after committing it. */
function ownerHooks (model: ModelContext | undefined, now: number): string[] {
  if (model === undefined) return ['no leader at the end']
  const remote = remoteStateFor(model, owner, now)
  if (remote === undefined) return ['vault/0 is not in the model']
  let local = { ...initialLocalState(), installed: true, started: true }
  const out: string[] = []
  for (let i = 0; i < 3; i++) {
    const op = secretsOp({ unit: owner, local, memory: initialMemory(false), remote: { ...remote, updateStatusVersion: 0, retryHookVersion: 0 }, retryTimer: { armed: false, attempt: 0 }, automaticallyRetryHooks: true })
    if (op?.kind !== 'run-hook') break
    const hook: HookInfo = op.hook
    out.push(`${hook.kind} ${hook.secretId ?? '?'} rev ${hook.secretRevision ?? hook.secretOriginalRevision ?? '?'} due ${hook.secretDue ?? '?'}`)
    if (hook.kind === 'secret-expired') local = { ...local, secretExpired: { [`${hook.secretId}/${hook.secretRevision}`]: hook.secretDue! } }
    if (hook.kind === 'secret-rotate') local = { ...local, secretRotated: { [hook.secretId!]: hook.secretDue! } }
  }
  return out
}

async function drive<T> (group: SimControllerGroup, promise: Promise<T>, ms: number): Promise<T | undefined> {
  let outcome: { value: T } | undefined
  let failed = false
  promise.then(value => { outcome = { value } }, () => { failed = true })
  await group.runUntil(() => outcome !== undefined || failed, ms, 5)
  return outcome?.value
}
