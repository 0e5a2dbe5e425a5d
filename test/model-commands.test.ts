import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { decode, encode } from '../runtime/codec.ts'
import { naturalCompare, type UnitName } from '../runtime/ids.ts'
import { limits } from '../runtime/limits.ts'
import { listItems, listLength } from '../runtime/model/chunked-list.ts'
import { applyCommand, applyToStore, commandEvent, createModelStore, emptyModel, modelStoreLogic } from '../runtime/model/model-store.ts'
import { restoreModel, snapshotModel } from '../runtime/model/model-snapshot.ts'
import type {
  ApplyOutcome, CharmSummaryInput, CommandOf, CommandResult, Entity, ModelCommand, ModelCommandType, ModelContext, RelationRecord
} from '../runtime/model/model-types.ts'
import { TableDraft, emptyTable, tableEntries, tableFrom, tableGet, tableKeys, tableValues, type Table } from '../runtime/model/table.ts'
import { SeededRandom, hashString32 } from '../runtime/random.ts'
import { createActor } from 'xstate'

const admin: Entity = { kind: 'user', name: 'admin' }
const controller: Entity = { kind: 'controller', id: '0' }
const unit = (name: UnitName): Entity => ({ kind: 'unit', name })
const machine = (id: string): Entity => ({ kind: 'machine', id })

/** Every refusal any test saw: each must be one line naming the controller. */
const refusals: string[] = []

class Model {
  context: ModelContext = emptyModel()
  index = 0
  requests = 0
  last: ApplyOutcome | undefined

  run<T extends ModelCommandType> (type: T, fields: Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>, proposer: Entity = admin, requestId = `req-${this.requests++}`): CommandResult {
    const command = { type, requestId, proposer, ...fields } as unknown as ModelCommand
    this.last = applyCommand(this.context, command, { index: ++this.index, term: 1 })
    this.context = this.last.context
    if (!this.last.result.ok) refusals.push(this.last.result.error)
    return this.last.result
  }

  ok<T extends ModelCommandType> (type: T, fields: Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>, proposer: Entity = admin): CommandResult & { ok: true } {
    const result = this.run(type, fields, proposer)
    if (!result.ok) assert.unreachable(result.error)
    return result as CommandResult & { ok: true }
  }

  /** Refused with exactly `error` (or matching it), and nothing changed but the revision. */
  refused<T extends ModelCommandType> (type: T, fields: Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>, error: string | RegExp, proposer: Entity = admin): void {
    const before = this.context
    const result = this.run(type, fields, proposer)
    if (result.ok) return assert.unreachable(`${type} was applied; expected ${String(error)}`)
    if (typeof error === 'string') assert.is(result.error, error)
    else assert.match(result.error, error)
    assert.equal(this.last!.deltas, [])
    assert.equal(withoutBookkeeping(this.context), withoutBookkeeping({ ...before, revision: this.index, term: 1 }), 'a refusal changes nothing')
  }

  app (name: string) { return tableGet(this.context.applications, name) }
  unit (name: string) { return tableGet(this.context.units, name) }
  machine (id: string) { return tableGet(this.context.machines, id) }
  relation (id: number) { return tableGet(this.context.relations, String(id)) }
  settings (key: string) { return tableGet(this.context.settings, key) }
  deltaKeys (): string[] { return this.last!.deltas.map(d => d.removed === true ? `-${d.key}` : d.key).sort() }
}

function withoutBookkeeping (context: ModelContext): unknown {
  return { ...context, requests: undefined }
}

const charms: Record<string, CharmSummaryInput> = {
  web: {
    name: 'web',
    requires: { db: 'mysql', cache: 'redis' },
    provides: { website: 'http' },
    peers: { cluster: 'web-cluster' },
    config: { port: { type: 'int', default: 80 }, title: { type: 'string' }, ratio: { type: 'float', default: 0.5 }, debug: { type: 'boolean', default: false } },
    storage: { data: { type: 'filesystem' } },
    actions: { backup: { description: 'take a backup' } }
  },
  mysql: { name: 'mysql', provides: { server: 'mysql', replica: 'mysql' } },
  redis: { name: 'redis', provides: { cache: 'redis' } },
  logging: { name: 'logging', subordinate: true, requires: { 'juju-info': { interface: 'juju-info', scope: 'container' } } }
}

/** Charms added; web (2 units), db (1 unit) deployed. */
function standard (): Model {
  const model = new Model()
  let n = 0
  for (const [name, metadata] of Object.entries(charms)) {
    model.ok('add-charm', { url: `local:${name}-0`, hash: `${String(n++).repeat(16)}`, metadata })
  }
  model.ok('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: { mem: '4G' }, numUnits: 2 })
  model.ok('deploy', { application: 'db', charm: 'local:mysql-0', config: {}, constraints: {}, numUnits: 1 })
  return model
}

// ---------------------------------------------------------------------------------

const charm = suite('model: add-charm')

charm('stores the canonical summary; same content again is a no-op; other content under the URL is refused', () => {
  const model = new Model()
  model.ok('add-charm', { url: 'local:web-0', hash: 'ab'.repeat(8), metadata: charms.web! })
  assert.equal(model.deltaKeys(), ['charm/local:web-0'])
  const stored = tableGet(model.context.charms, 'local:web-0')!
  assert.equal(stored.metadata.requires.db, { interface: 'mysql', scope: 'global' })
  assert.equal(stored.metadata.config.title, { type: 'string', default: null })
  assert.equal(stored.metadata.storage.data, { type: 'filesystem', location: null, countMin: 1, countMax: 1, minimumSizeMiB: 0 })
  model.ok('add-charm', { url: 'local:web-0', hash: 'ab'.repeat(8), metadata: charms.web! })
  assert.equal(model.deltaKeys(), [])
  model.refused('add-charm', { url: 'local:web-0', hash: 'cd'.repeat(8), metadata: charms.web! },
    'controller: cannot add charm "local:web-0": the URL is already used by charm content "abababababababab"')
})

charm('refuses bad URLs, hashes and metadata, and non-admins', () => {
  const model = new Model()
  model.refused('add-charm', { url: 'web', hash: 'ab'.repeat(8), metadata: charms.web! }, /"web" is not a charm URL/)
  model.refused('add-charm', { url: 'local:web-0', hash: 'XYZ', metadata: charms.web! }, /hash must be a lower-case hex digest/)
  model.refused('add-charm', { url: 'local:sub-0', hash: 'ab'.repeat(8), metadata: { name: 'sub', subordinate: true } },
    'controller: cannot add charm "local:sub-0": a subordinate charm needs a container-scoped requires endpoint')
  model.refused('add-charm', { url: 'local:x-0', hash: 'ab'.repeat(8), metadata: { name: 'x', provides: { db: 'a' }, requires: { db: 'b' } } }, /endpoint "db" is declared twice/)
  model.refused('add-charm', { url: 'local:x-0', hash: 'ab'.repeat(8), metadata: { name: 'x', provides: { 'juju-thing': 'a' } } }, /endpoint name "juju-thing" is reserved/)
  model.refused('add-charm', { url: 'local:x-0', hash: 'ab'.repeat(8), metadata: { name: 'x', config: { port: { type: 'int', default: 'eighty' } } } }, /has a default that is not int/)
  model.refused('add-charm', { url: 'local:x-0', hash: 'ab'.repeat(8), metadata: { name: 'x' } }, 'controller: cannot add charm "local:x-0": permission denied for unit-web-0', unit('web/0'))
})

charm.run()

// ---------------------------------------------------------------------------------

const deploy = suite('model: deploy, add-unit, scale')

deploy('deploy creates the application, its peer relations, units on new machines, storage and status', () => {
  const model = standard()
  const web = model.app('web')!
  assert.is(web.scale, 2)
  assert.equal(web.units, ['web/0', 'web/1'])
  assert.equal(web.relations, [0], 'the peer relation got the first id')
  assert.equal(model.relation(0)!.endpoints, [{ application: 'web', name: 'cluster', interface: 'web-cluster', role: 'peer', scope: 'global', implicit: false }])
  assert.equal(model.unit('web/1')!.machine, '1')
  assert.equal(model.machine('1')!.constraints, { mem: '4G' })
  assert.equal(model.unit('web/1')!.storage['data/1']!.location, '/var/lib/juju/storage/data/1')
  assert.equal(model.unit('web/0')!.agent.status, 'allocating')
  assert.equal(model.unit('web/0')!.workload, { status: 'waiting', message: 'waiting for machine', since: null, data: null })
  assert.is(model.app('web')!.leaderSettingsVersion, 1)
  const result = model.ok('deploy', { application: 'cache', charm: 'local:redis-0', config: {}, constraints: {}, numUnits: 2, placement: ['0'] })
  assert.equal([result.units, result.machines], [['cache/0', 'cache/1'], ['3']])
  assert.equal(model.machine('0')!.units, ['web/0', 'cache/0'])
})

deploy('deploy refusals name the application and the reason', () => {
  const model = standard()
  model.refused('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 1 }, 'controller: cannot deploy "web": application already exists')
  model.refused('deploy', { application: 'api', charm: 'local:nope-0', config: {}, constraints: {}, numUnits: 1 }, 'controller: cannot deploy "api": charm "local:nope-0" not found; add it first')
  model.refused('deploy', { application: 'Bad_Name', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 1 }, 'controller: cannot deploy "Bad_Name": "Bad_Name" is not a valid application name')
  model.refused('deploy', { application: 'log', charm: 'local:logging-0', config: {}, constraints: {}, numUnits: 1 }, /a subordinate application is deployed without units/)
  model.refused('deploy', { application: 'api', charm: 'local:web-0', config: { port: 'x' }, constraints: {}, numUnits: 1 }, 'controller: cannot deploy "api": option "port" expects an int, got "x"')
  model.refused('deploy', { application: 'api', charm: 'local:web-0', config: { colour: 'red' }, constraints: {}, numUnits: 1 }, /charm "local:web-0" has no config option "colour"/)
  model.refused('deploy', { application: 'api', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 1, placement: ['9'] }, /machine "9" not found/)
  model.refused('deploy', { application: 'api', charm: 'local:web-0', config: {}, constraints: {}, numUnits: limits.modelUnitsPerCommandMax + 1 }, `controller: cannot deploy "api": number of units must be 0 to ${limits.modelUnitsPerCommandMax}, got ${limits.modelUnitsPerCommandMax + 1}`)
  model.refused('deploy', { application: 'api', charm: 'local:web-0', config: {}, constraints: { 'Mem!': '1' }, numUnits: 1 }, /constraint "Mem!" is not a constraint name/)
})

deploy('add-unit: the limit per command is reachable; subordinates follow new principals; refusals', () => {
  const model = standard()
  const many = model.ok('add-unit', { application: 'db', numUnits: limits.modelUnitsPerCommandMax })
  assert.is(many.units!.length, limits.modelUnitsPerCommandMax)
  model.ok('deploy', { application: 'log', charm: 'local:logging-0', config: {}, constraints: {}, numUnits: 0 })
  model.ok('integrate', { a: 'web', b: 'log' })
  const added = model.ok('add-unit', { application: 'web', numUnits: 1 })
  assert.equal(added.units, ['web/2', 'log/2'])
  assert.equal(model.unit('log/2')!.machine, model.unit('web/2')!.machine)
  assert.equal(model.unit('web/2')!.subordinates, ['log/2'])
  model.refused('add-unit', { application: 'log', numUnits: 1 }, 'controller: cannot add unit to "log": a subordinate application gets units by integrating with a principal')
  model.refused('add-unit', { application: 'nope', numUnits: 1 }, 'controller: cannot add unit to "nope": application "nope" not found')
  model.refused('add-unit', { application: 'web', numUnits: 0 }, /number of units must be 1 to/)
})

deploy.run()

// ---------------------------------------------------------------------------------

const provisioning = suite('model: machine placement, provisioning records, agent registration')

provisioning('a unit without placement takes the oldest clean, empty machine; one that hosted a unit or has its own placement is not clean', () => {
  const model = standard()
  // web/0, web/1 and db/0 made machines 0, 1 and 2.
  const [m3] = model.ok('add-machine', {}).machines!
  const [m4] = model.ok('add-machine', { placement: 'ssh:ubuntu@10.0.0.9' }).machines!
  model.ok('remove-unit', { unit: 'db/0' })
  const added = model.ok('add-unit', { application: 'web', numUnits: 2 })
  assert.equal(added.units, ['web/2', 'web/3'])
  assert.is(tableGet(model.context.units, 'web/2')!.machine, m3, 'the clean machine first')
  const web3 = tableGet(model.context.units, 'web/3')!.machine
  assert.ok(![m3, m4, '2'].includes(web3), 'then a new machine, not the ssh-placed one nor one that hosted db/0')
  assert.is(tableGet(model.context.machines, m4!)!.placement, 'ssh:ubuntu@10.0.0.9')
  model.refused('add-machine', { placement: 'ssh:; rm -rf /' }, /^controller: cannot add a machine: placement "ssh:; rm -rf \/" is not ssh:user@host\[:port\]$/)
})

provisioning('add-machine --private-key: an absolute key path kept with an ssh-placed machine, refused otherwise', () => {
  const model = standard()
  const [m] = model.ok('add-machine', { placement: 'ssh:root@10.0.0.9:2222', privateKey: '/home/me/.ssh/id_cantrip' }).machines!
  assert.is(tableGet(model.context.machines, m!)!.privateKey, '/home/me/.ssh/id_cantrip')
  assert.is(tableGet(model.context.machines, '0')!.privateKey, undefined, 'no key field on other machines')
  model.refused('add-machine', { privateKey: '/k' }, /^controller: cannot add a machine: a private key needs an ssh: placement$/)
  model.refused('add-machine', { placement: 'ssh:root@h', privateKey: 'id_rsa' }, /^controller: cannot add a machine: private key "id_rsa" is not an absolute file path$/)
})

provisioning('add-machine --listen/--advertise: kept with the machine for the provider, malformed ones refused in one line', () => {
  const model = standard()
  const [m] = model.ok('add-machine', { placement: 'ssh:root@10.0.0.9', listen: '0.0.0.0:17080', advertise: '203.0.113.7' }).machines!
  const record = tableGet(model.context.machines, m!)!
  assert.equal([record.listen, record.advertise], ['0.0.0.0:17080', '203.0.113.7'])
  const [local] = model.ok('add-machine', { listen: 'fd00::5' }).machines!
  assert.is(tableGet(model.context.machines, local!)!.listen, 'fd00::5')
  assert.is(tableGet(model.context.machines, '0')!.listen, undefined, 'no network fields on other machines')
  model.refused('add-machine', { listen: '10.0.0.9:99999' }, /^controller: cannot add a machine: listen "10\.0\.0\.9:99999" is not HOST, HOST:PORT or \[V6\]:PORT with a port from 1 to 65535$/)
  model.refused('add-machine', { advertise: '0.0.0.0' }, /^controller: cannot add a machine: advertise "0\.0\.0\.0" is not an IPv4 or IPv6 address or a host name others can dial$/)
  model.refused('add-machine', { advertise: 'a b' }, /advertise "a b" is not/)
})

provisioning('the first provisioning record stands; only controllers may write it', () => {
  const model = standard()
  const token = 'ab'.repeat(8)
  const secret = 'cd'.repeat(16)
  model.refused('set-machine-provisioning', { machine: '0', token, secret }, /permission denied/, admin)
  model.ok('set-machine-provisioning', { machine: '0', token, secret }, controller)
  model.ok('set-machine-provisioning', { machine: '0', token: 'ef'.repeat(8), secret: '01'.repeat(16) }, controller)
  assert.equal(tableGet(model.context.machines, '0')!.provisioning, { token, secret })
  model.refused('set-machine-provisioning', { machine: '0', token: 'not hex', secret }, /token and secret must be hex/, controller)
})

provisioning('an agent registers once with the one-time secret; the secret is then useless, and the same peer may register again', () => {
  const model = standard()
  const secret = 'cd'.repeat(16)
  model.ok('set-machine-provisioning', { machine: '1', token: 'ab'.repeat(8), secret }, controller)
  model.refused('register-machine-agent', { machine: '1', peer: 'peer-a', secret: 'ff'.repeat(16) }, /the registration secret is wrong or used/, controller)
  model.refused('register-machine-agent', { machine: '1', peer: 'peer-a', secret }, /permission denied/, machine('1'))
  model.ok('register-machine-agent', { machine: '1', peer: 'peer-a', secret }, controller)
  const registered = tableGet(model.context.machines, '1')!
  assert.is(registered.agentPeer, 'peer-a')
  assert.equal(registered.provisioning, { token: 'ab'.repeat(8), secret: '' })
  model.ok('register-machine-agent', { machine: '1', peer: 'peer-a', secret }, controller)
  model.refused('register-machine-agent', { machine: '1', peer: 'peer-b', secret }, /an agent has registered for it already/, controller)
  model.refused('register-machine-agent', { machine: '2', peer: 'peer-b', secret }, /the registration secret is wrong or used/, controller)
})

provisioning('a start attempt after a failed one renews the secret: the released agent\'s binding goes, the new agent registers', () => {
  const model = standard()
  const token = 'ab'.repeat(8)
  const first = 'cd'.repeat(16)
  const second = 'ef'.repeat(16)
  model.ok('set-machine-provisioning', { machine: '1', token, secret: first }, controller)
  model.ok('register-machine-agent', { machine: '1', peer: 'peer-released', secret: first }, controller)
  model.refused('set-machine-provisioning', { machine: '1', token: '12'.repeat(8), secret: second, renew: true }, /only the recorded provisioning token can be renewed/, controller)
  model.refused('set-machine-provisioning', { machine: '1', token, secret: second, renew: true }, /permission denied/, admin)
  model.ok('set-machine-provisioning', { machine: '1', token, secret: second, renew: true }, controller)
  assert.equal(tableGet(model.context.machines, '1')!.provisioning, { token, secret: second })
  assert.is(tableGet(model.context.machines, '1')!.agentPeer, null)
  model.refused('register-machine-agent', { machine: '1', peer: 'peer-new', secret: first }, /the registration secret is wrong or used/, controller)
  model.ok('register-machine-agent', { machine: '1', peer: 'peer-new', secret: second }, controller)
  assert.is(tableGet(model.context.machines, '1')!.agentPeer, 'peer-new')
  // Once an instance is recorded, its agent's binding stands.
  model.ok('set-machine-instance', { machine: '1', instanceId: 'local:machine-1', addresses: [] }, machine('1'))
  model.refused('set-machine-provisioning', { machine: '1', token, secret: first, renew: true }, /machine is provisioned as "local:machine-1" already/, controller)
})

provisioning.run()

const relations = suite('model: relations and scope')

relations('integrate infers endpoints, allocates ids in order, refuses ambiguity, mismatch and duplicates', () => {
  const model = standard()
  model.ok('deploy', { application: 'cache', charm: 'local:redis-0', config: {}, constraints: {}, numUnits: 1 })
  model.refused('integrate', { a: 'web', b: 'db' }, 'controller: cannot integrate "web" with "db": ambiguous: name the endpoints, one of web:db db:replica, web:db db:server')
  const result = model.ok('integrate', { a: 'db:server', b: 'web' })
  assert.is(result.relationId, 1)
  assert.is(model.relation(1)!.key, 'web:db db:server', 'the requirer first, as Juju keys relations')
  assert.equal(model.app('web')!.relations, [0, 1])
  assert.is(model.ok('integrate', { a: 'web', b: 'cache' }).relationId, 2)
  model.refused('integrate', { a: 'web:db', b: 'db:server' }, 'controller: cannot integrate "web:db" with "db:server": relation "web:db db:server" already exists')
  model.refused('integrate', { a: 'web:website', b: 'db' }, /no matching endpoints/)
  model.refused('integrate', { a: 'web:nope', b: 'db' }, 'controller: cannot integrate "web:nope" with "db": application "web" has no endpoint "nope"')
  model.refused('integrate', { a: 'web', b: 'web' }, /cannot be integrated with itself/)

  // The most relations one application may take part in.
  const peers: Record<string, string> = {}
  for (let i = 0; i < limits.relationsPerUnitMax; i++) peers[`p${i}`] = 'ring'
  model.ok('add-charm', { url: 'local:ring-0', hash: 'e'.repeat(16), metadata: { name: 'ring', requires: { cache: 'redis' }, peers } })
  model.ok('deploy', { application: 'ring', charm: 'local:ring-0', config: {}, constraints: {}, numUnits: 0 })
  model.refused('integrate', { a: 'ring', b: 'cache' }, `controller: cannot integrate "ring" with "cache": application "ring" already has ${limits.relationsPerUnitMax} relations`)
  peers.extra = 'ring'
  model.ok('add-charm', { url: 'local:ring-1', hash: 'e'.repeat(16), metadata: { name: 'ring', peers } })
  model.refused('deploy', { application: 'ring2', charm: 'local:ring-1', config: {}, constraints: {}, numUnits: 0 }, `controller: cannot deploy "ring2": charm "local:ring-1" has more than ${limits.relationsPerUnitMax} peer endpoints`)
})

relations('a container-scoped relation creates a subordinate beside each alive principal; the implicit juju-info provider', () => {
  const model = standard()
  model.ok('deploy', { application: 'log', charm: 'local:logging-0', config: {}, constraints: {}, numUnits: 0 })
  model.ok('remove-unit', { unit: 'web/1' })
  const result = model.ok('integrate', { a: 'log', b: 'web' })
  assert.equal(result.units, ['log/0'], 'web/1 is dying: no subordinate for it')
  const relation = model.relation(result.relationId!)!
  assert.ok(relation.containerScoped)
  assert.equal(relation.endpoints.map(ep => [ep.application, ep.name, ep.implicit]), [['log', 'juju-info', false], ['web', 'juju-info', true]])
  assert.equal(model.unit('log/0')!.principal, 'web/0')
  assert.equal(model.machine('0')!.units, ['web/0', 'log/0'])
  assert.ok(model.deltaKeys().includes('unit/web/0'), 'the principal learns of its subordinate')
})

relations('enter-scope writes the address keys at version 1; leave-scope; removal waits for the last member', () => {
  const model = standard()
  model.ok('set-machine-instance', { machine: '2', instanceId: 'i-2', addresses: ['10.0.0.2'] }, controller)
  const id = model.ok('integrate', { a: 'web:db', b: 'db:server' }).relationId!
  model.ok('enter-scope', { unit: 'db/0', relationId: id }, machine('2'))
  assert.equal(model.deltaKeys(), ['relation/1', 'relation/1/settings/db/0'])
  assert.equal(model.settings('relation/1/settings/db/0'), { version: 1, values: { 'egress-subnets': '10.0.0.2/32', 'ingress-address': '10.0.0.2', 'private-address': '10.0.0.2' } })
  model.ok('enter-scope', { unit: 'db/0', relationId: id }, unit('db/0'))
  assert.equal(model.deltaKeys(), [], 'entering again is a no-op')
  model.ok('enter-scope', { unit: 'web/0', relationId: id }, unit('web/0'))
  assert.is(model.relation(id)!.inScope, 2)

  model.refused('enter-scope', { unit: 'web/1', relationId: id }, 'controller: cannot enter scope of relation 1 for "web/1": permission denied for unit-web-0', unit('web/0'))
  model.refused('enter-scope', { unit: 'web/1', relationId: id }, /permission denied for machine-0/, machine('0'))
  model.refused('enter-scope', { unit: 'db/0', relationId: 0 }, 'controller: cannot enter scope of relation 0 for "db/0": unit "db/0" is not part of relation 0', unit('db/0'))
  model.refused('enter-scope', { unit: 'db/0', relationId: 7 }, 'controller: cannot enter scope of relation 7 for "db/0": relation 7 not found', unit('db/0'))

  model.ok('remove-relation', { relationId: id })
  assert.is(model.relation(id)!.life, 'dying')
  model.refused('enter-scope', { unit: 'web/1', relationId: id }, 'controller: cannot enter scope of relation 1 for "web/1": relation 1 is dying', unit('web/1'))
  model.ok('leave-scope', { unit: 'web/0', relationId: id }, unit('web/0'))
  assert.ok(model.relation(id) !== undefined)
  model.ok('leave-scope', { unit: 'web/0', relationId: id }, unit('web/0'))
  assert.equal(model.deltaKeys(), [], 'leaving twice is a no-op')
  model.ok('leave-scope', { unit: 'db/0', relationId: id }, unit('db/0'))
  assert.is(model.relation(id), undefined)
  assert.equal(model.deltaKeys(), ['-relation/1', '-relation/1/settings/db/0', '-relation/1/settings/web/0'], 'changed and then removed: reported once, as removed')
  assert.equal(model.app('web')!.relations, [0])
  model.ok('leave-scope', { unit: 'db/0', relationId: id }, unit('db/0'))
  model.refused('remove-relation', { relationId: 0 }, 'controller: cannot remove relation 0: a peer relation is removed with its application')
})

relations('relation-settings: own bag in scope, versions bump only on change, empty deletes; app bag by the leader', () => {
  const model = standard()
  const id = model.ok('integrate', { a: 'web:db', b: 'db:server' }).relationId!
  model.refused('relation-settings', { unit: 'db/0', relationId: id, settings: { a: '1' } }, 'controller: cannot write relation settings of "db/0" on relation 1: unit "db/0" is not in scope of relation 1', unit('db/0'))
  model.ok('enter-scope', { unit: 'db/0', relationId: id }, unit('db/0'))
  model.ok('relation-settings', { unit: 'db/0', relationId: id, settings: { host: 'h', port: '3306' } }, unit('db/0'))
  assert.equal(model.settings('relation/1/settings/db/0'), { version: 2, values: { host: 'h', port: '3306' } })
  model.ok('relation-settings', { unit: 'db/0', relationId: id, settings: { host: 'h' } }, unit('db/0'))
  assert.equal(model.deltaKeys(), [], 'an unchanged flush is not a change')
  model.ok('relation-settings', { unit: 'db/0', relationId: id, settings: { port: '' } }, unit('db/0'))
  assert.equal(model.settings('relation/1/settings/db/0'), { version: 3, values: { host: 'h' } })
  model.refused('relation-settings', { unit: 'db/0', relationId: id, settings: { x: 'y'.repeat(limits.modelSettingsBytesMax) } }, /settings exceed 262144 bytes/, unit('db/0'))
  model.refused('relation-settings', { unit: 'db/0', relationId: id, settings: { n: 1 as unknown as string } }, /settings value of "n" must be a string/, unit('db/0'))

  model.refused('relation-settings', { unit: 'db/0', relationId: id, application: true, settings: { a: '1' } }, 'controller: cannot write application settings on relation 1 for "db/0": unit "db/0" is not the leader of "db"', unit('db/0'))
  model.ok('claim-leadership', { application: 'db', unit: 'db/0', now: 0, durationMs: 60_000 }, unit('db/0'))
  model.ok('relation-settings', { unit: 'db/0', relationId: id, application: true, settings: { a: '1' } }, unit('db/0'))
  assert.equal(model.settings('relation/1/app-settings/db'), { version: 1, values: { a: '1' } })
  model.refused('relation-settings', { unit: 'web/0', relationId: id, settings: { a: '1' } }, /permission denied for unit-db-0/, unit('db/0'))
  model.ok('relation-settings', { unit: 'db/0', relationId: id, settings: JSON.parse('{"__proto__": "x"}') as Record<string, string> }, unit('db/0'))
  assert.is(model.settings('relation/1/settings/db/0')!.values.__proto__, 'x' as unknown)
  assert.is(Object.getPrototypeOf(model.settings('relation/1/settings/db/0')!.values), Object.prototype, 'a __proto__ key is only a key')
})

relations('a departed unit keeps its bag for the life of the relation: after leave-scope and after it leaves the model', () => {
  const model = standard()
  const id = model.ok('integrate', { a: 'web:db', b: 'db:server' }).relationId!
  for (const name of ['web/0', 'web/1', 'db/0']) model.ok('enter-scope', { unit: name, relationId: id }, unit(name))
  model.ok('relation-settings', { unit: 'web/0', relationId: id, settings: { last: 'words' } }, unit('web/0'))
  const bag = model.settings('relation/1/settings/web/0')
  // web/0 leaves scope (remove-unit runs its -departed hooks first), then the model.
  model.ok('remove-unit', { unit: 'web/0' })
  model.ok('leave-scope', { unit: 'web/0', relationId: id }, unit('web/0'))
  assert.equal(model.relation(id)!.departed, ['web/0'])
  assert.equal(tableGet(model.relation(id)!.members, 'web/0')?.inScope, false)
  model.ok('unit-dead', { unit: 'web/0' }, unit('web/0'))
  assert.is(model.unit('web/0'), undefined)
  assert.equal(model.settings('relation/1/settings/web/0'), bag, 'the last settings, unchanged')
  assert.not.ok(model.deltaKeys().includes('-relation/1/settings/web/0'), 'no removal reported for the kept bag')
  // web/1 dies while still in scope (its agent went): it leaves scope and the model at once.
  model.ok('remove-unit', { unit: 'web/1' })
  model.ok('unit-dead', { unit: 'web/1' }, unit('web/1'))
  assert.ok(model.deltaKeys().includes('relation/1'), 'leaving scope changes the relation')
  assert.equal([model.relation(id)!.inScope, model.relation(id)!.departed], [1, ['web/0', 'web/1']])
  assert.ok(model.settings('relation/1/settings/web/1') !== undefined)
  model.refused('relation-settings', { unit: 'web/1', relationId: id, settings: { a: '1' } }, /unit "web\/1" not found/, controller)

  // The relation goes: every bag with it, the departed units' included.
  model.ok('remove-relation', { relationId: id })
  model.ok('leave-scope', { unit: 'db/0', relationId: id }, unit('db/0'))
  assert.is(model.relation(id), undefined)
  assert.equal(model.deltaKeys(), ['-relation/1', '-relation/1/settings/db/0', '-relation/1/settings/web/0', '-relation/1/settings/web/1'])
  assert.equal(tableKeys(model.context.settings).filter(key => key.startsWith('relation/1/')), [])
})

relations('departed bags are bounded per relation, oldest dropped first; re-entering scope is no departure', () => {
  const model = standard()
  const id = model.ok('integrate', { a: 'web:db', b: 'db:server' }).relationId!
  const names = ['web/0', 'web/1', ...model.ok('add-unit', { application: 'web', numUnits: limits.relationDepartedMembersMax }).units!]
  for (const name of names) model.ok('enter-scope', { unit: name, relationId: id }, unit(name))
  // web/0 leaves and comes back: the later departures are the older ones now.
  model.ok('leave-scope', { unit: 'web/0', relationId: id }, unit('web/0'))
  model.ok('enter-scope', { unit: 'web/0', relationId: id }, unit('web/0'))
  assert.equal(model.relation(id)!.departed, [])
  const leaving = [...names.slice(1), 'web/0']
  for (const name of leaving.slice(0, limits.relationDepartedMembersMax)) {
    model.ok('remove-unit', { unit: name })
    model.ok('unit-dead', { unit: name }, unit(name))
  }
  assert.equal(model.relation(id)!.departed, leaving.slice(0, limits.relationDepartedMembersMax))
  // One more departure than the limit: the oldest one (web/1) goes, member and bag.
  const next = leaving[limits.relationDepartedMembersMax]!
  model.ok('leave-scope', { unit: next, relationId: id }, unit(next))
  assert.equal(model.relation(id)!.departed, leaving.slice(1, limits.relationDepartedMembersMax + 1))
  assert.is(tableGet(model.relation(id)!.members, 'web/1'), undefined)
  assert.is(model.settings('relation/1/settings/web/1'), undefined)
  assert.ok(model.deltaKeys().includes('-relation/1/settings/web/1'), 'watchers are told the bag went')
  assert.ok(model.settings('relation/1/settings/web/2') !== undefined, 'the next oldest stays')
  assert.is(model.relation(id)!.members.size, limits.relationDepartedMembersMax + model.relation(id)!.inScope)
})

relations.run()

// ---------------------------------------------------------------------------------

const lifecycle = suite('model: removal and death')

lifecycle('remove-unit: dying with its subordinates; unit-dead only when dying and subordinates are gone', () => {
  const model = standard()
  model.ok('deploy', { application: 'log', charm: 'local:logging-0', config: {}, constraints: {}, numUnits: 0 })
  const id = model.ok('integrate', { a: 'web', b: 'log' }).relationId!
  model.ok('enter-scope', { unit: 'log/0', relationId: id }, unit('log/0'))
  model.refused('unit-dead', { unit: 'web/0' }, 'controller: cannot mark unit "web/0" dead: the unit is alive; remove it first', unit('web/0'))
  model.ok('remove-unit', { unit: 'web/0' })
  assert.equal([model.unit('web/0')!.life, model.unit('log/0')!.life, model.unit('log/1')!.life], ['dying', 'dying', 'alive'])
  assert.is(model.app('web')!.scale, 1)
  model.ok('remove-unit', { unit: 'web/0' })
  assert.equal(model.deltaKeys(), [], 'removing a dying unit again changes nothing')
  model.refused('unit-dead', { unit: 'web/0' }, 'controller: cannot mark unit "web/0" dead: subordinate units "log/0" remain', unit('web/0'))

  model.refused('enter-scope', { unit: 'web/0', relationId: id }, /unit "web\/0" is dying/, unit('web/0'))
  model.ok('unit-dead', { unit: 'log/0' }, machine('0'))
  assert.is(model.unit('log/0'), undefined)
  assert.equal(model.unit('web/0')!.subordinates, [])
  assert.is(model.relation(id)!.inScope, 0, 'the dead unit left scope')
  model.ok('unit-dead', { unit: 'web/0' }, unit('web/0'))
  assert.equal(model.machine('0')!.units, [])
  assert.ok(model.deltaKeys().includes('-unit/web/0'))
  model.ok('unit-dead', { unit: 'web/0' }, controller)
  assert.equal(model.deltaKeys(), [], 'already gone')
  // A subordinate asking for its own removal.
  model.ok('remove-unit', { unit: 'log/1' }, unit('log/1'))
  model.refused('remove-unit', { unit: 'web/1' }, 'controller: cannot remove unit "web/1": permission denied for unit-log-1', unit('log/1'))
})

lifecycle('remove-unit of a unit whose agent never started: gone at once with its subordinates (as Juju)', () => {
  const model = standard()
  model.ok('deploy', { application: 'log', charm: 'local:logging-0', config: {}, constraints: {}, numUnits: 0 })
  const id = model.ok('integrate', { a: 'web', b: 'log' }).relationId!
  assert.equal(model.unit('web/0')!.subordinates, ['log/0'])
  model.ok('set-agent-status', { unit: 'web/1', status: 'idle', message: '', now: 1 }, machine('1'))
  model.ok('remove-unit', { unit: 'web/0' })
  assert.is(model.unit('web/0'), undefined, 'never started: nothing will ever finish its removal')
  assert.is(model.unit('log/0'), undefined, 'its subordinate went first')
  assert.equal(model.machine('0')!.units, [])
  assert.ok(model.deltaKeys().includes('-unit/web/0'))
  assert.is(model.app('web')!.scale, 1)
  // A started agent runs its stop and remove hooks first: dying until it says it is dead.
  model.ok('remove-unit', { unit: 'web/1' })
  assert.is(model.unit('web/1')!.life, 'dying')
  // A never-started subordinate in scope of a relation stays until it leaves scope.
  model.ok('add-unit', { application: 'web', numUnits: 1 })
  const sub = model.unit('web/2')!.subordinates[0]!
  model.ok('enter-scope', { unit: sub, relationId: id }, unit(sub))
  model.ok('remove-unit', { unit: 'web/2' })
  assert.equal([model.unit('web/2')!.life, model.unit(sub)!.life], ['dying', 'dying'])
  // remove-application of an application none of whose agents started: gone at once.
  model.ok('deploy', { application: 'idle', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 2 })
  model.ok('remove-application', { application: 'idle' })
  assert.is(model.app('idle'), undefined)
})

lifecycle('remove-application: relations dying, units dying, gone with its last unit', () => {
  const model = standard()
  const id = model.ok('integrate', { a: 'web:db', b: 'db:server' }).relationId!
  model.ok('enter-scope', { unit: 'web/0', relationId: id }, unit('web/0'))
  model.ok('claim-leadership', { application: 'web', unit: 'web/1', now: 0, durationMs: 60_000 }, unit('web/1'))
  model.ok('remove-application', { application: 'web' })
  assert.equal([model.app('web')!.life, model.relation(id)!.life, model.unit('web/0')!.life, model.unit('web/1')!.life], ['dying', 'dying', 'dying', 'dying'])
  model.refused('add-unit', { application: 'web', numUnits: 1 }, 'controller: cannot add unit to "web": application is dying')
  model.ok('unit-dead', { unit: 'web/1' }, unit('web/1'))
  assert.is(tableGet(model.context.leases, 'web'), undefined)
  model.ok('leave-scope', { unit: 'web/0', relationId: id }, unit('web/0'))
  assert.is(model.relation(id), undefined)
  model.ok('unit-dead', { unit: 'web/0' }, unit('web/0'))
  assert.is(model.app('web'), undefined)
  assert.is(model.relation(0), undefined, 'the peer relation goes with the application')
  assert.ok(model.deltaKeys().includes('-application/web'))
  assert.ok(model.deltaKeys().includes('-leader-settings/web'))
  // The name is free again; unit numbers start over with the new application.
  assert.equal(model.ok('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 1 }).units, ['web/0'])
  // db/0's agent has started, so db stays dying until it is dead.
  model.ok('set-agent-status', { unit: 'db/0', status: 'idle', message: '', now: 1 }, machine(model.unit('db/0')!.machine))
  model.ok('remove-application', { application: 'db' })
  model.ok('remove-application', { application: 'db' })
  assert.equal(model.deltaKeys(), [])
})

lifecycle('machines: add, instance and addresses, status, remove (with or without force), dead', () => {
  const model = standard()
  const added = model.ok('add-machine', { constraints: { cores: '2' } })
  assert.equal(added.machines, ['3'])
  assert.equal(model.deltaKeys(), ['machine/3', 'machine/3/status'])
  model.ok('set-machine-instance', { machine: '3', instanceId: 'i-3', addresses: ['10.0.0.3'] }, controller)
  model.refused('set-machine-instance', { machine: '3', instanceId: 'i-4', addresses: [] }, 'controller: cannot set the instance of machine "3": machine is provisioned as "i-3" already', controller)
  model.refused('set-machine-instance', { machine: '3', instanceId: 'i-3', addresses: [] }, 'controller: cannot set the instance of machine "3": permission denied for machine-0', machine('0'))
  model.refused('set-machine-instance', { machine: '3', instanceId: 'i-3', addresses: Array.from({ length: limits.machineAddressesMax + 1 }, (_, i) => `10.0.1.${i}`) },
    `controller: cannot set the instance of machine "3": addresses must be at most ${limits.machineAddressesMax} non-empty strings`, controller)
  model.ok('set-machine-status', { machine: '3', agentStatus: 'started', message: '', now: 5 }, machine('3'))
  assert.equal(model.machine('3')!.agent, { status: 'started', message: '', since: 5, data: null })
  assert.equal(model.deltaKeys(), ['machine/3/status'])
  model.refused('set-machine-status', { machine: '3', agentStatus: 'running' as 'started', message: '', now: 5 }, /"running" is not a machine status/, machine('3'))
  model.refused('remove-machine', { machine: '0' }, 'controller: cannot remove machine "0": it hosts "web/0"; remove them first or force it')
  // An agent that has started: its unit stays dying until the agent says it is dead.
  model.ok('set-agent-status', { unit: 'web/0', status: 'idle', message: '', now: 6 }, machine('0'))
  model.ok('remove-machine', { machine: '0', force: true })
  assert.equal([model.machine('0')!.life, model.unit('web/0')!.life], ['dying', 'dying'])
  model.refused('machine-dead', { machine: '0' }, 'controller: cannot mark machine "0" dead: units "web/0" remain on it', controller)
  model.refused('machine-dead', { machine: '3' }, 'controller: cannot mark machine "3" dead: the machine is alive; remove it first', controller)
  model.ok('remove-machine', { machine: '3' })
  model.ok('machine-dead', { machine: '3' }, machine('3'))
  assert.equal(model.deltaKeys(), ['-machine/3', '-machine/3/status'])
  assert.is(model.machine('3'), undefined)
})

lifecycle('a removal that leaves a machine with no principal makes it dying, as Juju (state/unit.go destroyHostOps)', () => {
  const model = standard()
  // web/0 on machine 0, web/1 on 1, db/0 on 2; db/1 beside web/0; logging beside each principal.
  model.ok('add-unit', { application: 'db', numUnits: 1, placement: ['0'] })
  model.ok('deploy', { application: 'log', charm: 'local:logging-0', config: {}, constraints: {}, numUnits: 0 })
  model.ok('integrate', { a: 'web', b: 'log' })
  assert.equal([model.machine('0')!.units, model.machine('1')!.units], [['web/0', 'db/1', 'log/0'], ['web/1', 'log/1']])
  for (const name of ['web/0', 'web/1', 'log/0', 'log/1', 'db/0']) model.ok('set-agent-status', { unit: name, status: 'idle', message: '', now: 1 }, machine(model.unit(name)!.machine))

  // remove-application: the units go dying, their machines only once each unit is gone.
  model.ok('remove-application', { application: 'web' })
  assert.equal([model.machine('0')!.life, model.machine('1')!.life], ['alive', 'alive'])
  model.ok('unit-dead', { unit: 'log/1' }, machine('1'))
  assert.is(model.machine('1')!.life, 'alive', 'a subordinate is not what keeps or frees a machine')
  model.ok('unit-dead', { unit: 'web/1' }, machine('1'))
  assert.equal([model.machine('1')!.life, model.machine('1')!.units], ['dying', []], 'its last principal is gone: the machine goes')
  assert.ok(model.deltaKeys().includes('machine/1'), 'watchers (the machiner, the provisioner) hear of it')
  model.ok('unit-dead', { unit: 'log/0' }, machine('0'))
  model.ok('unit-dead', { unit: 'web/0' }, machine('0'))
  assert.equal([model.machine('0')!.life, model.machine('0')!.units], ['alive', ['db/1']], 'shared with another application\'s unit: it stays')
  // remove-unit of a unit whose agent never started leaves at once, and takes the machine it emptied.
  model.ok('remove-unit', { unit: 'db/1' })
  assert.equal([model.unit('db/1'), model.machine('0')!.life], [undefined, 'dying'])
  model.refused('add-unit', { application: 'db', numUnits: 1, placement: ['0'] }, 'controller: cannot add unit to "db": machine "0" is dying')
  // remove-unit --force: at once, and the machine with it.
  model.ok('remove-unit', { unit: 'db/0', force: true })
  assert.is(model.machine('2')!.life, 'dying')
  // What follows is remove-machine's: the machiner (or the provisioner) marks it dead, and it is gone.
  model.ok('remove-machine', { machine: '2' })
  assert.equal(model.deltaKeys(), [], 'already dying')
  model.ok('machine-dead', { machine: '2' }, machine('2'))
  assert.is(model.machine('2'), undefined)

  // A machine made with add-machine and given a unit with --to goes the same way (Juju does not tell them apart).
  model.ok('add-machine', { constraints: {} })
  model.ok('add-unit', { application: 'db', numUnits: 1, placement: ['3'] })
  model.ok('remove-unit', { unit: 'db/2' })
  assert.is(model.machine('3')!.life, 'dying')
  // A machine whose agent is also a controller (cantripd --role both; Juju's JobManageModel) stays.
  model.ok('add-machine', { constraints: {} })
  model.refused('set-machine-status', { machine: '4', agentStatus: 'started', message: '', now: 2, controller: false as never }, 'controller: cannot set the status of machine "4": controller is true or absent', machine('4'))
  model.refused('set-machine-status', { machine: '4', agentStatus: 'started', message: '', now: 2, controller: true }, 'controller: cannot set the status of machine "4": permission denied for machine-0', machine('0'))
  model.ok('set-machine-status', { machine: '4', agentStatus: 'started', message: '', now: 2, controller: true }, machine('4'))
  assert.equal([model.machine('4')!.controller, model.deltaKeys()], [true, ['machine/4', 'machine/4/status']])
  model.ok('set-machine-status', { machine: '4', agentStatus: 'started', message: '', now: 3 }, machine('4'))
  assert.is(model.machine('4')!.controller, true, 'once said, it stays')
  model.ok('add-unit', { application: 'db', numUnits: 1, placement: ['4'] })
  model.ok('remove-unit', { unit: 'db/3' })
  assert.equal([model.unit('db/3'), model.machine('4')!.life, model.machine('4')!.units], [undefined, 'alive', []])
})

lifecycle.run()

// ---------------------------------------------------------------------------------

const unitOps = suite('model: config, refresh, status, resolved, actions, commands, storage')

unitOps('set-config: typed values, null resets, unchanged is a no-op, trust', () => {
  const model = standard()
  const hash = model.app('web')!.configHash
  model.ok('set-config', { application: 'web', config: { port: 80 } })
  assert.is(model.app('web')!.configHash, hash, 'setting the default value keeps the effective config')
  assert.equal(model.app('web')!.config, { port: 80 })
  model.ok('set-config', { application: 'web', config: { port: 8080, ratio: 1.5, debug: true, title: 'hi' } })
  assert.is.not(model.app('web')!.configHash, hash)
  assert.equal(model.deltaKeys(), ['application/web'])
  model.ok('set-config', { application: 'web', config: { port: 8080 } })
  assert.equal(model.deltaKeys(), [])
  model.ok('set-config', { application: 'web', config: { port: null, ratio: null, debug: null, title: null } })
  assert.is(model.app('web')!.configHash, hash)
  model.refused('set-config', { application: 'web', config: { port: 1.5 } }, 'controller: cannot set config of "web": option "port" expects an int, got 1.5')
  model.refused('set-config', { application: 'web', config: { debug: 'yes' } }, /option "debug" expects a boolean/)
  model.ok('set-config', { application: 'web', config: {}, trust: true })
  assert.ok(model.app('web')!.trustHash !== '')
})

unitOps('refresh: new charm URL, modified version, force flag, new peers, config defaults; refusals', () => {
  const model = standard()
  model.ok('set-config', { application: 'web', config: { title: 'x', port: 81 } })
  const hash = model.app('web')!.configHash
  model.ok('add-charm', { url: 'local:web-1', hash: 'f'.repeat(16), metadata: { ...charms.web!, peers: { cluster: 'web-cluster', ring: 'web-ring' }, config: { port: { type: 'string', default: '80' }, title: { type: 'string' } } } })
  model.ok('refresh', { application: 'web', charm: 'local:web-1', force: true })
  const web = model.app('web')!
  assert.equal([web.charm, web.charmModifiedVersion, web.forceUpgrade], ['local:web-1', 1, true])
  assert.equal(web.config, { title: 'x' }, 'a value the new charm no longer accepts is dropped')
  assert.is.not(web.configHash, hash)
  assert.equal(web.relations, [0, 1], 'the new peer endpoint got a relation')
  model.refused('refresh', { application: 'web', charm: 'local:web-1' }, 'controller: cannot refresh "web" to "local:web-1": already running charm "local:web-1"')
  model.refused('refresh', { application: 'web', charm: 'local:mysql-0' }, 'controller: cannot refresh "web" to "local:mysql-0": charm "local:mysql-0" is "mysql", not "web"')
  model.ok('integrate', { a: 'web:db', b: 'db:server' })
  model.ok('add-charm', { url: 'local:web-2', hash: 'e'.repeat(16), metadata: { name: 'web' } })
  model.refused('refresh', { application: 'web', charm: 'local:web-2' }, /charm "local:web-2" has no peer endpoint "cluster" used by relation 0/)
})

unitOps('statuses: vocabulary, the unit or its machine agent only', () => {
  const model = standard()
  model.ok('set-unit-status', { unit: 'web/0', status: 'active', message: 'ready', now: 42 }, unit('web/0'))
  assert.equal(model.unit('web/0')!.workload, { status: 'active', message: 'ready', since: 42, data: null })
  assert.equal(model.deltaKeys(), ['unit/web/0/status'], 'a status is not a change of the unit')
  model.ok('set-agent-status', { unit: 'web/0', status: 'error', message: 'hook failed: "install"', data: { hook: 'install' }, now: 43 }, machine('0'))
  assert.equal(model.unit('web/0')!.agent, { status: 'error', message: 'hook failed: "install"', since: 43, data: { hook: 'install' } })
  model.refused('set-unit-status', { unit: 'web/0', status: 'happy' as 'active', message: '', now: 1 }, /"happy" is not a workload status/, unit('web/0'))
  model.refused('set-unit-status', { unit: 'web/0', status: 'active', message: '', now: 1 }, 'controller: cannot set workload status of "web/0": permission denied for machine-1', machine('1'))
  model.refused('set-unit-status', { unit: 'web/0', status: 'active', message: '', now: 1 }, /permission denied for user-admin/)
  model.refused('set-unit-status', { unit: 'web/0', status: 'active', message: '', now: -1 }, /"now" must be a clock reading/, unit('web/0'))
})

unitOps('resolved and clear-resolved', () => {
  const model = standard()
  model.ok('resolved', { unit: 'web/0', mode: 'retry-hooks' })
  assert.is(model.unit('web/0')!.resolvedMode, 'retry-hooks')
  model.refused('resolved', { unit: 'web/0', mode: 'none' as 'no-hooks' }, /mode must be "retry-hooks" or "no-hooks"/)
  model.refused('resolved', { unit: 'web/0', mode: 'no-hooks' }, /permission denied for unit-web-0/, unit('web/0'))
  model.ok('clear-resolved', { unit: 'web/0' }, unit('web/0'))
  assert.is(model.unit('web/0')!.resolvedMode, 'none')
  model.ok('clear-resolved', { unit: 'web/0' }, unit('web/0'))
  assert.equal(model.deltaKeys(), [])
})

unitOps('actions: defined only, queued in order, completed by the unit, pending limit reached', () => {
  const model = standard()
  const first = model.ok('enqueue-action', { unit: 'web/0', name: 'backup', parameters: { to: '/srv' } })
  assert.is(first.actionId, '1')
  model.refused('enqueue-action', { unit: 'web/0', name: 'restore', parameters: {} }, 'controller: cannot run action "restore" on "web/0": charm "local:web-0" defines no action "restore"')
  model.refused('complete-action', { unit: 'web/1', actionId: '1', status: 'completed' }, 'controller: cannot complete action "1" of "web/1": unit "web/1" has no action "1"', unit('web/1'))
  model.ok('complete-action', { unit: 'web/0', actionId: '1', status: 'failed', message: 'disk full' }, unit('web/0'))
  assert.equal(tableGet(model.context.actions, '1')!.status, 'failed')
  assert.equal(model.unit('web/0')!.actions, [])
  model.refused('complete-action', { unit: 'web/0', actionId: '1', status: 'completed' }, /the action is failed already/, unit('web/0'))
  for (let i = 0; i < limits.pendingActionsMax; i++) model.ok('enqueue-action', { unit: 'web/1', name: 'backup', parameters: {} })
  model.refused('enqueue-action', { unit: 'web/1', name: 'backup', parameters: {} }, `controller: cannot run action "backup" on "web/1": unit already has ${limits.pendingActionsMax} pending actions`)
  model.refused('enqueue-action', { unit: 'web/0', name: 'backup', parameters: { blob: 'x'.repeat(limits.modelTaskBytesMax) } }, /parameters exceed/)
})

unitOps('finished actions are kept up to their limit, then forgotten oldest first', () => {
  const model = standard()
  const total = limits.modelFinishedActionsMax + 300
  for (let i = 0; i < total; i++) {
    const id = model.ok('enqueue-action', { unit: 'web/0', name: 'backup', parameters: {} }).actionId!
    model.ok('complete-action', { unit: 'web/0', actionId: id, status: 'completed' }, unit('web/0'))
  }
  const kept = listLength(model.context.finishedActions)
  assert.ok(kept <= limits.modelFinishedActionsMax && kept > limits.modelFinishedActionsMax - 256, `kept ${kept}`)
  assert.is(tableGet(model.context.actions, '1'), undefined)
  assert.ok(tableGet(model.context.actions, String(total)) !== undefined)
  assert.is(model.context.actions.size, kept)
  assert.equal([...listItems(model.context.finishedActions)].at(-1), String(total))
})

unitOps('commands (juju exec) and storage attachment', () => {
  const model = standard()
  const queued = model.ok('enqueue-command', { unit: 'web/0', commands: 'hostname' })
  assert.is(queued.commandId, 'cmd-1')
  model.refused('enqueue-command', { unit: 'web/0', commands: '  ' }, 'controller: cannot run commands on "web/0": no commands given')
  model.ok('complete-command', { unit: 'web/0', commandId: 'cmd-1' }, unit('web/0'))
  model.refused('complete-command', { unit: 'web/0', commandId: 'cmd-1' }, /has no pending command "cmd-1"/, unit('web/0'))
  for (let i = 0; i < limits.pendingCommandsMax; i++) model.ok('enqueue-command', { unit: 'web/1', commands: 'true' })
  model.refused('enqueue-command', { unit: 'web/1', commands: 'true' }, `controller: cannot run commands on "web/1": unit already has ${limits.pendingCommandsMax} pending commands`)

  model.ok('storage-attached', { unit: 'web/0', storageId: 'data/0', location: '/mnt/data' }, machine('0'))
  assert.equal(model.unit('web/0')!.storage['data/0'], { id: 'data/0', name: 'data', kind: 'filesystem', life: 'alive', attached: true, location: '/mnt/data', sizeMiB: 1024, pool: 'rootfs' })
  model.refused('storage-attached', { unit: 'web/0', storageId: 'data/1' }, 'controller: cannot attach storage "data/1" to "web/0": unit "web/0" has no storage "data/1"', machine('0'))
})

// Juju's checks: state/storage.go (count range, minimum size), cmd/juju/storage/add.go and
// detach.go, internal/worker/uniter/storage/attachments.go (detaching removes the attachment).
unitOps('storage: deploy directives, add-storage, detach-storage, storage-detached', () => {
  const model = standard()
  model.ok('add-charm', { url: 'local:pg-0', hash: 'e'.repeat(16), metadata: { name: 'pg', storage: { data: { type: 'filesystem', countMin: 1, countMax: 3, minimumSizeMiB: 2048 }, wal: { type: 'block', countMin: 0, countMax: -1 } } } })
  model.refused('deploy', { application: 'pg', charm: 'local:pg-0', config: {}, constraints: {}, numUnits: 1, storage: { logs: { count: 1 } } }, 'controller: cannot deploy "pg": charm "pg" has no store called "logs"')
  model.refused('deploy', { application: 'pg', charm: 'local:pg-0', config: {}, constraints: {}, numUnits: 1, storage: { data: { count: 4 } } }, 'controller: cannot deploy "pg": charm "pg" store "data": at most 3 instances supported, 4 specified')
  model.refused('deploy', { application: 'pg', charm: 'local:pg-0', config: {}, constraints: {}, numUnits: 1, storage: { data: { sizeMiB: 1024 } } }, 'controller: cannot deploy "pg": charm "pg" store "data": minimum storage size is 2.0 GiB, 1.0 GiB specified')
  model.ok('deploy', { application: 'pg', charm: 'local:pg-0', config: {}, constraints: {}, numUnits: 1, storage: { data: { count: 2, sizeMiB: 10240 } } })
  assert.equal(model.app('pg')!.storage, { data: { count: 2, sizeMiB: 10240 }, wal: { count: 0, sizeMiB: 1024 } })
  const pg = model.unit('pg/0')!
  assert.equal(Object.keys(pg.storage), ['data/2', 'data/3'], 'web\'s two units took data/0 and data/1; a store with minimum 0 gets none')
  assert.equal(pg.storage['data/2'], { id: 'data/2', name: 'data', kind: 'filesystem', life: 'alive', attached: false, location: '/var/lib/juju/storage/data/2', sizeMiB: 10240, pool: 'rootfs' })
  assert.equal(pg.storageRequired, ['data/2', 'data/3'])

  assert.equal(model.ok('add-storage', { unit: 'pg/0', name: 'wal', count: 2 }).storage, ['wal/4', 'wal/5'])
  assert.equal(model.unit('pg/0')!.storage['wal/4'], { id: 'wal/4', name: 'wal', kind: 'block', life: 'alive', attached: false, location: '', sizeMiB: 1024, pool: 'loop' })
  model.refused('add-storage', { unit: 'pg/0', name: 'data', count: 2 }, 'controller: cannot add storage "data" to "pg/0": adding 2 storage instances brings the total to 4, exceeding the maximum of 3')
  model.refused('add-storage', { unit: 'pg/0', name: 'data', count: 0 }, 'controller: cannot add storage "data" to "pg/0": count must be greater than zero, got 0')
  model.refused('add-storage', { unit: 'pg/0', name: 'nope', count: 1 }, 'controller: cannot add storage "nope" to "pg/0": charm "pg" has no store called "nope"')
  model.refused('add-storage', { unit: 'pg/0', name: 'data', count: 1 }, /permission denied for unit-web-0/, unit('web/0'))
  assert.equal(model.ok('add-storage', { unit: 'pg/0', name: 'data', count: 1 }, unit('pg/0')).storage, ['data/6'], 'storage-add: the unit\'s own agent')

  // Attached (provisioned) storage becomes dying; unprovisioned storage leaves at once.
  model.ok('storage-attached', { unit: 'pg/0', storageId: 'data/2', location: '/m/storage/data/2' }, machine(pg.machine))
  model.ok('detach-storage', { unit: 'pg/0', storageId: 'data/2' })
  assert.is(model.unit('pg/0')!.storage['data/2']!.life, 'dying')
  model.ok('detach-storage', { unit: 'pg/0', storageId: 'wal/5' })
  assert.is(model.unit('pg/0')!.storage['wal/5'], undefined)
  model.ok('detach-storage', { unit: 'pg/0', storageId: 'data/3' })
  model.refused('detach-storage', { unit: 'pg/0', storageId: 'data/6' }, 'controller: cannot detach storage "data/6" from "pg/0": removing storage data/6 would leave 0 instances of store "data", the charm requires at least 1')
  model.refused('detach-storage', { unit: 'pg/0', storageId: 'data/9' }, 'controller: cannot detach storage "data/9" from "pg/0": unit "pg/0" has no storage "data/9"')
  model.refused('detach-storage', { unit: 'pg/0', storageId: 'data/6' }, /permission denied for unit-pg-0/, unit('pg/0'))

  model.refused('storage-detached', { unit: 'pg/0', storageId: 'data/2' }, /permission denied for unit-web-0/, unit('web/0'))
  model.ok('storage-detached', { unit: 'pg/0', storageId: 'data/2' }, unit('pg/0'))
  assert.equal(Object.keys(model.unit('pg/0')!.storage).sort(), ['data/6', 'wal/4'])
  assert.equal(model.unit('pg/0')!.storageRequired, [])
  model.ok('storage-detached', { unit: 'pg/0', storageId: 'data/2' }, unit('pg/0'))
})

unitOps('expose and unexpose', () => {
  const model = standard()
  model.ok('expose', { application: 'web' })
  assert.ok(model.app('web')!.exposed)
  model.ok('expose', { application: 'web' })
  assert.equal(model.deltaKeys(), [])
  model.ok('unexpose', { application: 'web' })
  assert.not.ok(model.app('web')!.exposed)
})

unitOps.run()

// ---------------------------------------------------------------------------------

const requests = suite('model: request ids and malformed entries')

requests('a retried request returns the original result and changes nothing but the revision', () => {
  const model = standard()
  const first = model.run('add-unit', { application: 'web', numUnits: 1 }, admin, 'scale-1')
  const before = model.context
  const again = model.run('add-unit', { application: 'web', numUnits: 1 }, admin, 'scale-1')
  assert.equal(again, first)
  assert.ok(model.last!.duplicate)
  assert.equal(model.last!.deltas, [])
  assert.equal(model.context, { ...before, revision: model.index, term: 1 })
  assert.equal(model.app('web')!.units, ['web/0', 'web/1', 'web/2'])

  // A refusal is remembered too: the retry gets the same answer.
  const refused = model.run('add-unit', { application: 'nope', numUnits: 1 }, admin, 'scale-2')
  assert.equal(model.run('add-unit', { application: 'nope', numUnits: 1 }, admin, 'scale-2'), refused)
  // Request ids are per proposer.
  assert.ok(model.run('add-unit', { application: 'web', numUnits: 1 }, controller, 'scale-1').ok)
  assert.equal(model.app('web')!.units.length, 4)
  const misuse = model.run('remove-unit', { unit: 'web/0' }, admin, 'scale-1')
  assert.equal(misuse, { ok: false, index: model.index, error: 'controller: cannot remove unit "web/0": request id "scale-1" was already used for "add-unit"' })
})

requests('the request table is bounded: recent ids survive a generation, old ones are forgotten', () => {
  const model = new Model()
  model.run('add-machine', {}, admin, 'first')
  const half = limits.modelRequestIdsMax / 2
  for (let i = 0; i < half; i++) model.run('add-machine', {}, controller, `fill-${i}`)
  assert.ok(model.run('add-machine', {}, admin, 'first').ok)
  assert.ok(model.last!.duplicate, 'still remembered one generation later')
  for (let i = 0; i < half; i++) model.run('add-machine', {}, controller, `more-${i}`)
  model.run('add-machine', {}, admin, 'first')
  assert.not.ok(model.last!.duplicate, 'forgotten after two generations')
  const remembered = model.context.requests.current.size + model.context.requests.previous.size
  assert.ok(remembered <= limits.modelRequestIdsMax, `remembers ${remembered}`)
})

requests('malformed entries are refused with one line and still advance the revision', () => {
  const model = standard()
  const apply = (command: unknown): CommandResult => {
    const outcome = applyCommand(model.context, command as ModelCommand, { index: ++model.index })
    model.context = outcome.context
    if (!outcome.result.ok) refusals.push(outcome.result.error)
    return outcome.result
  }
  assert.equal(apply({ type: 'launch', requestId: 'x', proposer: admin }), { ok: false, index: model.index, error: 'controller: cannot apply command: unknown command type "launch"' })
  assert.equal(apply({ type: 'deploy', proposer: admin }), { ok: false, index: model.index, error: 'controller: cannot apply "deploy": request id must be 1 to 256 characters, got undefined' })
  assert.equal(apply({ type: 'deploy', requestId: 'x', proposer: { kind: 'god' } }), { ok: false, index: model.index, error: 'controller: cannot apply "deploy": proposer is not a user, controller, machine or unit' })
  assert.equal(apply(null), { ok: false, index: model.index, error: 'controller: cannot apply command: expected a command map, got null' })
  assert.match((apply({ type: 'deploy', requestId: 'y', proposer: admin, application: 'x', charm: 'local:web-0', config: 'no', constraints: {}, numUnits: 1 }) as { error: string }).error, 'config must be a map of option values')
  assert.match((apply({ type: 'enter-scope', requestId: 'z', proposer: admin, unit: 'web/0', relationId: 'one' }) as { error: string }).error, 'permission denied')
  assert.match((apply({ type: 'enter-scope', requestId: 'z2', proposer: controller, unit: 'web/0', relationId: 'one' }) as { error: string }).error, '"one" is not a valid relation id')
  assert.is(model.context.revision, model.index)
  assert.throws(() => applyCommand(model.context, { type: 'add-machine', requestId: 'late', proposer: admin }, { index: model.index }), /applied at revision/)
})

requests('every refusal seen in these tests is one line naming the controller', () => {
  assert.ok(refusals.length > 50, `only ${refusals.length} refusals`)
  for (const error of refusals) {
    assert.ok(error.startsWith('controller: cannot '), error)
    assert.not.ok(error.includes('\n'), error)
  }
})

requests.run()

// ---------------------------------------------------------------------------------

/** A random but valid-looking history, mixing good commands with refusals. */
function randomCommands (seed: number, count: number): ModelCommand[] {
  const random = new SeededRandom(seed)
  const pick = <T> (list: readonly T[]): T => list[random.int(0, list.length - 1)]!
  const commands: ModelCommand[] = []
  const apps = ['web', 'db', 'cache']
  const units = (app: string): string => `${app}/${random.int(0, 6)}`
  let n = 0
  const push = (command: Record<string, unknown>, proposer: Entity = admin): void => {
    commands.push({ requestId: `r${random.int(0, count)}-${n++ % 7 === 0 ? 'dup' : n}`, proposer, ...command } as unknown as ModelCommand)
  }
  for (const [name, metadata] of Object.entries(charms)) push({ type: 'add-charm', url: `local:${name}-0`, hash: 'a'.repeat(16), metadata })
  for (let i = 0; i < count; i++) {
    const app = pick(apps)
    const u = units(app)
    const roll = random.int(0, 11)
    switch (roll) {
      case 0: push({ type: 'deploy', application: app, charm: pick(['local:web-0', 'local:mysql-0', 'local:redis-0']), config: {}, constraints: {}, numUnits: random.int(0, 3) }); break
      case 1: push({ type: 'add-unit', application: app, numUnits: random.int(1, 2) }); break
      case 2: push({ type: 'remove-unit', unit: u }); break
      case 3: push({ type: 'integrate', a: pick(apps), b: pick(apps) }); break
      case 4: push({ type: 'enter-scope', unit: u, relationId: random.int(0, 6) }, unit(u)); break
      case 5: push({ type: 'leave-scope', unit: u, relationId: random.int(0, 6) }, unit(u)); break
      case 6: push({ type: 'relation-settings', unit: u, relationId: random.int(0, 6), settings: { k: String(random.int(0, 3)) } }, unit(u)); break
      case 7: push({ type: 'claim-leadership', application: app, unit: u, now: i * 1000, durationMs: 20_000 }, unit(u)); break
      case 8: push({ type: 'unit-dead', unit: u }, unit(u)); break
      case 9: push({ type: 'set-config', application: app, config: { port: random.int(1, 3) } }); break
      case 10: push({ type: 'remove-application', application: app }); break
      default: push({ type: 'set-unit-status', unit: u, status: 'active', message: String(i), now: i }, unit(u)); break
    }
  }
  return commands
}

function replay (commands: readonly ModelCommand[], check?: (context: ModelContext) => void): { context: ModelContext, results: CommandResult[] } {
  let context = emptyModel()
  const results: CommandResult[] = []
  commands.forEach((command, i) => {
    const outcome = applyCommand(context, command, { index: i + 1, term: 1 })
    context = outcome.context
    results.push(outcome.result)
    check?.(context)
  })
  return { context, results }
}

const determinism = suite('model: determinism, the store, RaftSnapshots, throughput')

/** Each relation's departures are exactly its members out of scope, bounded; no unit's bag outlives its member record. Returns the departures. */
function checkMembers (context: ModelContext): number {
  let departures = 0
  for (const [id, relation] of tableEntries(context.relations)) {
    const out = [...tableEntries(relation.members)].filter(([, m]) => !m.inScope).map(([name]) => name)
    assert.equal([...relation.departed].sort(), out.sort(), `relation ${id}: departed`)
    assert.is(new Set(relation.departed).size, relation.departed.length)
    assert.ok(relation.departed.length <= limits.relationDepartedMembersMax)
    assert.is(relation.inScope, relation.members.size - out.length, `relation ${id}: in scope`)
    departures += out.length
  }
  for (const key of tableKeys(context.settings)) {
    const match = /^relation\/(\d+)\/settings\/(.+)$/.exec(key)
    if (match === null) continue
    const relation = tableGet(context.relations, match[1]!)
    assert.ok(relation !== undefined && tableGet(relation.members, match[2]!) !== undefined, `${key} belongs to a member`)
  }
  return departures
}

determinism('replaying the same commands twice gives deep-equal contexts and results', () => {
  for (const seed of [1, 2, 3]) {
    const commands = randomCommands(seed, 600)
    const a = replay(commands, checkMembers)
    const b = replay(structuredClone(commands))
    assert.equal(a.context, b.context)
    assert.equal(a.results, b.results)
    assert.ok(a.results.filter(r => r.ok).length > 100, 'the history does things')
    assert.ok(a.results.filter(r => !r.ok).length > 50, 'and is refused things')
  }
})

determinism('the store applies the same way as the pure function, emits results and deltas, refuses re-applied entries', () => {
  const commands = randomCommands(7, 300)
  const store = createModelStore()
  const emitted: unknown[] = []
  store.on('applied', event => emitted.push(event))
  commands.forEach((command, i) => store.send(commandEvent(command, i + 1, 1)))
  const pure = replay(commands)
  assert.equal(store.getSnapshot().context, pure.context)
  assert.is(emitted.length, commands.length)
  assert.equal((emitted.at(-1) as { result: CommandResult }).result, pure.results.at(-1))

  // A re-applied entry is refused (no change, no emission); a skipped Raft entry advances the revision.
  const before = store.getSnapshot().context
  store.send(commandEvent(commands[0]!, 5, 1))
  assert.is(store.getSnapshot().context, before)
  assert.is(emitted.length, commands.length)
  store.send({ type: 'raft.entrySkipped', index: 400, term: 2 })
  assert.equal([store.getSnapshot().context.revision, store.getSnapshot().context.term], [400, 2])
  const applied = applyToStore(store, { type: 'add-machine', requestId: 'm', proposer: admin }, 401, 2)
  assert.equal(applied?.result.ok, true)
  assert.is(applyToStore(store, { type: 'add-machine', requestId: 'm2', proposer: admin }, 401, 2), undefined)

  // The pure transition and the actor form agree too.
  const [next] = store.transition(store.getSnapshot(), commandEvent({ type: 'add-machine', requestId: 'n', proposer: admin }, 402))
  assert.is(next.context.revision, 402)
  const actor = createActor(modelStoreLogic()).start()
  actor.send(commandEvent({ type: 'add-machine', requestId: 'a', proposer: admin }, 1))
  assert.is(actor.getSnapshot().context.machines.size, 1)
  actor.stop()
})

/** Units of web joining and leaving web:db (leaving scope, leaving the model, coming back), well past the departure limit. */
function departureHistory (seed: number, steps: number): { model: Model, departures: number[] } {
  const random = new SeededRandom(seed)
  const model = standard()
  const id = model.ok('integrate', { a: 'web:db', b: 'db:server' }).relationId!
  const departures: number[] = []
  for (let i = 0; i < steps; i++) {
    const units = model.app('web')!.units
    const name = units[random.int(0, units.length - 1)]
    const roll = random.int(0, 5)
    if (roll === 0 || name === undefined) model.ok('add-unit', { application: 'web', numUnits: random.int(1, 3) })
    else if (roll <= 2) model.run('enter-scope', { unit: name, relationId: id }, unit(name))
    else if (roll === 3) model.run('leave-scope', { unit: name, relationId: id }, unit(name))
    else if (roll === 4) model.run('relation-settings', { unit: name, relationId: id, settings: { i: String(i) } }, unit(name))
    else {
      model.run('remove-unit', { unit: name })
      model.run('unit-dead', { unit: name }, unit(name))
    }
    departures.push(checkMembers(model.context))
  }
  return { model, departures }
}

determinism('random departures: the list matches the members out of scope, stays bounded, bags go with their member', () => {
  const { model, departures } = departureHistory(3, 1500)
  assert.is(Math.max(...departures), limits.relationDepartedMembersMax, 'the limit was reached')
  assert.ok(model.relation(1)!.inScope > 0)
  assert.equal(departureHistory(3, 1500).model.context, model.context, 'deterministic')
})

determinism('snapshotModel / restoreModel round-trip through the codec; garbage is refused', () => {
  const { context } = replay(randomCommands(11, 800))
  const bytes = encode(snapshotModel(context), 'test')
  const restored = restoreModel(decode(bytes, 'test'))
  assert.equal(restored, context)
  // Applying more after a restore gives what applying to the original gives.
  const more = randomCommands(12, 50).slice(-50)
  let a = context
  let b = restored
  more.forEach((command, i) => {
    a = applyCommand(a, command, { index: context.revision + i + 1 }).context
    b = applyCommand(b, command, { index: context.revision + i + 1 }).context
  })
  assert.equal(a, b)
  // A snapshot from before relations listed their departures: the members out of scope, by name.
  const departing = departureHistory(5, 300).model.context
  const relations = [...tableEntries(departing.relations)].map(([key, relation]) => {
    const { departed: _departed, ...old } = relation
    return [key, old] as [string, RelationRecord]
  })
  const old = { ...departing, relations: tableFrom(relations) }
  const upgraded = restoreModel(decode(encode(snapshotModel(old), 'test'), 'test'))
  assert.ok(checkMembers(upgraded) > 0, 'the history left departures to upgrade')
  for (const [key, relation] of tableEntries(departing.relations)) {
    assert.equal(tableGet(upgraded.relations, key)!.departed, [...relation.departed].sort(naturalCompare))
  }
  assert.throws(() => restoreModel({ format: 'cantrip-model', version: 3 }), /expected snapshot version 2, or 1 with tables of fan-out 64/)
  assert.throws(() => restoreModel({ ...snapshotModel(context), context: { ...context, units: { size: 1, buckets: [] } } }), /expected a table in "units"/)
  assert.throws(() => restoreModel('junk'), /model snapshot: expected a cantrip model snapshot/)
})

determinism('a version 1 snapshot (tables as 64 × 64 buckets) restores to the same context', () => {
  // A controller upgraded in place restores the snapshot its old release wrote.
  const { context } = departureHistory(5, 300).model
  assert.ok(tableValues(context.relations).some(relation => relation.members.size > 0), 'relations with members')
  const restored = restoreModel(decode(encode(legacySnapshot(context), 'test'), 'test'))
  assert.equal(restored, context)
  const broken = legacySnapshot(context) as unknown as { context: Record<string, unknown> }
  broken.context.units = { size: 1, buckets: [] }
  assert.throws(() => restoreModel(broken), /expected a table of 64 buckets in "units"/)
})

/** `context` as release 0.1 snapshotted it: each table a 64 × 64 grid of records by hash. */
function legacySnapshot (context: ModelContext): object {
  const grid = <T>(table: Table<T>): object => {
    const buckets: Array<Array<Record<string, T> | null> | null> = new Array(64).fill(null)
    for (const [key, value] of tableEntries(table)) {
      const hash = hashString32(key)
      const middle = buckets[hash % 64] ??= new Array(64).fill(null)
      const leaf = middle[(hash >>> 6) % 64] ??= {}
      leaf[key] = value
    }
    return { size: table.size, buckets }
  }
  const relations = new TableDraft<unknown>(emptyTable())
  for (const [id, relation] of tableEntries(context.relations)) relations.set(id, { ...relation, members: grid(relation.members) })
  const tables: Record<string, object> = {}
  for (const name of ['charms', 'applications', 'units', 'machines', 'settings', 'leases', 'controllerLeases', 'actions', 'keyRevisions', 'models'] as const) tables[name] = grid<unknown>(context[name])
  if (context.agentBinaries !== undefined) tables.agentBinaries = grid(context.agentBinaries)
  if (context.secrets !== undefined) tables.secrets = grid(context.secrets)
  return {
    format: 'cantrip-model',
    version: 1,
    tableFanout: 64,
    context: { ...context, ...tables, relations: grid(relations.finish()), requests: { current: grid(context.requests.current), previous: grid(context.requests.previous) } }
  }
}

determinism('10k commands apply in time linear in their number (no timing assertion: it prints)', () => {
  const model = standard()
  const id = model.ok('integrate', { a: 'web:db', b: 'db:server' }).relationId!
  const rounds: number[] = []
  for (let round = 0; round < 4; round++) {
    const started = performance.now()
    for (let i = 0; i < 850; i++) {
      const added = model.ok('add-unit', { application: 'web', numUnits: 1 }).units![0]!
      model.ok('enter-scope', { unit: added, relationId: id }, unit(added))
      model.ok('relation-settings', { unit: added, relationId: id, settings: { n: String(i) } }, unit(added))
    }
    rounds.push(Math.round(performance.now() - started))
  }
  assert.is(model.app('web')!.units.length, 2 + 4 * 850)
  assert.ok(model.context.revision > 10_000)

  // On to the most units one relation may have in scope.
  const more = model.ok('add-unit', { application: 'web', numUnits: limits.modelUnitsPerCommandMax }).units!
  let entered = model.relation(id)!.inScope
  for (const name of more) {
    if (entered === limits.relationMembersMax) {
      model.refused('enter-scope', { unit: name, relationId: id }, `controller: cannot enter scope of relation ${id} for "${name}": relation ${id} already has ${limits.relationMembersMax} units in scope`, unit(name))
      break
    }
    model.ok('enter-scope', { unit: name, relationId: id }, unit(name))
    entered++
  }
  assert.is(model.relation(id)!.inScope, limits.relationMembersMax)
  console.log(`  model throughput: ${rounds.map(ms => `${2550} commands in ${ms} ms`).join(', ')} (${tableValues(model.context.units).length} units)`)
})

determinism.run()
