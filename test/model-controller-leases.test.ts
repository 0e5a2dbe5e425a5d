import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { decode, encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { believesControllerLease, controllerLeaseHeld, isControllerLeaseName } from '../runtime/model/controller-leases.ts'
import { parseKey } from '../runtime/model/keys.ts'
import { applyCommand, applyToStore, createModelStore, emptyModel } from '../runtime/model/model-store.ts'
import { restoreModel, snapshotModel } from '../runtime/model/model-snapshot.ts'
import type {
  ApplyOutcome, CommandOf, CommandResult, ControllerLeaseRecord, Delta, Entity, ModelCommand, ModelCommandType, ModelContext
} from '../runtime/model/model-types.ts'
import { tableGet } from '../runtime/model/table.ts'
import { changesSince, mayRead } from '../runtime/model/watch.ts'

const admin: Entity = { kind: 'user', name: 'admin' }
const controller = (id: string): Entity => ({ kind: 'controller', id })
const margin = limits.controllerLeaseClockDriftMarginMs
const durationMin = limits.controllerLeaseDurationMsMin
const durationMax = limits.controllerLeaseDurationMsMax
const lease = 'singular'
const key = `controller-lease/${lease}`

class Model {
  context: ModelContext = emptyModel()
  index = 0
  requests = 0
  last: ApplyOutcome | undefined

  apply<T extends ModelCommandType> (
    type: T, fields: Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>, proposer: Entity = admin, requestId = `req-${this.requests++}`
  ): CommandResult {
    const command = { type, requestId, proposer, ...fields } as unknown as ModelCommand
    this.last = applyCommand(this.context, command, { index: ++this.index })
    this.context = this.last.context
    return this.last.result
  }

  get deltas (): readonly Delta[] { return this.last?.deltas ?? [] }

  lease (name = lease): ControllerLeaseRecord | undefined {
    return tableGet(this.context.controllerLeases, name)
  }

  /** Claims `name` as controller `id`, proposed by that controller. */
  claim (id: string, now: number, durationMs = 15_000, name = lease): CommandResult {
    return this.apply('claim-controller-lease', { lease: name, controller: id, now, durationMs }, controller(id))
  }

  release (id: string, name = lease): CommandResult {
    return this.apply('release-controller-lease', { lease: name, controller: id }, controller(id))
  }
}

function errorOf (result: CommandResult): string {
  assert.not.ok(result.ok, 'expected a refusal')
  return result.ok ? '' : result.error
}

/** One application `web` with one unit on machine 0, so there are agents to watch. */
function withUnit (): Model {
  const model = new Model()
  model.apply('add-charm', { url: 'local:web-0', hash: '0123456789abcdef', metadata: { name: 'web' } })
  assert.ok(model.apply('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 1 }).ok)
  return model
}

// ---------------------------------------------------------------------------------

const rules = suite('model: controller lease rules')

rules('a claim grants a free lease to the claiming controller', () => {
  const model = new Model()
  assert.equal(model.claim('c0', 1_000), { ok: true, index: 1, lease: { holder: 'c0', expiry: 16_000 } })
  assert.equal(model.lease(), { lease: 'singular', holder: 'c0', start: 1_000, expiry: 16_000, grantedAt: 1 })
  assert.equal(model.deltas, [{ revision: 1, key }])
})

rules('the holder claiming again extends, never to an earlier expiry', () => {
  const model = new Model()
  model.claim('c0', 0, 20_000)
  assert.equal(model.claim('c0', 10_000, 15_000), { ok: true, index: 2, lease: { holder: 'c0', expiry: 25_000 } })
  assert.equal(model.deltas, [{ revision: 2, key }])
  assert.equal(model.claim('c0', 11_000, durationMin), { ok: true, index: 3, lease: { holder: 'c0', expiry: 25_000 } }, 'a shorter claim keeps the expiry')
  assert.equal(model.deltas, [], 'nothing changed, so no delta')
  assert.equal(model.lease(), { lease: 'singular', holder: 'c0', start: 0, expiry: 25_000, grantedAt: 1 }, 'an extension keeps start and grantedAt')
})

rules('another controller is refused while the lease is held, with the holder and expiry named', () => {
  const model = new Model()
  model.claim('c0', 1_000)
  const before = model.context
  assert.equal(model.claim('c1', 15_999), {
    ok: false, index: 2, error: 'controller: cannot claim controller lease "singular" for "c1": controller "c0" holds it until 1970-01-01T00:00:16Z'
  })
  assert.not.match(errorOf(model.claim('c1', 15_999)), '\n')
  assert.is(model.context.controllerLeases, before.controllerLeases)
  assert.equal(model.deltas, [])
})

rules('another controller is granted the lease at and after expiry', () => {
  const model = new Model()
  model.claim('c0', 1_000)
  assert.equal(model.claim('c1', 16_000, 30_000), { ok: true, index: 2, lease: { holder: 'c1', expiry: 46_000 } })
  assert.equal(model.lease(), { lease: 'singular', holder: 'c1', start: 16_000, expiry: 46_000, grantedAt: 2 })
  assert.equal(model.deltas, [{ revision: 2, key }])
  // The old holder, having lost it, claims afresh only after the new expiry.
  assert.match(errorOf(model.claim('c0', 45_999)), 'controller "c1" holds it until 1970-01-01T00:00:46Z')
  assert.equal(model.claim('c0', 100_000), { ok: true, index: 4, lease: { holder: 'c0', expiry: 115_000 } }, 'long expired')
  assert.is(model.lease()!.grantedAt, 4)
})

rules('the holder claiming after its own expiry starts a new grant', () => {
  const model = new Model()
  model.claim('c0', 0)
  assert.equal(model.claim('c0', 15_000), { ok: true, index: 2, lease: { holder: 'c0', expiry: 30_000 } })
  assert.equal(model.lease(), { lease: 'singular', holder: 'c0', start: 15_000, expiry: 30_000, grantedAt: 2 })
})

rules('leases of different names are independent', () => {
  const model = new Model()
  assert.ok(model.claim('c0', 0, 15_000, 'provisioner').ok)
  assert.ok(model.claim('c1', 0, 15_000, 'cleanup').ok)
  assert.is(model.lease('provisioner')!.holder, 'c0')
  assert.is(model.lease('cleanup')!.holder, 'c1')
  assert.is(model.context.controllerLeases.size, 2)
})

rules('release: the holder frees it at once; another controller is refused; absent is a no-op', () => {
  const model = new Model()
  assert.equal(model.release('c0'), { ok: true, index: 1 }, 'nothing to release')
  assert.equal(model.deltas, [])
  model.claim('c0', 0)
  const held = model.context.controllerLeases
  assert.equal(model.release('c1'), {
    ok: false, index: 3, error: 'controller: cannot release controller lease "singular" for "c1": controller "c0" holds the lease'
  })
  assert.is(model.context.controllerLeases, held)
  assert.equal(model.release('c0'), { ok: true, index: 4 })
  assert.equal(model.deltas, [{ revision: 4, key, removed: true }])
  assert.is(model.lease(), undefined)
  assert.equal(model.claim('c1', 1), { ok: true, index: 5, lease: { holder: 'c1', expiry: 15_001 } }, 'free at once after release')
})

rules.run()

// ---------------------------------------------------------------------------------

const checks = suite('model: controller lease permissions and checks')

checks('only the named controller may claim or release', () => {
  const model = withUnit()
  const proposers: Array<[Entity, string]> = [
    [admin, 'user-admin'],
    [{ kind: 'machine', id: '0' }, 'machine-0'],
    [{ kind: 'unit', name: 'web/0' }, 'unit-web-0'],
    [controller('c1'), 'controller-c1']
  ]
  for (const [proposer, tag] of proposers) {
    assert.equal(model.apply('claim-controller-lease', { lease, controller: 'c0', now: 0, durationMs: 15_000 }, proposer), {
      ok: false, index: model.index, error: `controller: cannot claim controller lease "singular" for "c0": permission denied for ${tag}`
    })
  }
  assert.is(model.lease(), undefined)
  model.claim('c0', 0)
  for (const [proposer, tag] of proposers) {
    assert.equal(errorOf(model.apply('release-controller-lease', { lease, controller: 'c0' }, proposer)),
      `controller: cannot release controller lease "singular" for "c0": permission denied for ${tag}`)
  }
  assert.is(model.lease()!.holder, 'c0', 'still held')
})

checks('bad lease names, controller ids, clock readings and durations are refused and change nothing', () => {
  const model = new Model()
  model.claim('c0', 0)
  const bad: Array<[Omit<CommandOf<'claim-controller-lease'>, 'type' | 'requestId' | 'proposer'>, string]> = [
    [{ lease: '', controller: 'c0', now: 1, durationMs: 15_000 }, '"" is not a lease name of 1 to 64 characters a-z, 0-9 and "-"'],
    [{ lease: 'a'.repeat(65), controller: 'c0', now: 1, durationMs: 15_000 }, 'is not a lease name'],
    [{ lease: 'Singular', controller: 'c0', now: 1, durationMs: 15_000 }, '"Singular" is not a lease name'],
    [{ lease: 'a/b', controller: 'c0', now: 1, durationMs: 15_000 }, '"a/b" is not a lease name'],
    [{ lease: 'a_b', controller: 'c0', now: 1, durationMs: 15_000 }, '"a_b" is not a lease name'],
    [{ lease: 42 as unknown as string, controller: 'c0', now: 1, durationMs: 15_000 }, '42 is not a lease name'],
    [{ lease, controller: 'c0', now: -1, durationMs: 15_000 }, '"now" must be a clock reading in whole milliseconds, got -1'],
    [{ lease, controller: 'c0', now: 1.5, durationMs: 15_000 }, '"now" must be a clock reading'],
    [{ lease, controller: 'c0', now: 1, durationMs: durationMin - 1 }, `duration must be ${durationMin} to ${durationMax} ms, got ${durationMin - 1}`],
    [{ lease, controller: 'c0', now: 1, durationMs: durationMax + 1 }, `duration must be ${durationMin} to ${durationMax} ms`],
    [{ lease, controller: 'c0', now: 1, durationMs: 15_000.5 }, 'duration must be'],
    [{ lease, controller: 'c0', now: 1, durationMs: '15000' as unknown as number }, 'duration must be']
  ]
  for (const [fields, error] of bad) {
    const before = model.context
    assert.match(errorOf(model.apply('claim-controller-lease', fields, controller('c0'))), error)
    assert.equal(model.deltas, [])
    assert.is(model.context.controllerLeases, before.controllerLeases)
    assert.is(model.context.keyRevisions, before.keyRevisions)
  }
  assert.match(errorOf(model.apply('release-controller-lease', { lease: 'No!', controller: 'c0' }, controller('c0'))), '"No!" is not a lease name')
  assert.match(errorOf(model.apply('claim-controller-lease', { lease, controller: '', now: 1, durationMs: 15_000 }, controller('c0'))), '"" is not a valid controller id')
  assert.equal(model.lease(), { lease: 'singular', holder: 'c0', start: 0, expiry: 15_000, grantedAt: 1 })
  // The bounds themselves are accepted.
  assert.ok(model.claim('c0', 2, durationMin, 'a'.repeat(64)).ok)
  assert.ok(model.claim('c0', 2, durationMax, 'z-9').ok)
  assert.ok(isControllerLeaseName('provisioner-2'))
})

checks('a retry with the same request id applies once and returns the first result', () => {
  const model = new Model()
  const first = model.apply('claim-controller-lease', { lease, controller: 'c0', now: 0, durationMs: 15_000 }, controller('c0'), 'claim-1')
  assert.equal(first, { ok: true, index: 1, lease: { holder: 'c0', expiry: 15_000 } })
  // Another controller takes the lease over after expiry; then c0's retry of its old claim commits.
  model.claim('c1', 15_000)
  const retried = model.apply('claim-controller-lease', { lease, controller: 'c0', now: 0, durationMs: 15_000 }, controller('c0'), 'claim-1')
  assert.equal(retried, first)
  assert.ok(model.last!.duplicate)
  assert.equal(model.deltas, [])
  assert.is(model.lease()!.holder, 'c1', 'the retry did not apply again')
  assert.is(model.context.revision, 3)
  // The same id for another command type is refused.
  assert.match(errorOf(model.apply('release-controller-lease', { lease, controller: 'c0' }, controller('c0'), 'claim-1')),
    'request id "claim-1" was already used for "claim-controller-lease"')
  // Request ids are per proposer: c1 may use the same one.
  assert.ok(model.apply('release-controller-lease', { lease, controller: 'c1' }, controller('c1'), 'claim-1').ok)
  assert.is(model.lease(), undefined)
})

checks('both commands are store events', () => {
  const store = createModelStore()
  const claim: ModelCommand = { type: 'claim-controller-lease', requestId: 'a', proposer: controller('c0'), lease, controller: 'c0', now: 5, durationMs: 15_000 }
  const applied = applyToStore(store, claim, 1)
  assert.equal(applied?.result, { ok: true, index: 1, lease: { holder: 'c0', expiry: 15_005 } })
  assert.equal(applied?.deltas, [{ revision: 1, key }])
  const release: ModelCommand = { type: 'release-controller-lease', requestId: 'b', proposer: controller('c0'), lease, controller: 'c0' }
  assert.equal(applyToStore(store, release, 2)?.deltas, [{ revision: 2, key, removed: true }])
  assert.is(store.getSnapshot().context.controllerLeases.size, 0)
})

checks.run()

// ---------------------------------------------------------------------------------

const visibility = suite('model: controller lease deltas and visibility')

visibility('the key parses and is visible to users and controllers only', () => {
  assert.equal(parseKey(key), { kind: 'controller-lease', lease: 'singular' })
  const model = withUnit()
  const since = model.context.revision
  model.claim('c0', 0)
  const unit: Entity = { kind: 'unit', name: 'web/0' }
  const machine: Entity = { kind: 'machine', id: '0' }
  const seen = (entity: Entity): string[] => changesSince(model.context, since, entity).changes.map(c => c.removed === true ? `-${c.key}` : c.key)

  assert.equal(seen(admin), [key])
  assert.equal(seen(controller('c1')), [key])
  assert.equal(seen(unit), [])
  assert.equal(seen(machine), [])
  assert.ok(mayRead(model.context, admin, key))
  assert.ok(mayRead(model.context, controller('c0'), key))
  assert.not.ok(mayRead(model.context, unit, key))
  assert.not.ok(mayRead(model.context, machine, key))

  // An extension changes the key; an agent still sees nothing of it.
  model.claim('c0', 10_000)
  assert.equal(changesSince(model.context, model.index - 1, admin).changes, [{ key, revision: model.index }])
  assert.equal(seen(unit), [])

  // The removal is told to admins only.
  model.release('c0')
  assert.equal(seen(admin), [`-${key}`])
  assert.equal(seen(controller('c1')), [`-${key}`])
  assert.equal(seen(unit), [])
  assert.equal(seen(machine), [])
  // The agents' watches work all along; they just never include the lease.
  for (const entity of [unit, machine]) {
    const all = changesSince(model.context, 0, entity).changes.map(c => c.key)
    assert.ok(all.includes('unit/web/0'), `${entity.kind} sees its unit`)
    assert.not.ok(all.some(k => k.startsWith('controller-lease/')), `${entity.kind} sees no controller lease`)
  }
})

visibility('snapshot and restore keep the table', () => {
  const model = withUnit()
  model.claim('c0', 0, 15_000, 'provisioner')
  model.claim('c1', 0, 60_000, 'cleanup')
  const restored = restoreModel(decode(encode(snapshotModel(model.context), 'test'), 'test'))
  assert.equal(restored, model.context)
  assert.equal(tableGet(restored.controllerLeases, 'cleanup'), { lease: 'cleanup', holder: 'c1', start: 0, expiry: 60_000, grantedAt: model.index })
  // The restored model decides as the original does.
  const a = applyCommand(model.context, claimAs('c1', 'provisioner', 14_999), { index: model.index + 1 })
  const b = applyCommand(restored, claimAs('c1', 'provisioner', 14_999), { index: model.index + 1 })
  assert.equal(a, b)
  assert.match(errorOf(a.result), 'controller "c0" holds it until 1970-01-01T00:00:15Z')

  const { controllerLeases: _, ...without } = model.context
  assert.throws(() => restoreModel({ ...snapshotModel(model.context), context: without }), /expected a table in "controllerLeases"/)
  assert.throws(() => restoreModel({ ...snapshotModel(model.context), context: { ...model.context, controllerLeases: { size: 1, buckets: [] } } }),
    /expected a table in "controllerLeases"/)
})

function claimAs (id: string, name: string, now: number): ModelCommand {
  return { type: 'claim-controller-lease', requestId: `x-${id}-${now}`, proposer: controller(id), lease: name, controller: id, now, durationMs: 15_000 }
}

visibility.run()

// ---------------------------------------------------------------------------------

const belief = suite('model: controller lease belief')

belief('believesControllerLease: the margin comes off the end of the lease', () => {
  const record: ControllerLeaseRecord = { lease, holder: 'c0', start: 0, expiry: 15_000, grantedAt: 1 }
  assert.ok(believesControllerLease(record, 'c0', 0))
  assert.ok(believesControllerLease(record, 'c0', 15_000 - margin - 1))
  assert.not.ok(believesControllerLease(record, 'c0', 15_000 - margin))
  assert.not.ok(believesControllerLease(record, 'c0', 15_000))
  assert.not.ok(believesControllerLease(record, 'c1', 0), 'only the holder believes')
  assert.not.ok(believesControllerLease(undefined, 'c0', 0))
})

belief('controllerLeaseHeld: in force until the expiry, which the model grants at', () => {
  const record: ControllerLeaseRecord = { lease, holder: 'c0', start: 0, expiry: 15_000, grantedAt: 1 }
  assert.ok(controllerLeaseHeld(record, 14_999))
  assert.not.ok(controllerLeaseHeld(record, 15_000))
  // The holder stops believing a full margin before another controller can be granted it.
  const model = new Model()
  model.claim('c0', 0)
  const granted = model.lease()!
  for (let now = 0; now <= 20_000; now += 250) {
    const othersMayClaim = !controllerLeaseHeld(granted, now)
    if (othersMayClaim) assert.not.ok(believesControllerLease(granted, 'c0', now - margin), `holder believes at ${now - margin} while others may claim at ${now}`)
  }
})

belief.run()
