import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { UnitName } from '../runtime/ids.ts'
import { limits } from '../runtime/limits.ts'
import { listItems } from '../runtime/model/chunked-list.ts'
import { parseKey } from '../runtime/model/keys.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import type { CommandOf, CommandResult, Delta, Entity, ModelCommand, ModelCommandType, ModelContext } from '../runtime/model/model-types.ts'
import { tableGet, tableKeys, tableValues } from '../runtime/model/table.ts'
import { changesSince, mayRead } from '../runtime/model/watch.ts'
import { SeededRandom } from '../runtime/random.ts'

const admin: Entity = { kind: 'user', name: 'admin' }
const unit = (name: UnitName): Entity => ({ kind: 'unit', name })
const machine = (id: string): Entity => ({ kind: 'machine', id })

class Model {
  context: ModelContext = emptyModel()
  index = 0
  requests = 0
  deltas: Delta[] = []

  run<T extends ModelCommandType> (type: T, fields: Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>, proposer: Entity = admin): CommandResult {
    const command = { type, requestId: `req-${this.requests++}`, proposer, ...fields } as unknown as ModelCommand
    const outcome = applyCommand(this.context, command, { index: ++this.index })
    this.context = outcome.context
    this.deltas.push(...outcome.deltas)
    return outcome.result
  }

  ok<T extends ModelCommandType> (type: T, fields: Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>, proposer: Entity = admin): CommandResult {
    const result = this.run(type, fields, proposer)
    assert.ok(result.ok, result.ok ? '' : result.error)
    return result
  }

  /** Keys `entity` is told about since `revision` (removed ones prefixed with `-`). */
  seen (entity: Entity, revision = 0): string[] {
    return changesSince(this.context, revision, entity).changes.map(c => c.removed === true ? `-${c.key}` : c.key).sort()
  }
}

/**
 * web (peer cluster) on machines 0 and 1 with a logging subordinate beside each unit,
 * db on machine 2; web–db related; everyone in scope; settings written.
 */
function world (): Model {
  const model = new Model()
  model.ok('add-charm', { url: 'local:web-0', hash: 'a'.repeat(16), metadata: { name: 'web', requires: { db: 'mysql' }, peers: { cluster: 'web-cluster' }, config: { port: { type: 'int', default: 80 } } } })
  model.ok('add-charm', { url: 'local:mysql-0', hash: 'b'.repeat(16), metadata: { name: 'mysql', provides: { server: 'mysql' }, config: { secret: { type: 'string', default: 'hunter2' } } } })
  model.ok('add-charm', { url: 'local:logging-0', hash: 'c'.repeat(16), metadata: { name: 'logging', subordinate: true, requires: { 'juju-info': { interface: 'juju-info', scope: 'container' } } } })
  model.ok('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 2 })
  model.ok('deploy', { application: 'db', charm: 'local:mysql-0', config: {}, constraints: {}, numUnits: 1 })
  model.ok('deploy', { application: 'log', charm: 'local:logging-0', config: {}, constraints: {}, numUnits: 0 })
  model.ok('integrate', { a: 'web', b: 'db' })
  model.ok('integrate', { a: 'web', b: 'log' })
  for (const [name, relations] of [['web/0', [0, 1, 2]], ['web/1', [0, 1, 2]], ['db/0', [1]], ['log/0', [2]], ['log/1', [2]]] as const) {
    for (const relationId of relations) model.ok('enter-scope', { unit: name, relationId }, unit(name))
  }
  model.ok('claim-leadership', { application: 'db', unit: 'db/0', now: 0, durationMs: 60_000 }, unit('db/0'))
  model.ok('relation-settings', { unit: 'db/0', relationId: 1, application: true, settings: { password: 'p' } }, unit('db/0'))
  model.ok('relation-settings', { unit: 'db/0', relationId: 1, settings: { host: 'h' } }, unit('db/0'))
  model.ok('leader-settings', { application: 'db', unit: 'db/0', settings: { token: 't' } }, unit('db/0'))
  return model
}

const deltas = suite('model: deltas')

deltas('each apply names what changed at its revision', () => {
  const model = world()
  model.deltas = []
  model.ok('set-config', { application: 'web', config: { port: 81 } })
  model.ok('relation-settings', { unit: 'web/0', relationId: 1, settings: { a: '1' } }, unit('web/0'))
  model.ok('remove-unit', { unit: 'web/1' })
  const revision = model.context.revision
  assert.equal(model.deltas, [
    { revision: revision - 2, key: 'application/web' },
    { revision: revision - 1, key: 'relation/1/settings/web/0' },
    { revision, key: 'unit/web/1' },
    { revision, key: 'application/web' },
    { revision, key: 'unit/log/1' },
    { revision, key: 'application/log' }
  ])
  // The per-key index in the context answers the same without the delta log.
  assert.is(tableGet(model.context.keyRevisions, 'application/web'), revision)
  assert.is(tableGet(model.context.keyRevisions, 'relation/1/settings/web/0'), revision - 1)
  for (const key of tableKeys(model.context.keyRevisions)) assert.ok(parseKey(key) !== undefined, `unparsable key ${key}`)
})

deltas.run()

// ---------------------------------------------------------------------------------

const scoping = suite('model: changesSince scoping')

scoping('a machine agent sees its machine, its units, their applications and relations, and the databags its units relate to', () => {
  const model = world()
  const db = model.seen(machine('2'))
  assert.equal(db, [
    'application/db', 'charm/local:mysql-0', 'leader-settings/db', 'leadership/db',
    'machine/2', 'machine/2/status',
    'relation/1', 'relation/1/app-settings/db', 'relation/1/settings/db/0', 'relation/1/settings/web/0', 'relation/1/settings/web/1',
    'unit/db/0', 'unit/db/0/status'
  ])
  const web = model.seen(machine('0'))
  for (const key of ['application/web', 'application/log', 'relation/0', 'relation/0/settings/web/1', 'relation/2', 'relation/2/settings/log/0', 'relation/2/settings/web/0', 'relation/1/settings/db/0', 'unit/log/0']) {
    assert.ok(web.includes(key), `machine 0 should see ${key}`)
  }
  for (const key of ['application/db', 'leader-settings/db', 'relation/2/settings/log/1', 'relation/2/settings/web/1', 'unit/web/1', 'machine/1', 'charm/local:mysql-0']) {
    assert.not.ok(web.includes(key), `machine 0 must not see ${key}`)
  }
})

scoping('a unit sees itself, never another application\'s config, and only the databags of the units it relates to', () => {
  const model = world()
  const web0 = model.seen(unit('web/0'))
  assert.ok(web0.includes('relation/1/settings/db/0'))
  assert.ok(web0.includes('relation/1/settings/web/0'), 'its own bag')
  assert.not.ok(web0.includes('relation/1/settings/web/1'), 'not a same-side unit in a regular relation')
  assert.ok(web0.includes('relation/0/settings/web/1'), 'but peers, yes')
  assert.not.ok(web0.includes('application/db'))
  assert.not.ok(web0.includes('application/log'))
  assert.not.ok(web0.includes('unit/log/0'))
  const log1 = model.seen(unit('log/1'))
  assert.equal(log1.filter(key => key.startsWith('relation/')), ['relation/2', 'relation/2/settings/log/1', 'relation/2/settings/web/1'])
  assert.ok(log1.includes('machine/1'), 'its machine (addresses)')
  assert.equal(model.seen(unit('nobody/0')), [])
})

scoping('changes since a revision; removals reach whoever could see the key, and nobody else', () => {
  const model = world()
  const since = model.context.revision
  model.ok('set-config', { application: 'db', config: { secret: 'x' } })
  assert.equal(model.seen(machine('0'), since), [], 'db config is not web\'s business')
  assert.equal(model.seen(machine('2'), since), ['application/db'])

  const mark = model.context.revision
  model.ok('remove-unit', { unit: 'web/1' })
  for (const name of ['log/1', 'web/1']) {
    for (const relationId of name === 'log/1' ? [2] : [0, 1, 2]) model.ok('leave-scope', { unit: name, relationId }, unit(name))
    model.ok('unit-dead', { unit: name }, unit(name))
  }
  const m1 = model.seen(machine('1'), mark)
  assert.ok(m1.includes('-unit/web/1') && m1.includes('-unit/log/1') && m1.includes('machine/1'), m1.join(' '))
  // The departed units' bags stay for the life of their relations (juju-semantics §2.4), readable by whoever could read them.
  const m2 = model.seen(machine('2'), mark)
  assert.not.ok(m2.includes('-relation/1/settings/web/1'), 'web/1 departed; its bag stays')
  assert.ok(mayRead(model.context, machine('2'), 'relation/1/settings/web/1'), 'db still reads web/1\'s last settings')
  assert.not.ok(m2.some(key => key.includes('log/1') || key === '-unit/web/1'), m2.join(' '))
  const m0 = model.seen(machine('0'), mark)
  assert.not.ok(m0.some(key => key.startsWith('-relation/')), m0.join(' '))
  assert.not.ok(mayRead(model.context, machine('0'), 'relation/2/settings/log/1'), 'container-scoped: not on this machine')
  assert.ok(mayRead(model.context, machine('0'), 'relation/0/settings/web/1'), 'a peer')
  assert.not.ok(model.seen(admin, mark).includes('-relation/2/settings/log/1'))

  const removal = model.context.revision
  model.ok('remove-relation', { relationId: 1 })
  model.ok('leave-scope', { unit: 'web/0', relationId: 1 }, unit('web/0'))
  model.ok('leave-scope', { unit: 'db/0', relationId: 1 }, unit('db/0'))
  assert.equal(model.seen(machine('2'), removal), ['-relation/1', '-relation/1/app-settings/db', '-relation/1/settings/db/0', '-relation/1/settings/web/0', '-relation/1/settings/web/1'],
    'the departed web/1\'s bag goes with the relation')
  assert.ok(model.seen(unit('web/0'), removal).includes('-relation/1'))
  assert.not.ok(model.seen(unit('log/0'), removal).includes('-relation/1'))
})

scoping('changesSince agrees with mayRead for every entity and key, over random histories', () => {
  for (const seed of [1, 2, 3, 4]) {
    const model = randomWorld(seed)
    const units = tableValues(model.context.units).map(u => u.name)
    const machines = tableValues(model.context.machines).map(m => m.id)
    const entities: Entity[] = [...units.map(unit), ...machines.map(machine), unit('ghost/0'), machine('99')]
    const allKeys = tableKeys(model.context.keyRevisions)
    const finishedActions = new Set([...listItems(model.context.finishedActions)].map(id => `action/${id}`))
    for (const entity of entities) {
      const seen = new Set(changesSince(model.context, 0, entity).changes.filter(c => c.removed !== true).map(c => c.key))
      for (const key of allKeys) {
        if (finishedActions.has(key)) continue
        assert.is(seen.has(key), mayRead(model.context, entity, key), `seed ${seed}: ${JSON.stringify(entity)} and ${key}`)
      }
      for (const key of seen) assert.ok(mayRead(model.context, entity, key), `${key} reported but not readable`)
    }
  }
})

scoping('the tombstone list is bounded: a watcher older than the floor is told to resync', () => {
  const model = new Model()
  model.ok('add-charm', { url: 'local:db-0', hash: 'a'.repeat(16), metadata: { name: 'db' } })
  const rounds = Math.ceil(limits.modelTombstonesMax / 2 / limits.modelUnitsPerCommandMax) + 1
  model.ok('deploy', { application: 'db', charm: 'local:db-0', config: {}, constraints: {}, numUnits: 0 })
  for (let i = 0; i < rounds; i++) model.ok('add-unit', { application: 'db', numUnits: limits.modelUnitsPerCommandMax, placement: [] })
  const early = model.context.revision
  model.ok('remove-application', { application: 'db' })
  for (const name of tableValues(model.context.units).map(u => u.name)) model.ok('unit-dead', { unit: name }, unit(name))
  const changes = changesSince(model.context, early, admin)
  assert.not.ok(changes.complete, 'some removals were forgotten')
  assert.ok(model.context.tombstoneFloor > early)
  assert.ok(changesSince(model.context, model.context.tombstoneFloor, admin).complete)
  let remembered = 0
  for (const _ of listItems(model.context.tombstones)) remembered++
  assert.ok(remembered <= limits.modelTombstonesMax && remembered > limits.modelTombstonesMax - 256, `remembers ${remembered}`)
  assert.ok(changesSince(model.context, model.context.revision - 1, admin).changes.every(c => c.revision === model.context.revision))
})

scoping.run()

/** A model shaped by random commands, for cross-checks. */
function randomWorld (seed: number): Model {
  const model = world()
  const random = new SeededRandom(seed)
  const apps = ['web', 'db', 'log']
  for (let i = 0; i < 300; i++) {
    const app = apps[random.int(0, 2)]!
    const members = tableValues(model.context.units).map(u => u.name)
    const name = members[random.int(0, Math.max(0, members.length - 1))] ?? 'web/0'
    switch (random.int(0, 7)) {
      case 0: model.run('add-unit', { application: app, numUnits: 1 }); break
      case 1: model.run('remove-unit', { unit: name }); break
      case 2: model.run('enter-scope', { unit: name, relationId: random.int(0, 3) }, unit(name)); break
      case 3: model.run('leave-scope', { unit: name, relationId: random.int(0, 3) }, unit(name)); break
      case 4: model.run('relation-settings', { unit: name, relationId: random.int(0, 3), settings: { k: String(i) } }, unit(name)); break
      case 5: model.run('unit-dead', { unit: name }, unit(name)); break
      case 6: model.run('set-unit-status', { unit: name, status: 'active', message: '', now: i }, unit(name)); break
      default: model.run('integrate', { a: app, b: apps[random.int(0, 2)]! }); break
    }
  }
  return model
}
