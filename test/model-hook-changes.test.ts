import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { decode, encode } from '../runtime/codec.ts'
import type { UnitName } from '../runtime/ids.ts'
import { limits } from '../runtime/limits.ts'
import { parseKey } from '../runtime/model/keys.ts'
import { applyCommand, applyToStore, createModelStore, describeCommand, emptyModel } from '../runtime/model/model-store.ts'
import { restoreModel, snapshotModel } from '../runtime/model/model-snapshot.ts'
import type {
  ApplicationRecord, ApplyOutcome, CommandOf, CommandResult, Entity, ModelCommand, ModelCommandType, ModelContext, UnitRecord
} from '../runtime/model/model-types.ts'
import { modelCommandTypes } from '../runtime/model/model-types.ts'
import { unitHookDataFor } from '../runtime/model/remote-state-view.ts'
import { tableGet, tableWith } from '../runtime/model/table.ts'
import { changesSince, mayRead } from '../runtime/model/watch.ts'

/**
 * `commit-hook-changes` (Juju's CommitHookChanges: one hook's buffered relation
 * settings, ports and charm state, applied together or not at all) and
 * `set-workload-version` (application-version-set, immediate).
 */

const admin: Entity = { kind: 'user', name: 'admin' }
const controller: Entity = { kind: 'controller', id: '0' }
const unit = (name: UnitName): Entity => ({ kind: 'unit', name })
const machine = (id: string): Entity => ({ kind: 'machine', id })

/** Every refusal any test saw: each must be one line naming the controller. */
const refusals: string[] = []

type Fields<T extends ModelCommandType> = Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>

class Model {
  context: ModelContext = emptyModel()
  index = 0
  requests = 0
  last: ApplyOutcome | undefined

  run<T extends ModelCommandType> (type: T, fields: Fields<T>, proposer: Entity = admin, requestId = `req-${this.requests++}`): CommandResult {
    const command = { type, requestId, proposer, ...fields } as unknown as ModelCommand
    this.last = applyCommand(this.context, command, { index: ++this.index, term: 1 })
    this.context = this.last.context
    if (!this.last.result.ok) refusals.push(this.last.result.error)
    return this.last.result
  }

  ok<T extends ModelCommandType> (type: T, fields: Fields<T>, proposer: Entity = admin): CommandResult & { ok: true } {
    const result = this.run(type, fields, proposer)
    if (!result.ok) assert.unreachable(result.error)
    return result as CommandResult & { ok: true }
  }

  /** Refused with exactly `error` (or matching it), and nothing changed but the revision. */
  refused<T extends ModelCommandType> (type: T, fields: Fields<T>, error: string | RegExp, proposer: Entity = admin): void {
    const before = this.context
    const result = this.run(type, fields, proposer)
    if (result.ok) return assert.unreachable(`${type} was applied; expected ${String(error)}`)
    if (typeof error === 'string') assert.is(result.error, error)
    else assert.match(result.error, error)
    assert.equal(this.last!.deltas, [])
    assert.equal({ ...this.context, requests: undefined }, { ...before, revision: this.index, term: 1, requests: undefined }, 'a refusal changes nothing')
  }

  /** A commit proposed by the unit itself. */
  commit (name: UnitName, fields: Omit<Fields<'commit-hook-changes'>, 'unit'>): CommandResult & { ok: true } {
    return this.ok('commit-hook-changes', { unit: name, ...fields }, unit(name))
  }

  refusedCommit (name: UnitName, fields: Omit<Fields<'commit-hook-changes'>, 'unit'>, error: string | RegExp): void {
    this.refused('commit-hook-changes', { unit: name, ...fields }, error, unit(name))
  }

  app (name: string): ApplicationRecord | undefined { return tableGet(this.context.applications, name) }
  unit (name: string): UnitRecord | undefined { return tableGet(this.context.units, name) }
  settings (key: string) { return tableGet(this.context.settings, key) }
  deltaKeys (): string[] { return this.last!.deltas.map(d => d.removed === true ? `-${d.key}` : d.key).sort() }
  seen (entity: Entity, revision = 0): string[] {
    return changesSince(this.context, revision, entity).changes.map(c => c.removed === true ? `-${c.key}` : c.key)
  }
}

/**
 * web/0 on machine 0 (the leader of web), web/1 on machine 1, db/0 placed beside web/0 on
 * machine 0; web:db related (relation 1; web's peer relation is 0) with web/0 and db/0
 * in scope, web/1 not.
 */
function world (): Model {
  const model = new Model()
  model.ok('add-charm', {
    url: 'local:web-0',
    hash: 'a'.repeat(16),
    metadata: { name: 'web', requires: { db: 'mysql' }, provides: { website: 'http' }, peers: { cluster: 'web-cluster' } }
  })
  model.ok('add-charm', { url: 'local:mysql-0', hash: 'b'.repeat(16), metadata: { name: 'mysql', provides: { server: 'mysql' } } })
  model.ok('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 2 })
  model.ok('deploy', { application: 'db', charm: 'local:mysql-0', config: {}, constraints: {}, numUnits: 1, placement: ['0'] })
  assert.is(model.ok('integrate', { a: 'web:db', b: 'db:server' }).relationId, 1)
  model.ok('enter-scope', { unit: 'web/0', relationId: 1 }, unit('web/0'))
  model.ok('enter-scope', { unit: 'db/0', relationId: 1 }, unit('db/0'))
  model.ok('claim-leadership', { application: 'web', unit: 'web/0', now: 0, durationMs: 60_000 }, unit('web/0'))
  assert.equal(model.unit('db/0')!.machine, '0')
  return model
}

const tcp = (from: number, to = from, endpoints?: string[]) => endpoints === undefined ? { protocol: 'tcp' as const, from, to } : { protocol: 'tcp' as const, from, to, endpoints }

// ---------------------------------------------------------------------------------

const commit = suite('model: commit-hook-changes')

commit('applies relation settings, ports and charm state together; each part has its own delta key', () => {
  const model = world()
  const before = model.settings('relation/1/settings/web/0')!.version
  model.commit('web/0', {
    relationSettings: [{ relationId: 1, settings: { host: 'h' } }, { relationId: 1, application: true, settings: { url: 'http://h' } }],
    openPorts: [tcp(80)],
    charmState: { set: { token: 't' } }
  })
  assert.equal(model.settings('relation/1/settings/web/0')!.values.host, 'h')
  assert.is(model.settings('relation/1/settings/web/0')!.version, before + 1)
  assert.equal(model.settings('relation/1/app-settings/web'), { version: 1, values: { url: 'http://h' } })
  assert.equal(model.unit('web/0')!.openedPorts, [{ protocol: 'tcp', from: 80, to: 80, endpoints: ['*'] }])
  assert.equal(model.unit('web/0')!.charmState, { token: 't' })
  assert.equal(model.deltaKeys(), ['relation/1/app-settings/web', 'relation/1/settings/web/0', 'unit/web/0/ports', 'unit/web/0/state'],
    'the unit record itself is not reported as changed')

  // An empty commit, and one that changes nothing, are accepted and report nothing.
  model.commit('web/0', {})
  assert.equal(model.deltaKeys(), [])
  model.commit('web/0', { relationSettings: [{ relationId: 1, settings: { host: 'h' } }], openPorts: [tcp(80)], charmState: { set: { token: 't' } } })
  assert.equal(model.deltaKeys(), [])
})

commit('proposers: the unit, its machine agent or a controller; nobody else', () => {
  const model = world()
  model.ok('commit-hook-changes', { unit: 'web/0', charmState: { set: { a: '1' } } }, machine('0'))
  model.ok('commit-hook-changes', { unit: 'web/0', charmState: { set: { a: '2' } } }, controller)
  model.refused('commit-hook-changes', { unit: 'web/0', charmState: { set: { a: '3' } } },
    'controller: cannot commit hook changes of "web/0": permission denied for unit-db-0', unit('db/0'))
  model.refused('commit-hook-changes', { unit: 'web/0', charmState: { set: { a: '3' } } }, /permission denied for machine-1/, machine('1'))
  model.refused('commit-hook-changes', { unit: 'web/0', charmState: { set: { a: '3' } } }, /permission denied for user-admin/, admin)
  model.refused('commit-hook-changes', { unit: 'web/9', charmState: { set: { a: '3' } } }, 'controller: cannot commit hook changes of "web/9": unit "web/9" not found', controller)
  assert.equal(model.unit('web/0')!.charmState, { a: '2' })
})

commit('all or nothing: one bad part refuses the whole commit and nothing of it is applied', () => {
  const model = world()
  const good = { openPorts: [tcp(80)], charmState: { set: { k: 'v' } } }
  const mine = { relationId: 1, settings: { host: 'h' } }
  const prefix = 'controller: cannot commit hook changes of "web/0": '
  model.refusedCommit('web/0', { ...good, relationSettings: [mine, { relationId: 7, settings: { a: '1' } }] }, `${prefix}relation 7 not found`)
  model.refusedCommit('web/0', { ...good, relationSettings: [mine, { relationId: 'one' as unknown as number, settings: {} }] }, `${prefix}"one" is not a valid relation id`)
  model.refusedCommit('db/0', { relationSettings: [{ relationId: 0, settings: { a: '1' } }], openPorts: [tcp(5432)] },
    'controller: cannot commit hook changes of "db/0": unit "db/0" is not part of relation 0')
  model.refusedCommit('web/1', { openPorts: [tcp(80)], relationSettings: [{ relationId: 1, settings: { a: '1' } }] },
    'controller: cannot commit hook changes of "web/1": unit "web/1" is not in scope of relation 1')
  model.refusedCommit('web/1', { charmState: { set: { k: 'v' } }, relationSettings: [{ relationId: 0, application: true, settings: { a: '1' } }] },
    'controller: cannot commit hook changes of "web/1": unit "web/1" is not the leader of "web"')
  model.refusedCommit('web/0', { ...good, relationSettings: [mine, { relationId: 1, settings: { host: 'other' } }] }, `${prefix}unit settings of relation 1 are given twice`)
  model.refusedCommit('web/0', { ...good, relationSettings: [{ relationId: 1, settings: { n: 1 as unknown as string } }] }, `${prefix}unit settings of relation 1 value of "n" must be a string`)
  model.refusedCommit('web/0', { ...good, relationSettings: [{ relationId: 1, application: 'yes' as unknown as boolean, settings: {} }] }, `${prefix}application must be true or false`)
  model.refusedCommit('web/0', { ...good, relationSettings: { relationId: 1 } as unknown as [] }, `${prefix}relation settings must be a list of at most ${2 * limits.relationsPerUnitMax} entries`)
  model.refusedCommit('web/0', { relationSettings: [mine], charmState: good.charmState, openPorts: [tcp(80), { protocol: 'sctp' as 'tcp', from: 1 }] },
    `${prefix}invalid protocol "sctp", expected "tcp", "udp", or "icmp"`)
  model.refusedCommit('web/0', { relationSettings: [mine], openPorts: good.openPorts, charmState: { set: { k: 'v' }, delete: ['k'] } }, `${prefix}charm state key "k" is both set and deleted`)
  model.refusedCommit('web/0', { relationSettings: [mine], ...good, closePorts: [tcp(81, 81, ['nope'])] }, `${prefix}close port range: endpoint "nope" for unit "web/0" not found`)
  // A bag over its size limit once merged is found while writing: the draft still goes.
  model.commit('web/0', { relationSettings: [{ relationId: 1, settings: { big: 'x'.repeat(limits.modelSettingsBytesMax - 1000) } }] })
  model.refusedCommit('web/0', { ...good, relationSettings: [{ relationId: 1, settings: { more: 'y'.repeat(2000) } }] },
    `${prefix}unit settings of relation 1 would exceed ${limits.modelSettingsBytesMax} bytes`)
  assert.equal(model.unit('web/0')!.openedPorts, [])
  assert.equal(model.unit('web/0')!.charmState, {})

  // The same commit without the bad part applies.
  model.commit('web/0', { ...good, relationSettings: [mine] })
  assert.equal(model.deltaKeys(), ['relation/1/settings/web/0', 'unit/web/0/ports', 'unit/web/0/state'])
})

commit('the application bag needs the lease; once another unit leads, the old leader is refused', () => {
  const model = world()
  model.commit('web/0', { relationSettings: [{ relationId: 0, application: true, settings: { peers: 'yes' } }] })
  assert.equal(model.settings('relation/0/app-settings/web')!.values, { peers: 'yes' })
  model.ok('release-leadership', { application: 'web', unit: 'web/0' }, unit('web/0'))
  model.ok('claim-leadership', { application: 'web', unit: 'web/1', now: 1, durationMs: 60_000 }, unit('web/1'))
  model.refusedCommit('web/0', { relationSettings: [{ relationId: 1, application: true, settings: { a: '1' } }], charmState: { set: { k: 'v' } } },
    'controller: cannot commit hook changes of "web/0": unit "web/0" is not the leader of "web"')
  // The leader may write the application bag without being in scope (as relation-settings allows).
  model.commit('web/1', { relationSettings: [{ relationId: 1, application: true, settings: { a: '1' } }] })
  assert.equal(model.settings('relation/1/app-settings/web')!.values, { a: '1' })
})

commit.run()

// ---------------------------------------------------------------------------------

const ports = suite('model: commit-hook-changes ports')

ports('opened ports are normalised, sorted, and merged per range; * absorbs named endpoints', () => {
  const model = world()
  model.commit('web/0', {
    openPorts: [
      tcp(8080),
      { protocol: 'udp', from: 1000, to: 2000, endpoints: ['website'] },
      { protocol: 'icmp' },
      { protocol: 'tcp', from: 80, endpoints: ['website', 'db'] },
      tcp(80, 80, ['website', 'website']),
      tcp(8080, 8080, ['*'])
    ]
  })
  assert.equal(model.unit('web/0')!.openedPorts, [
    { protocol: 'icmp', endpoints: ['*'] },
    { protocol: 'tcp', from: 80, to: 80, endpoints: ['db', 'website'] },
    { protocol: 'tcp', from: 8080, to: 8080, endpoints: ['*'] },
    { protocol: 'udp', from: 1000, to: 2000, endpoints: ['website'] }
  ])
  assert.not.ok('from' in model.unit('web/0')!.openedPorts[0]!, 'icmp has no numbers at all, not null ones')
  assert.equal(model.deltaKeys(), ['unit/web/0/ports'])

  model.commit('web/0', { openPorts: [tcp(80, 80, ['db'])] })
  assert.equal(model.deltaKeys(), [], 'already open for that endpoint')
  model.commit('web/0', { openPorts: [tcp(80, 80, ['cluster'])] })
  assert.equal(model.unit('web/0')!.openedPorts[1]!.endpoints, ['cluster', 'db', 'website'])
  model.commit('web/0', { openPorts: [tcp(80, 80, ['db', '*'])] })
  assert.equal(model.unit('web/0')!.openedPorts[1]!.endpoints, ['*'])
  model.commit('web/0', { openPorts: [tcp(80, 80, ['db'])] })
  assert.equal(model.deltaKeys(), [], 'open for all endpoints already')
})

ports('closing: per endpoint (a range open for * stays open for the others), for *, and what is not open', () => {
  const model = world()
  model.commit('web/0', { openPorts: [tcp(80), tcp(443, 443, ['website']), { protocol: 'udp', from: 53 }] })
  model.commit('web/0', { closePorts: [tcp(80, 80, ['db'])] })
  assert.equal(model.unit('web/0')!.openedPorts[0], { protocol: 'tcp', from: 80, to: 80, endpoints: ['cluster', 'juju-info', 'website'] },
    'every other endpoint of the charm, the implicit juju-info included')
  model.commit('web/0', { closePorts: [tcp(80, 80, ['cluster', 'juju-info', 'website'])] })
  assert.equal(model.unit('web/0')!.openedPorts.map(p => `${p.from}/${p.protocol}`), ['443/tcp', '53/udp'], 'no endpoint left: the range is gone')
  model.commit('web/0', { closePorts: [tcp(9999), { protocol: 'icmp' }, tcp(443, 443, ['db'])] })
  assert.equal(model.deltaKeys(), [], 'closing what is not open (or not for that endpoint) changes nothing')
  model.commit('web/0', { closePorts: [{ protocol: 'udp', from: 53, to: 53, endpoints: ['*'] }, tcp(443)] })
  assert.equal(model.unit('web/0')!.openedPorts, [])
  assert.equal(model.deltaKeys(), ['unit/web/0/ports'])

  // Opens apply before closes, as Juju's state applies a unit's pending changes.
  model.commit('web/0', { openPorts: [tcp(8000)], closePorts: [tcp(8000)] })
  assert.equal(model.deltaKeys(), [])
  assert.equal(model.unit('web/0')!.openedPorts, [])
})

ports('a range overlapping one another unit opened on the same machine is refused; other machines do not count', () => {
  const model = world()
  const refusal = (u: string, verb: string, port: string, existing: string, owner: string): string =>
    `controller: cannot commit hook changes of "${u}": cannot ${verb} ports ${port}: port ranges ${existing} ("${owner}") and ${port} ("${u}") conflict`
  model.commit('web/0', { openPorts: [tcp(80, 90), { protocol: 'icmp' }] })
  model.refusedCommit('db/0', { openPorts: [tcp(85)], charmState: { set: { a: '1' } } }, refusal('db/0', 'open', '85/tcp', '80-90/tcp', 'web/0'))
  model.refusedCommit('db/0', { openPorts: [tcp(80, 90)] }, refusal('db/0', 'open', '80-90/tcp', '80-90/tcp', 'web/0'))
  model.refusedCommit('db/0', { openPorts: [tcp(1, 65535)] }, refusal('db/0', 'open', '1-65535/tcp', '80-90/tcp', 'web/0'))
  // Two icmp ranges always overlap (Juju keeps icmp as -1 to -1).
  model.refusedCommit('db/0', { openPorts: [{ protocol: 'icmp' }] }, refusal('db/0', 'open', 'icmp', 'icmp', 'web/0'))
  // Closing a range that is not open but overlaps one that is: Juju refuses that too.
  model.refusedCommit('db/0', { closePorts: [tcp(85)] }, refusal('db/0', 'close', '85/tcp', '80-90/tcp', 'web/0'))
  // The unit's own ranges: the same range again merges, an overlapping other one conflicts.
  model.refusedCommit('web/0', { openPorts: [tcp(85, 95)] }, refusal('web/0', 'open', '85-95/tcp', '80-90/tcp', 'web/0'))
  model.refusedCommit('web/0', { openPorts: [tcp(100, 110), tcp(105)] }, refusal('web/0', 'open', '105/tcp', '100-110/tcp', 'web/0'))

  model.commit('db/0', { openPorts: [{ protocol: 'udp', from: 85 }, tcp(91)] })
  assert.equal(model.unit('db/0')!.openedPorts.map(p => `${p.from}/${p.protocol}`), ['91/tcp', '85/udp'], 'other protocols and adjacent ranges are fine')
  model.commit('web/1', { openPorts: [tcp(80, 90), { protocol: 'icmp' }] })
  assert.equal(model.unit('web/1')!.openedPorts.length, 2, 'machine 1 has its own port space')
  // Once web/0 closes its range, db/0 may open an overlapping one.
  model.commit('web/0', { closePorts: [tcp(80, 90)] })
  model.commit('db/0', { openPorts: [tcp(85)] })
})

ports('port ranges and endpoints are checked as Juju checks them', () => {
  const model = world()
  const prefix = 'controller: cannot commit hook changes of "web/0": '
  model.refusedCommit('web/0', { openPorts: [{ protocol: 'icmp', from: 8 }] }, `${prefix}protocol "icmp" doesn't support any ports; got 8`)
  model.refusedCommit('web/0', { openPorts: [tcp(0)] }, `${prefix}port range bounds must be between 1 and 65535, got 0-0`)
  model.refusedCommit('web/0', { openPorts: [tcp(80, 65536)] }, `${prefix}port range bounds must be between 1 and 65535, got 80-65536`)
  model.refusedCommit('web/0', { openPorts: [tcp(1.5)] }, `${prefix}port range bounds must be between 1 and 65535, got 1.5-1.5`)
  model.refusedCommit('web/0', { openPorts: [{ protocol: 'tcp' }] }, `${prefix}port range bounds must be between 1 and 65535, got undefined-undefined`)
  model.refusedCommit('web/0', { openPorts: [tcp(90, 80)] }, `${prefix}invalid port range 90-80/tcp`)
  model.refusedCommit('web/0', { openPorts: [tcp(80, 80, ['db', 'nope'])] }, `${prefix}open port range: endpoint "nope" for unit "web/0" not found`)
  model.refusedCommit('web/0', { openPorts: [tcp(80, 80, ['server'])] }, `${prefix}open port range: endpoint "server" for unit "web/0" not found`)
  model.refusedCommit('web/0', { openPorts: [tcp(80, 80, [])] }, `${prefix}open port range 80/tcp: endpoints must list "*" or endpoint names`)
  model.refusedCommit('web/0', { openPorts: [7 as unknown as ReturnType<typeof tcp>] }, `${prefix}each of openPorts must be a map with "protocol", "from", "to" and "endpoints"`)
  model.refusedCommit('web/0', { closePorts: 'all' as unknown as [] }, `${prefix}closePorts must be a list of at most ${limits.modelOpenedPortRangesPerUnitMax} port ranges`)
  model.commit('web/0', { openPorts: [tcp(65535, 65535, ['juju-info']), tcp(1)] })
  assert.equal(model.unit('web/0')!.openedPorts.map(p => p.from), [1, 65535])
})

ports('a unit may have modelOpenedPortRangesPerUnitMax ranges open, and no more', () => {
  const model = world()
  const max = limits.modelOpenedPortRangesPerUnitMax
  const ranges = Array.from({ length: max }, (_, i) => tcp(10_000 + i))
  model.refusedCommit('web/0', { openPorts: [...ranges, tcp(20_000)] },
    `controller: cannot commit hook changes of "web/0": openPorts must be a list of at most ${max} port ranges`)
  model.commit('web/0', { openPorts: ranges.slice(0, max - 1) })
  model.commit('web/0', { openPorts: [ranges[max - 1]!, ...ranges.slice(0, 10)] })
  assert.is(model.unit('web/0')!.openedPorts.length, max)
  model.refusedCommit('web/0', { openPorts: [tcp(20_000)] }, `controller: cannot commit hook changes of "web/0": unit "web/0" would have more than ${max} port ranges open`)
  // Closing and opening in one commit counts the result.
  model.commit('web/0', { openPorts: [tcp(20_000)], closePorts: [tcp(10_000)] })
  assert.is(model.unit('web/0')!.openedPorts.at(-1)!.from, 20_000)
})

ports.run()

// ---------------------------------------------------------------------------------

const state = suite('model: commit-hook-changes charm state')

state('set, overwrite, delete (and an empty value deletes, as state-set k= does); keys stay sorted', () => {
  const model = world()
  model.commit('web/0', { charmState: { set: { b: '2', a: '1' } } })
  assert.equal(Object.keys(model.unit('web/0')!.charmState), ['a', 'b'])
  model.commit('web/0', { charmState: { set: { a: '1' }, delete: ['missing'] } })
  assert.equal(model.deltaKeys(), [], 'unchanged state is no change')
  model.commit('web/0', { charmState: { set: { b: '3', c: '' }, delete: ['a'] } })
  assert.equal(model.unit('web/0')!.charmState, { b: '3' })
  model.commit('web/0', { charmState: { set: { b: '' } } })
  assert.equal(model.unit('web/0')!.charmState, {})
  assert.equal(model.deltaKeys(), ['unit/web/0/state'])
  model.commit('web/0', { charmState: { set: JSON.parse('{"__proto__": "x"}') as Record<string, string> } })
  assert.is(Object.getPrototypeOf(model.unit('web/0')!.charmState), Object.prototype, 'a __proto__ key is only a key')
  assert.equal(Object.keys(model.unit('web/0')!.charmState), ['__proto__'])
  assert.equal(model.unit('web/1')!.charmState, {}, 'state is per unit')

  const prefix = 'controller: cannot commit hook changes of "web/0": '
  model.refusedCommit('web/0', { charmState: { set: { k: 1 as unknown as string } } }, `${prefix}charm state value of "k" must be a string`)
  model.refusedCommit('web/0', { charmState: { set: { '': 'v' } } }, `${prefix}charm state key "" must be 1 to 1024 characters`)
  model.refusedCommit('web/0', { charmState: { delete: 'k' as unknown as string[] } }, `${prefix}charm state "delete" must be a list of at most ${limits.modelCharmStateKeysMax} keys`)
  model.refusedCommit('web/0', { charmState: [] as unknown as { set: {} } }, `${prefix}charm state changes must be a map with "set" and "delete"`)
})

state('the quota: modelCharmStateBytesMax bytes of UTF-8 and modelCharmStateKeysMax keys', () => {
  const model = world()
  const prefix = 'controller: cannot commit hook changes of "web/0": '
  // "é" is two bytes in UTF-8: key "k" plus 32767 of them is one byte under the quota.
  const half = (limits.modelCharmStateBytesMax - 2) / 2
  model.commit('web/0', { charmState: { set: { k: 'é'.repeat(half) } } })
  model.refusedCommit('web/0', { charmState: { set: { k: 'é'.repeat(half + 1) } } }, `${prefix}charm state would exceed ${limits.modelCharmStateBytesMax} bytes`)
  model.refusedCommit('web/0', { charmState: { set: { k2: 'x' } } }, `${prefix}charm state would exceed ${limits.modelCharmStateBytesMax} bytes`)
  model.commit('web/0', { charmState: { set: { k: 'x'.repeat(limits.modelCharmStateBytesMax - 1) } } })
  assert.is(model.unit('web/0')!.charmState.k!.length, limits.modelCharmStateBytesMax - 1, 'exactly at the quota')
  model.commit('web/0', { charmState: { delete: ['k'] } })

  const keys = Object.fromEntries(Array.from({ length: limits.modelCharmStateKeysMax }, (_, i) => [`k${i}`, 'v']))
  model.refusedCommit('web/0', { charmState: { set: { ...keys, extra: 'v' } } }, `${prefix}charm state "set" has more than ${limits.modelCharmStateKeysMax} keys`)
  model.commit('web/0', { charmState: { set: keys } })
  assert.is(Object.keys(model.unit('web/0')!.charmState).length, limits.modelCharmStateKeysMax)
  model.refusedCommit('web/0', { charmState: { set: { extra: 'v' } } }, `${prefix}charm state would have more than ${limits.modelCharmStateKeysMax} keys`)
  model.commit('web/0', { charmState: { set: { extra: 'v' }, delete: ['k0'] } })
  assert.ok(Object.hasOwn(model.unit('web/0')!.charmState, 'extra'))
})

state.run()

// ---------------------------------------------------------------------------------

const visibility = suite('model: hook change deltas and visibility')

visibility('ports and state keys: the unit, its machine agent and admins see them; another unit on the machine does not', () => {
  const model = world()
  const revision = model.context.revision
  model.commit('web/0', { openPorts: [tcp(80)], charmState: { set: { secret: 's' } } })
  assert.equal(parseKey('unit/web/0/state'), { kind: 'unit-state', unit: 'web/0' })
  assert.equal(parseKey('unit/web/0/ports'), { kind: 'unit-ports', unit: 'web/0' })
  assert.equal(parseKey('unit/web/0/status'), { kind: 'unit-status', unit: 'web/0' })

  assert.equal(model.seen(unit('web/0'), revision), ['unit/web/0/ports', 'unit/web/0/state'])
  assert.equal(model.seen(machine('0'), revision), ['unit/web/0/ports', 'unit/web/0/state'])
  assert.equal(model.seen(admin, revision), ['unit/web/0/ports', 'unit/web/0/state'])
  assert.equal(model.seen(unit('db/0'), revision), [], 'db/0 shares the machine, not the unit')
  assert.equal(model.seen(unit('web/1'), revision), [], 'nor does another unit of the application')
  assert.equal(model.seen(machine('1'), revision), [])
  for (const key of ['unit/web/0/state', 'unit/web/0/ports']) {
    assert.ok(mayRead(model.context, unit('web/0'), key))
    assert.ok(mayRead(model.context, machine('0'), key))
    assert.ok(mayRead(model.context, controller, key))
    assert.not.ok(mayRead(model.context, unit('db/0'), key), `db/0 may not read ${key}`)
    assert.not.ok(mayRead(model.context, unit('web/1'), key), `web/1 may not read ${key}`)
    assert.not.ok(mayRead(model.context, machine('1'), key), `machine 1 may not read ${key}`)
  }
})

visibility('a dead unit takes its ports and state keys with it; one that never committed had none', () => {
  const model = world()
  model.commit('web/0', { openPorts: [tcp(80)], charmState: { set: { a: '1' } } })
  model.ok('remove-unit', { unit: 'web/0' })
  model.ok('leave-scope', { unit: 'web/0', relationId: 1 }, unit('web/0'))
  const revision = model.context.revision
  model.ok('unit-dead', { unit: 'web/0' }, unit('web/0'))
  for (const key of ['-unit/web/0/ports', '-unit/web/0/state']) assert.ok(model.deltaKeys().includes(key), key)
  const seenByMachine = model.seen(machine('0'), revision)
  assert.ok(seenByMachine.includes('-unit/web/0/state'), 'the machine agent learns the state is gone')
  assert.not.ok(model.seen(unit('db/0'), revision).includes('-unit/web/0/state'), 'nobody else does')
  // A port range the dead unit held no longer blocks the machine.
  model.commit('db/0', { openPorts: [tcp(80)] })

  model.ok('remove-unit', { unit: 'web/1' })
  model.ok('unit-dead', { unit: 'web/1' }, unit('web/1'))
  assert.not.ok(model.deltaKeys().some(key => key.endsWith('/ports') || key.endsWith('/state')), model.deltaKeys().join(' '))
})

visibility('a retried commit (same request id) applies once and gets the original answer', () => {
  const model = world()
  const fields = { unit: 'web/0', relationSettings: [{ relationId: 1, settings: { n: '1' } }], openPorts: [tcp(80)], charmState: { set: { a: '1' } } }
  const first = model.run('commit-hook-changes', fields, unit('web/0'), 'hook-7')
  const version = model.settings('relation/1/settings/web/0')!.version
  const before = model.context
  const again = model.run('commit-hook-changes', fields, unit('web/0'), 'hook-7')
  assert.equal(again, first)
  assert.ok(model.last!.duplicate)
  assert.equal(model.last!.deltas, [])
  assert.equal(model.context, { ...before, revision: model.index, term: 1 })
  assert.is(model.settings('relation/1/settings/web/0')!.version, version)

  const refused = model.run('commit-hook-changes', { unit: 'web/0', openPorts: [tcp(0)] }, unit('web/0'), 'hook-8')
  assert.not.ok(refused.ok)
  assert.equal(model.run('commit-hook-changes', { unit: 'web/0', openPorts: [tcp(81)] }, unit('web/0'), 'hook-8'), refused, 'a refusal is remembered too')
  assert.equal(model.unit('web/0')!.openedPorts.length, 1)
})

visibility.run()

// ---------------------------------------------------------------------------------

const version = suite('model: set-workload-version')

version('the last writer wins; unchanged is no change; bounded; the unit agent proposes it', () => {
  const model = world()
  assert.is(model.app('web')!.workloadVersion, '')
  model.ok('set-workload-version', { unit: 'web/1', version: '2.4.1' }, unit('web/1'))
  assert.is(model.app('web')!.workloadVersion, '2.4.1')
  assert.equal(model.deltaKeys(), ['application/web'])
  model.ok('set-workload-version', { unit: 'web/0', version: '2.4.1' }, machine('0'))
  assert.equal(model.deltaKeys(), [])
  model.ok('set-workload-version', { unit: 'web/0', version: '2.5.0' }, unit('web/0'))
  assert.is(model.app('web')!.workloadVersion, '2.5.0')
  assert.is(model.app('db')!.workloadVersion, '', 'per application')
  model.ok('set-workload-version', { unit: 'web/0', version: 'x'.repeat(limits.modelWorkloadVersionLengthMax) }, unit('web/0'))
  model.refused('set-workload-version', { unit: 'web/0', version: 'x'.repeat(limits.modelWorkloadVersionLengthMax + 1) },
    `controller: cannot set the workload version of "web/0": version must be a string of at most ${limits.modelWorkloadVersionLengthMax} characters`, unit('web/0'))
  model.refused('set-workload-version', { unit: 'web/0', version: 2 as unknown as string }, /version must be a string/, unit('web/0'))
  model.refused('set-workload-version', { unit: 'web/0', version: '1' }, 'controller: cannot set the workload version of "web/0": permission denied for unit-db-0', unit('db/0'))
  model.ok('set-workload-version', { unit: 'web/0', version: '' }, unit('web/0'))
  assert.is(model.app('web')!.workloadVersion, '')
})

version.run()

// ---------------------------------------------------------------------------------

const plumbing = suite('model: hook changes in the store, RaftSnapshots and readers')

plumbing('the hook-change command types are in modelCommandTypes and apply through the store', () => {
  for (const type of ['commit-hook-changes', 'set-workload-version', 'set-application-status'] as const) assert.ok(modelCommandTypes.includes(type), type)
  const model = world()
  const store = createModelStore(model.context)
  const applied = applyToStore(store, { type: 'commit-hook-changes', requestId: 'c', proposer: unit('web/0'), unit: 'web/0', openPorts: [tcp(80)] }, model.index + 1, 1)
  assert.equal(applied?.result.ok, true)
  assert.equal(applied?.deltas.map(d => d.key), ['unit/web/0/ports'])
  const versioned = applyToStore(store, { type: 'set-workload-version', requestId: 'v', proposer: unit('web/0'), unit: 'web/0', version: '1.0' }, model.index + 2, 1)
  assert.equal(versioned?.result.ok, true)
  assert.is(tableGet(store.getSnapshot().context.applications, 'web')!.workloadVersion, '1.0')
  assert.is(describeCommand({ type: 'commit-hook-changes', requestId: 'c', proposer: admin, unit: 'web/0' }), 'commit hook changes of "web/0"')
})

plumbing('snapshotModel / restoreModel keep ports, state and the workload version; older records get the new fields', () => {
  const model = world()
  model.commit('web/0', { openPorts: [{ protocol: 'icmp' }, tcp(80, 90, ['db'])], charmState: { set: { a: '1', 'b.c': 'é' } } })
  model.ok('set-workload-version', { unit: 'web/0', version: '9.9' }, unit('web/0'))
  const restored = restoreModel(decode(encode(snapshotModel(model.context), 'test'), 'test'))
  assert.equal(restored, model.context)
  assert.is(tableGet(restored.units, 'web/0')!.openedPorts[0]!.from, undefined)

  // A context written before these fields existed.
  const { openedPorts: _p, charmState: _s, ...oldUnit } = tableGet(model.context.units, 'web/1')!
  const { workloadVersion: _v, ...oldApp } = tableGet(model.context.applications, 'db')!
  const old = {
    ...model.context,
    units: tableWith(model.context.units, 'web/1', oldUnit as UnitRecord),
    applications: tableWith(model.context.applications, 'db', oldApp as ApplicationRecord)
  }
  const upgraded = restoreModel(decode(encode(snapshotModel(old), 'test'), 'test'))
  assert.equal(tableGet(upgraded.units, 'web/1')!.openedPorts, [])
  assert.equal(tableGet(upgraded.units, 'web/1')!.charmState, {})
  assert.is(tableGet(upgraded.applications, 'db')!.workloadVersion, '')
  assert.equal(upgraded, model.context, 'the same as if they had been there all along')
  // And the upgraded model takes commits.
  const outcome = applyCommand(upgraded, { type: 'commit-hook-changes', requestId: 'u', proposer: unit('web/1'), unit: 'web/1', openPorts: [tcp(80)] }, { index: upgraded.revision + 1 })
  assert.ok(outcome.result.ok)
})

plumbing('unitHookDataFor: what opened-ports and state-get answer from, as copies', () => {
  const model = world()
  model.commit('web/0', { openPorts: [tcp(80, 80, ['website'])], charmState: { set: { a: '1' } } })
  model.ok('set-workload-version', { unit: 'web/1', version: '3' }, unit('web/1'))
  const data = unitHookDataFor(model.context, 'web/0')!
  assert.equal(data, { openedPorts: [{ protocol: 'tcp', from: 80, to: 80, endpoints: ['website'] }], charmState: { a: '1' }, workloadVersion: '3' })
  data.openedPorts[0]!.endpoints.push('db')
  data.charmState.b = '2'
  assert.equal(model.unit('web/0')!.openedPorts[0]!.endpoints, ['website'])
  assert.equal(model.unit('web/0')!.charmState, { a: '1' })
  assert.is(unitHookDataFor(model.context, 'web/7'), undefined)
})

plumbing('every refusal seen in these tests is one line naming the controller', () => {
  assert.ok(refusals.length > 40, `only ${refusals.length} refusals`)
  for (const error of refusals) {
    assert.ok(error.startsWith('controller: cannot '), error)
    assert.not.ok(error.includes('\n'), error)
  }
})

plumbing.run()
