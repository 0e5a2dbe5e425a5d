/**
 * Secret rotation, expiry and obsolete revisions: the deadlines in the model, the
 * controllers' clock worker, the owner's remote state, the resolver and the commit.
 * Juju sources followed: internal/worker/secretrotate/secretrotate.go and
 * internal/worker/secretexpire/secretexpire.go (a trigger fires once its time has come;
 * an expiry fires again every ExpireRetryDelay until the revision goes),
 * apiserver/facades/agent/secretsmanager SecretsRotated (the next rotation is the
 * policy's interval from the last deadline, or RotateRetryDelay later when the hook made
 * no new revision or the latest revision expires first), core/secrets/secret.go (both
 * delays 5 minutes), internal/worker/uniter/secrets/resolver.go (expired, then rotate,
 * then changed, then obsolete revisions' secret-remove; a rotate hook carries no revision)
 * and state/secrets.go markObsoleteRevisionOps (a revision no consumer tracks, other than
 * the latest, is obsolete).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admin, CommandModel, vaultAndApp } from './support/secret-model.ts'
import { startSecretTriggerWorker } from '../actors/controller/secret-trigger-worker.ts'
import { commandForEmitted } from '../actors/unit/emitted-commands.ts'
import { initialLocalState, initialMemory, type LocalState } from '../actors/unit/local-state.ts'
import { captureRemote, commit } from '../actors/unit/operation-steps.ts'
import { initialRemoteState } from '../actors/unit/remote-state.ts'
import { nextOp } from '../actors/unit/resolver.ts'
import { secretsOp } from '../actors/unit/resolvers/secrets-resolver.ts'
import type { RemoteSnapshot } from '../actors/unit/resolver-types.ts'
import { limits } from '../runtime/limits.ts'
import { silentLogger } from '../runtime/logger.ts'
import type { Entity } from '../runtime/model/model-types.ts'
import { remoteStateFor } from '../runtime/model/remote-state-view.ts'
import { dueSecretTriggers, nextSecretTriggerAt, secretTriggerMarginMs } from '../runtime/model/secret-triggers.ts'
import { tableGet } from '../runtime/model/table.ts'
import { SimClock } from '../sim/sim-clock.ts'

const controller: Entity = { kind: 'controller', id: 'c0' }
const unit = (name: string): Entity => ({ kind: 'unit', name })
const id = 'c'.repeat(20)
const hour = 3_600_000
const minute = 60_000
class Model extends CommandModel {
  secret () { return tableGet(this.context.secrets!, id)! }
}

/** vault/0 (leader) related to app/0; vault/0 adds a unit-owned secret at t=0: hourly rotation, expiry at 30 minutes. */
function world (): Model {
  const m = new Model()
  vaultAndApp(m)
  m.ok({
    type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0',
    secrets: { now: 0, creates: [{ id, owner: 'unit', content: { plain: { password: 'one' } }, label: 'pw', rotatePolicy: 'hourly', expireTime: 30 * minute }] }
  })
  return m
}

function resolverInput (m: Model, local: LocalState, now: number) {
  const remote: RemoteSnapshot = { ...initialRemoteState('local:vault-0'), ...remoteStateFor(m.context, 'vault/0', now)!, relations: {}, updateStatusVersion: 0, retryHookVersion: 0 }
  return { unit: 'vault/0', local, memory: { ...initialMemory(false), leaderSettingsVersion: remote.leaderSettingsVersion }, remote, retryTimer: { armed: false, attempt: 0 }, automaticallyRetryHooks: true }
}

const installed = (): LocalState => ({ ...initialLocalState(), installed: true, started: true, charm: { url: 'local:vault-0', modifiedVersion: 0 } })

test('deadlines are model data: due once the clock passes them by the margin, marked once, controllers only', () => {
  const m = world()
  assert.equal(nextSecretTriggerAt(m.context), 30 * minute + secretTriggerMarginMs)
  assert.equal(dueSecretTriggers(m.context, 30 * minute + secretTriggerMarginMs - 1), [])
  assert.equal(dueSecretTriggers(m.context, hour + secretTriggerMarginMs), [
    { type: 'secret-expire-due', id, revision: 1, deadline: 30 * minute },
    { type: 'secret-rotate-due', id, deadline: hour }
  ])
  assert.match(m.error({ type: 'secret-rotate-due', proposer: unit('vault/0'), id, deadline: hour, now: hour + 2_000 }), /permission denied for unit-vault-0/)
  assert.match(m.error({ type: 'secret-rotate-due', proposer: controller, id, deadline: hour, now: hour - 1 }), new RegExp(`secret trigger at ${hour} is not due at ${hour - 1}`))
  m.ok({ type: 'secret-rotate-due', proposer: controller, id, deadline: hour, now: hour + 2_000 })
  assert.is(m.secret().rotateDue, hour)
  // A controller that took over proposes it again: nothing changes, nothing fires twice.
  const before = m.context
  m.ok({ type: 'secret-rotate-due', proposer: controller, id, deadline: hour, now: hour + 3_000 })
  assert.is(m.secret(), tableGet(before.secrets!, id))
  // Expiry: marked, then due again every ExpireRetryDelay until the revision is removed.
  // Fired late (a controller was down): the retry is counted from when it fired, so it fires once, not once per missed retry.
  m.ok({ type: 'secret-expire-due', proposer: controller, id, revision: 1, deadline: 30 * minute, now: hour })
  assert.equal(dueSecretTriggers(m.context, hour + 2_000), [])
  assert.equal(nextSecretTriggerAt(m.context), hour + limits.secretExpireRetryDelayMs + secretTriggerMarginMs)
})

test('secret-rotated: the policy interval from the deadline after a new revision, the retry delay without one', () => {
  const m = world()
  m.ok({ type: 'secret-rotate-due', proposer: controller, id, deadline: hour, now: hour + 2_000 })
  assert.match(m.error({ type: 'secret-rotated', proposer: unit('app/0'), unit: 'app/0', id, originalRevision: 1, now: hour }), /does not own secret/)
  // No new revision: again in five minutes (Juju's TestSecretsRotatedRetry).
  m.ok({ type: 'secret-rotated', proposer: unit('vault/0'), unit: 'vault/0', id, originalRevision: 1, now: hour + 10_000 })
  assert.equal([m.secret().nextRotateTime, m.secret().rotateDue], [hour + limits.secretRotateRetryDelayMs, undefined])
  // Reported again after a crash: the rotation is not rescheduled twice.
  m.ok({ type: 'secret-rotated', proposer: unit('vault/0'), unit: 'vault/0', id, originalRevision: 1, now: hour + 20_000 })
  assert.is(m.secret().nextRotateTime, hour + limits.secretRotateRetryDelayMs)
  // With a new revision (no expiry on it): an hour after the deadline that fell due.
  const due = hour + limits.secretRotateRetryDelayMs
  m.ok({ type: 'secret-rotate-due', proposer: controller, id, deadline: due, now: due + 2_000 })
  m.ok({ type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', secrets: { now: due + 5_000, updates: [{ id, content: { plain: { password: 'two' } } }] } })
  m.ok({ type: 'secret-rotated', proposer: unit('vault/0'), unit: 'vault/0', id, originalRevision: 1, now: due + 6_000 })
  assert.is(m.secret().nextRotateTime, due + hour)
  // The latest revision expires before the next rotation: rotate sooner (Juju's TestSecretsRotatedForce).
  m.ok({ type: 'secret-rotate-due', proposer: controller, id, deadline: due + hour, now: due + hour + 2_000 })
  m.ok({ type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', secrets: { now: due + hour, updates: [{ id, content: { plain: { password: 'three' } }, expireTime: due + hour + 30 * minute }] } })
  m.ok({ type: 'secret-rotated', proposer: unit('vault/0'), unit: 'vault/0', id, originalRevision: 2, now: due + hour + 1_000 })
  assert.is(m.secret().nextRotateTime, due + hour + limits.secretRotateRetryDelayMs)
})

test('the owner runs secret-expired, then secret-rotate, then secret-remove for an obsolete revision, each once', () => {
  const m = world()
  m.ok({ type: 'secret-expire-due', proposer: controller, id, revision: 1, deadline: 30 * minute, now: hour })
  m.ok({ type: 'secret-rotate-due', proposer: controller, id, deadline: hour, now: hour + 2_000 })
  // A consumer outside the owner's view: the consumer is told nothing of rotation or expiry.
  assert.equal(Object.keys(remoteStateFor(m.context, 'app/0', hour)!).filter(k => k.startsWith('secret')), [])
  let local = installed()
  const run = (hook: object) => ({ kind: 'run', op: { kind: 'run-hook', hook, source: 'resolver' } })
  assert.equal(nextOp(resolverInput(m, local, hour)).decision, run({ kind: 'secret-expired', secretId: id, secretRevision: 1, secretDue: hour, secretLabel: 'pw' }))
  local = { ...local, secretExpired: { [`${id}/1`]: hour } }
  // Juju's rotate hook has no JUJU_SECRET_REVISION: the revision is kept apart, to measure the rotation by.
  const rotate = { kind: 'secret-rotate', secretId: id, secretDue: hour, secretOriginalRevision: 1, secretLabel: 'pw' }
  assert.equal(nextOp(resolverInput(m, local, hour)).decision, run(rotate))

  // Committing the rotate hook records its deadline and tells the controllers (secret-rotated).
  const input = resolverInput(m, local, hour)
  const op = { kind: 'run-hook' as const, hook: rotate as never, source: 'resolver' as const }
  const current = captureRemote(op, input.remote)
  const committed = commit({ unit: 'vault/0', local: { ...local, operation: { kind: 'run-hook', step: 'done', hook: rotate as never } }, memory: input.memory }, current)
  assert.equal(committed.local.secretRotated, { [id]: hour })
  const rotated = committed.emitted.find(e => e.type === 'secret.rotated')!
  assert.equal(commandForEmitted('vault/0', rotated, hour + 9), { type: 'secret-rotated', unit: 'vault/0', id, originalRevision: 1, now: hour + 9 })
  local = { ...committed.local, operation: { kind: 'continue', step: 'pending' } }
  assert.is(secretsOp(resolverInput(m, local, hour)), undefined)

  // A new revision no consumer tracks makes revision 1 obsolete: secret-remove with its revision.
  m.ok({ type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', secrets: { now: hour, updates: [{ id, content: { plain: { password: 'two' } } }] } })
  assert.equal(m.secret().revisions.map(r => r.obsolete ?? false), [true, false])
  assert.equal(nextOp(resolverInput(m, local, hour)).decision, run({ kind: 'secret-remove', secretId: id, secretRevision: 1, secretLabel: 'pw' }))
  assert.is(secretsOp(resolverInput(m, { ...local, secretRemoved: { [id]: [1] } }, hour)), undefined)
})

test('a revision a consumer still tracks is not obsolete until the consumer moves on', () => {
  const m = world()
  m.ok({ type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', secrets: { grants: [{ id, relationId: 0 }] } })
  m.ok({ type: 'secret-consumed', proposer: unit('app/0'), unit: 'app/0', id, revision: 1 })
  m.ok({ type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', secrets: { now: 1, updates: [{ id, content: { plain: { password: 'two' } } }] } })
  assert.equal(m.secret().revisions.map(r => r.obsolete ?? false), [false, false])
  m.ok({ type: 'secret-consumed', proposer: unit('app/0'), unit: 'app/0', id, revision: 2 })
  assert.equal(m.secret().revisions.map(r => r.obsolete ?? false), [true, false])
})

test('a new policy or expiry starts afresh: a trigger of the old one is not owed', () => {
  const m = world()
  m.ok({ type: 'secret-rotate-due', proposer: controller, id, deadline: hour, now: hour + 2_000 })
  m.ok({ type: 'secret-expire-due', proposer: controller, id, revision: 1, deadline: 30 * minute, now: hour + 2_000 })
  m.ok({ type: 'commit-hook-changes', proposer: unit('vault/0'), unit: 'vault/0', secrets: { now: hour + 5_000, updates: [{ id, rotatePolicy: 'daily', expireTime: 3 * hour }] } })
  assert.equal([m.secret().rotateDue, m.secret().nextRotateTime, m.secret().revisions[0]!.expireDue], [undefined, hour + 5_000 + 24 * hour, undefined])
  assert.equal(nextSecretTriggerAt(m.context), 3 * hour + secretTriggerMarginMs)
})

test('the clock worker: arms its timer from the model, proposes at the deadline plus the margin, re-arms for the next', async () => {
  const m = world()
  const clock = new SimClock()
  const listeners = new Set<() => void>()
  const proposed: string[] = []
  const worker = startSecretTriggerWorker({
    controllerId: 'c0',
    incarnation: '1-0',
    clock,
    model: () => m.context,
    onModelChange: listener => { listeners.add(listener); return () => { listeners.delete(listener) } },
    sink: {
      submit: async command => {
        proposed.push(`${command.type}@${clock.now()}`)
        const result = m.run(command)
        for (const listener of listeners) listener()
        return result
      }
    },
    logger: silentLogger
  })
  const settle = async (): Promise<void> => { for (let i = 0; i < 5; i++) await Promise.resolve() }
  clock.advance(30 * minute + secretTriggerMarginMs - 1)
  await settle()
  assert.equal(proposed, [])
  clock.advance(1)
  await settle()
  clock.advance(0)
  await settle()
  const firstAt = 30 * minute + secretTriggerMarginMs
  assert.equal(proposed, [`secret-expire-due@${firstAt}`])
  assert.is(m.secret().revisions[0]!.expireDue, firstAt)
  // The retry five minutes on, then the rotation at the hour.
  clock.advance(limits.secretExpireRetryDelayMs + secretTriggerMarginMs)
  await settle()
  assert.is(proposed.length, 2)
  assert.equal(proposed[1], `secret-expire-due@${firstAt + limits.secretExpireRetryDelayMs + secretTriggerMarginMs}`)
  // Time jumps an hour without the proposals completing in between (a stalled process):
  // the retry whose timer fired is proposed then; after that each trigger fires once, not once per missed retry.
  const third = firstAt + 2 * (limits.secretExpireRetryDelayMs + secretTriggerMarginMs)
  clock.advance(hour)
  for (let i = 0; i < 10; i++) { clock.advance(0); await settle() }
  assert.equal(proposed.slice(2), [`secret-expire-due@${third}`, `secret-expire-due@${clock.now()}`, `secret-rotate-due@${clock.now()}`])
  worker.stop()
  assert.is(listeners.size, 0)
  assert.is(clock.pendingCount, 0)
})

test.run()
