/**
 * The real HookContext of a unit agent (agent/uniter/unit-hook-context.ts) against an
 * in-memory controller, driven through runTool so the tools and the context are tested
 * together: what is buffered until the hook's one commit-hook-changes and what takes
 * effect at once (juju-semantics §4.3), and what the tools read back (§5.3).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { initialLocalState, type LocalState } from '../actors/unit/local-state.ts'
import { HookToolError, type ActionContext, type CurrentRelation } from '../agent/hook-tools/hook-context.ts'
import { runTool, type ToolResult } from '../agent/hook-tools/run-tool.ts'
import { UnitHookContext } from '../agent/uniter/unit-hook-context.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import { keys } from '../runtime/model/keys.ts'
import { machineModelView } from '../runtime/model/machine-view.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import type { CharmSummaryInput, CommandOf } from '../runtime/model/model-types.ts'
import { tableGet } from '../runtime/model/table.ts'
import { MemoryController } from './support/model-controller.ts'

const webCharm: CharmSummaryInput = {
  name: 'web',
  requires: { db: 'mysql' },
  peers: { cluster: 'web-peers' },
  config: { port: { type: 'int', default: 80 }, title: { type: 'string' }, debug: { type: 'boolean', default: false } }
}
const mysqlCharm: CharmSummaryInput = { name: 'mysql', provides: { db: 'mysql' } }

interface World { c: MemoryController, db: number, peer: number }

/**
 * web (2 units, port=8080 set by the user) and mysql (2 units) related on db; everyone
 * in scope of db, both web units in scope of web's peer relation; web/0 leads web with a
 * lease from 0 to 60 000 ms.
 */
function world (): World {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:web-0', hash: 'a'.repeat(16), metadata: webCharm })
  c.run('add-charm', { url: 'local:mysql-0', hash: 'b'.repeat(16), metadata: mysqlCharm })
  c.run('deploy', { application: 'web', charm: 'local:web-0', config: { port: 8080 }, constraints: {}, numUnits: 2 })
  c.run('deploy', { application: 'mysql', charm: 'local:mysql-0', config: {}, constraints: {}, numUnits: 2 })
  const db = c.run('integrate', { a: 'web:db', b: 'mysql:db' }).relationId!
  const peer = readerOf(c.context).application('web')!.relations.find(id => id !== db)!
  for (const unit of ['web/0', 'web/1', 'mysql/0', 'mysql/1']) c.runAs(unit, 'enter-scope', { unit, relationId: db })
  for (const unit of ['web/0', 'web/1']) c.runAs(unit, 'enter-scope', { unit, relationId: peer })
  c.runAs('web/0', 'claim-leadership', { application: 'web', unit: 'web/0', now: 0, durationMs: 60_000 })
  return { c, db, peer }
}

/** The uniter's state for a web unit that has seen every remote unit join (or `dbMembers`). */
function localState (w: World, unit: string, dbMembers = ['mysql/0', 'mysql/1']): LocalState {
  const local = initialLocalState()
  const relation = { peer: false, implicit: false, containerScoped: false, applicationMembers: {} }
  local.relations[String(w.db)] = { ...relation, id: w.db, endpoint: 'db', remoteApplication: 'mysql', members: Object.fromEntries(dbMembers.map(u => [u, 1])) }
  const other = unit === 'web/0' ? 'web/1' : 'web/0'
  local.relations[String(w.peer)] = { ...relation, peer: true, id: w.peer, endpoint: 'cluster', remoteApplication: 'web', members: { [other]: 1 } }
  return local
}

let contexts = 0
interface ContextInit { unit?: string, name?: string, relation?: CurrentRelation, action?: ActionContext, dbMembers?: string[] }

function context (w: World, init: ContextInit = {}): UnitHookContext {
  const unit = init.unit ?? 'web/0'
  return new UnitHookContext({
    controller: w.c,
    unit,
    kind: init.action === undefined ? 'hook' : 'action',
    name: init.name ?? init.action?.name ?? 'update-status',
    local: localState(w, unit, init.dbMembers),
    logger: createMemoryLogger(`unit.${unit}`),
    contextId: `ctx-${++contexts}`,
    ...(init.relation === undefined ? {} : { relation: init.relation }),
    ...(init.action === undefined ? {} : { action: init.action })
  })
}

/** A db-relation-changed context of web/0 about mysql/0. */
const dbChanged = (w: World, unit = 'web/0'): UnitHookContext =>
  context(w, { unit, name: 'db-relation-changed', relation: { id: w.db, endpoint: 'db', remoteUnit: 'mysql/0', remoteApplication: 'mysql' } })

async function tool (ctx: UnitHookContext, name: string, ...args: string[]): Promise<ToolResult> {
  const result = await runTool(ctx, name, args, { cwd: '/' })
  if ('needsStdin' in result) throw new Error(`${name} asked for stdin`)
  return result
}

const ok = (stdout = ''): ToolResult => ({ code: 0, stdout, stderr: '' })
const fails = (code: 1 | 2, message: string): ToolResult => ({ code, stdout: '', stderr: `ERROR ${message}\n` })

const bag = (w: World, id: number, unit: string) => tableGet(w.c.context.settings, keys.unitSettings(id, unit))?.values
const appBag = (w: World, id: number, app: string) => tableGet(w.c.context.settings, keys.applicationSettings(id, app))?.values
const unitRecord = (w: World, unit = 'web/0') => readerOf(w.c.context).unit(unit)!
const commits = (w: World) => w.c.submitted.filter((c): c is CommandOf<'commit-hook-changes'> => c.type === 'commit-hook-changes')

async function flushRefused (ctx: UnitHookContext, message: RegExp): Promise<void> {
  try {
    await ctx.flush()
  } catch (error) {
    assert.instance(error, HookToolError)
    assert.is((error as HookToolError).code, 1)
    assert.match((error as HookToolError).message, message)
    return
  }
  assert.unreachable('flush was expected to be refused')
}

// ---------------------------------------------------------------------------------

const reads = suite('UnitHookContext: config and relation reads')

reads('config: user values over charm defaults, null for unset options without a default', async () => {
  const w = world()
  const ctx = context(w)
  assert.equal(await ctx.config(), { port: 8080, title: null, debug: false })
  assert.equal(await tool(ctx, 'config-get', 'port'), ok('8080\n'))
  assert.equal(await tool(ctx, 'config-get', 'title'), ok())
  assert.equal(await tool(ctx, 'config-get', '--all', '--format', 'json'), ok('{"debug":false,"port":8080,"title":null}\n'))
})

reads('relation-get of a remote unit reads its committed bag; an unknown relation id is exit 2', async () => {
  const w = world()
  w.c.runAs('mysql/0', 'relation-settings', { unit: 'mysql/0', relationId: w.db, settings: { user: 'admin', password: 'pw' } })
  const ctx = dbChanged(w)
  assert.equal(await tool(ctx, 'relation-get', 'user'), ok('admin\n'))
  assert.equal(await tool(ctx, 'relation-get', '-r', `db:${w.db}`, '-', 'mysql/0'), ok('password: pw\nuser: admin\n'))
  assert.equal(await tool(ctx, 'relation-get', 'missing'), ok())
  // Remote bags are read once per hook (Juju's relation cache): a later commit is not seen.
  w.c.runAs('mysql/0', 'relation-settings', { unit: 'mysql/0', relationId: w.db, settings: { user: 'root' } })
  w.c.runAs('mysql/0', 'claim-leadership', { application: 'mysql', unit: 'mysql/0', now: 0, durationMs: 60_000 })
  assert.equal(await tool(ctx, 'relation-get', '--app', '-'), ok('{}\n'))
  w.c.runAs('mysql/0', 'relation-settings', { unit: 'mysql/0', relationId: w.db, application: true, settings: { db: 'shop' } })
  assert.equal(await tool(ctx, 'relation-get', 'user'), ok('admin\n'))
  assert.equal(await tool(ctx, 'relation-get', '--app', '-'), ok('{}\n'))
  assert.equal(await tool(dbChanged(w), 'relation-get', 'user'), ok('root\n'), 'the next hook reads the new bag')
  assert.equal(await tool(dbChanged(w), 'relation-get', '--app', 'db', 'mysql'), ok('shop\n'))
  assert.equal(await tool(ctx, 'relation-get', '-', 'mysql/1'), ok('{}\n'), 'in scope, nothing written')
  assert.equal((await tool(ctx, 'relation-get', '-r', '99', '-', 'mysql/0')).code, 2)
  assert.equal((await tool(ctx, 'relation-list', '-r', 'db:99')).code, 2)
  assert.equal((await tool(ctx, 'relation-set', '-r', '99', 'a=b')).code, 2)
})

reads('relation-list: -joined U includes U, -departed U excludes U, other hooks show the members seen', async () => {
  const w = world()
  const relation = (remoteUnit: string, extra = {}): CurrentRelation => ({ id: w.db, endpoint: 'db', remoteUnit, remoteApplication: 'mysql', ...extra })
  const joined = context(w, { name: 'db-relation-joined', relation: relation('mysql/1'), dbMembers: ['mysql/0'] })
  assert.equal(await tool(joined, 'relation-list'), ok('mysql/0\nmysql/1\n'))
  const departed = context(w, { name: 'db-relation-departed', relation: relation('mysql/0', { departingUnit: 'mysql/0' }) })
  assert.equal(await tool(departed, 'relation-list'), ok('mysql/1\n'))
  assert.equal(await tool(dbChanged(w), 'relation-list'), ok('mysql/0\nmysql/1\n'))
  assert.equal(await tool(dbChanged(w), 'relation-list', '-r', String(w.peer)), ok('web/1\n'))
  assert.equal(await tool(dbChanged(w), 'relation-list', '--app'), ok('mysql\n'))
})

// Juju's contextfactory.go (HookContext): a -departed hook removes its remote unit from the
// relation's members, even when the unit leaving is this one (JUJU_DEPARTING_UNIT=self);
// relation-list of the last -departed prints nothing (relation-list_test.go "no members").
reads('relation-list in -departed: the remote unit is gone, also when this unit departs; the last prints nothing', async () => {
  const w = world()
  const relation = (remoteUnit: string, departingUnit: string): CurrentRelation => ({ id: w.db, endpoint: 'db', remoteUnit, remoteApplication: 'mysql', departingUnit })
  const selfDeparting = context(w, { name: 'db-relation-departed', relation: relation('mysql/0', 'web/0') })
  assert.equal(await tool(selfDeparting, 'relation-list'), ok('mysql/1\n'))
  const last = context(w, { name: 'db-relation-departed', relation: relation('mysql/1', 'mysql/1'), dbMembers: ['mysql/1'] })
  assert.equal(await tool(last, 'relation-list'), ok(''))
  assert.equal(await tool(last, 'relation-list', '--format', 'json'), ok('[]\n'))
})

// Juju's contextfactory.go (getContextRelations): a relation that is not a peer relation,
// is dying or suspended and has no members left is broken; relation-ids.go lists only
// relations that are not broken (nor dead), so -relation-broken no longer sees its own.
reads('relation-ids in -relation-broken after remove-relation no longer lists the relation', async () => {
  const w = world()
  w.c.run('remove-relation', { relationId: w.db })
  const broken = context(w, { name: 'db-relation-broken', relation: { id: w.db, endpoint: 'db', remoteUnit: '', remoteApplication: 'mysql' }, dbMembers: [] })
  assert.equal(await tool(broken, 'relation-ids'), ok(''))
  assert.equal(await tool(broken, 'relation-ids', '--format', 'yaml'), ok('[]\n'))
  assert.equal(await tool(broken, 'relation-ids', 'cluster'), ok(`cluster:${w.peer}\n`))
  assert.equal(await tool(broken, 'relation-list'), ok(''))
  // While remote units are still members (their -departed hooks to come), it is listed.
  const departing = context(w, { name: 'db-relation-departed', relation: { id: w.db, endpoint: 'db', remoteUnit: 'mysql/0', remoteApplication: 'mysql', departingUnit: 'mysql/0' } })
  assert.equal(await tool(departing, 'relation-ids'), ok(`db:${w.db}\n`))
})

reads('a departed unit: relation-get still reads its last settings from the machine view, relation-list omits it (§2.4)', async () => {
  const w = world()
  w.c.runAs('mysql/0', 'relation-settings', { unit: 'mysql/0', relationId: w.db, settings: { user: 'admin', password: 'pw' } })
  // mysql/0 goes: it leaves scope and then the model before web/0's hooks about it run.
  w.c.run('remove-unit', { unit: 'mysql/0' })
  w.c.runAs('mysql/0', 'leave-scope', { unit: 'mysql/0', relationId: w.db })
  w.c.runAs('mysql/0', 'unit-dead', { unit: 'mysql/0' })
  assert.is(readerOf(w.c.context).unit('mysql/0'), undefined)
  // What web/0's machine agent reads: its own share of the model, not the whole.
  const machine = unitRecord(w).machine
  const agent = { model: () => machineModelView(w.c.context, machine), submit: w.c.submit.bind(w.c), now: () => w.c.now(), applicationStatus: w.c.applicationStatus.bind(w.c) }
  const on = (name: string, remoteUnit: string, dbMembers: string[], extra = {}): UnitHookContext => new UnitHookContext({
    controller: agent,
    unit: 'web/0',
    kind: 'hook',
    name,
    relation: { id: w.db, endpoint: 'db', remoteUnit, remoteApplication: 'mysql', ...extra },
    local: localState(w, 'web/0', dbMembers),
    logger: createMemoryLogger('unit.web/0'),
    contextId: `ctx-${++contexts}`
  })
  // A -joined the uniter chose while mysql/0 was in scope (the restarted-agent flake).
  const joined = on('db-relation-joined', 'mysql/0', ['mysql/1'])
  assert.equal(await tool(joined, 'relation-get', '-'), ok('password: pw\nuser: admin\n'))
  // Its -departed: U is out of relation-list, and its settings read as they were.
  const departed = on('db-relation-departed', 'mysql/0', ['mysql/0', 'mysql/1'], { departingUnit: 'mysql/0' })
  assert.equal(await tool(departed, 'relation-get', 'user'), ok('admin\n'))
  assert.equal(await tool(departed, 'relation-list'), ok('mysql/1\n'))
  // Later hooks, mysql/0 long gone from the members: still readable by name, for the life of the relation.
  const later = on('db-relation-changed', 'mysql/1', ['mysql/1'])
  assert.equal(await tool(later, 'relation-get', '-r', `db:${w.db}`, '-', 'mysql/0'), ok('password: pw\nuser: admin\n'))
  assert.equal(await tool(later, 'relation-list'), ok('mysql/1\n'))
  // A unit that never joined the relation has no settings.
  assert.equal(await tool(later, 'relation-get', '-', 'mysql/7'), fails(1, `cannot read settings for unit "mysql/7" in relation "db:${w.db}": settings not found`))
})

reads.run()

// ---------------------------------------------------------------------------------

const buffered = suite('UnitHookContext: buffered changes and flush')

buffered('relation-set, ports and state wait for flush, which sends them in ONE commit-hook-changes', async () => {
  const w = world()
  const ctx = dbChanged(w)
  const before = w.c.context
  assert.equal(await tool(ctx, 'relation-set', 'host=10.0.0.1', 'port=3306'), ok())
  assert.equal(await tool(ctx, 'relation-set', '-r', `cluster:${w.peer}`, 'role=primary'), ok())
  assert.equal(await tool(ctx, 'relation-set', '--app', 'url=http://web'), ok())
  assert.equal(await tool(ctx, 'open-port', '80'), ok())
  assert.equal(await tool(ctx, 'state-set', 'token=t1'), ok())
  assert.is(w.c.context, before, 'nothing reached the controller')
  assert.equal(w.c.submitted, [])

  // The own bags read back with the buffered changes; the model still has the old ones.
  assert.equal(await tool(ctx, 'relation-get', '-', 'web/0'), ok('host: 10.0.0.1\nport: "3306"\n'))
  assert.equal(await tool(ctx, 'relation-get', '-r', String(w.peer), 'role', 'web/0'), ok('primary\n'))
  assert.equal(await tool(ctx, 'relation-get', '--app', 'url', 'web'), ok('http://web\n'))
  assert.equal(await tool(ctx, 'relation-set', 'port='), ok())
  assert.equal(await tool(ctx, 'relation-get', '-', 'web/0'), ok('host: 10.0.0.1\n'))
  assert.equal(bag(w, w.db, 'web/0'), {})
  // Another unit's view of web/0's bag is the committed one.
  assert.equal(await tool(context(w, { unit: 'web/1' }), 'relation-get', '-r', String(w.peer), '-', 'web/0'), ok('{}\n'))

  await ctx.flush()
  assert.is(w.c.submitted.length, 1)
  const [commit] = commits(w)
  assert.ok(commit !== undefined)
  assert.equal(commit.relationSettings?.map(r => [r.relationId, r.application === true]).sort(),
    [[w.db, false], [w.db, true], [w.peer, false]].sort())
  assert.equal(commit.openPorts?.length, 1)
  assert.equal(commit.charmState, { set: { token: 't1' }, delete: [] })
  assert.equal(bag(w, w.db, 'web/0'), { host: '10.0.0.1' })
  assert.equal(bag(w, w.peer, 'web/0'), { role: 'primary' })
  assert.equal(appBag(w, w.db, 'web'), { url: 'http://web' })
  assert.equal(unitRecord(w).openedPorts, [{ protocol: 'tcp', from: 80, to: 80, endpoints: ['*'] }])
  assert.equal(unitRecord(w).charmState, { token: 't1' })
  // A new hook of web/1 now reads what web/0 committed.
  assert.equal(await tool(context(w, { unit: 'web/1' }), 'relation-get', '-r', String(w.peer), '-', 'web/0'), ok('role: primary\n'))
})

buffered('a context with nothing buffered submits nothing on flush', async () => {
  const w = world()
  await context(w).flush()
  assert.equal(w.c.submitted, [])
})

buffered('flush fails and applies nothing when leadership moved away before an --app write', async () => {
  const w = world()
  const ctx = dbChanged(w)
  assert.equal(await tool(ctx, 'relation-set', '--app', 'url=http://web'), ok())
  assert.equal(await tool(ctx, 'relation-set', 'host=h'), ok())
  assert.equal(await tool(ctx, 'open-port', '443'), ok())
  assert.equal(await tool(ctx, 'state-set', 'k=v'), ok())
  w.c.clock = 60_000
  w.c.runAs('web/1', 'claim-leadership', { application: 'web', unit: 'web/1', now: 60_000, durationMs: 60_000 })
  const { settings, units } = w.c.context
  await flushRefused(ctx, /not the leader/)
  assert.is(commits(w).length, 1)
  assert.is(w.c.context.settings, settings, 'no bag written')
  assert.is(w.c.context.units, units, 'no port opened, no state set')
})

buffered('flush fails and applies nothing when the unit left the relation', async () => {
  const w = world()
  const ctx = dbChanged(w)
  assert.equal(await tool(ctx, 'relation-set', 'host=h'), ok())
  assert.equal(await tool(ctx, 'relation-set', '-r', String(w.peer), 'role=primary'), ok())
  assert.equal(await tool(ctx, 'open-port', '443'), ok())
  w.c.runAs('web/0', 'leave-scope', { unit: 'web/0', relationId: w.db })
  await flushRefused(ctx, /not in scope/)
  assert.equal(bag(w, w.peer, 'web/0'), {})
  assert.equal(unitRecord(w).openedPorts, [])
})

buffered('open-port / close-port: close-then-open ends open; opened-ports shows only committed ports', async () => {
  const w = world()
  const first = context(w)
  assert.equal(await tool(first, 'open-port', '8080'), ok())
  // Juju 3 lists a hook's pending opens (runner/context/ports.go mergeWithPendingChanges;
  // canonical/operator test_hookcmds.py test_ports_open_close_cycle asserts it against Juju).
  assert.equal(await tool(first, 'opened-ports'), ok('8080/tcp\n'), 'pending, shown to the hook that opened it')
  await first.flush()

  const ctx = context(w)
  assert.equal(await tool(ctx, 'close-port', '8080'), ok())
  assert.equal(await tool(ctx, 'open-port', '8080'), ok())
  assert.equal(await tool(ctx, 'close-port', '9000'), ok())
  assert.equal(await tool(ctx, 'open-port', '9000'), ok())
  assert.equal(await tool(ctx, 'open-port', '1000-2000/udp'), ok())
  assert.equal(await tool(ctx, 'open-port', '7000'), ok())
  assert.equal(await tool(ctx, 'close-port', '7000'), ok())
  assert.equal(await tool(ctx, 'opened-ports'), ok('8080/tcp\n9000/tcp\n1000-2000/udp\n'), 'the calls applied in order on top of what was committed')
  await ctx.flush()
  assert.equal(await tool(context(w), 'opened-ports'), ok('8080/tcp\n9000/tcp\n1000-2000/udp\n'))

  const closing = context(w)
  assert.equal(await tool(closing, 'close-port', '1000-2000/udp'), ok())
  await closing.flush()
  assert.equal(unitRecord(w).openedPorts.map(p => `${p.from}/${p.protocol}`), ['8080/tcp', '9000/tcp'])
})

buffered('state-set / state-delete are buffered; state-get sees them at once', async () => {
  const w = world()
  w.c.runAs('web/0', 'commit-hook-changes', { unit: 'web/0', charmState: { set: { old: 'o', keep: 'k' } } })
  const ctx = context(w)
  assert.equal(await tool(ctx, 'state-set', 'a=x', 'b=z'), ok())
  assert.equal(await tool(ctx, 'state-delete', 'a'), ok())
  assert.equal(await tool(ctx, 'state-delete', 'old'), ok())
  assert.equal(await tool(ctx, 'state-get', 'b'), ok('z\n'))
  assert.equal(await tool(ctx, 'state-get', 'a'), ok())
  assert.equal(await tool(ctx, 'state-get'), ok('b: z\nkeep: k\n'))
  assert.equal(unitRecord(w).charmState, { keep: 'k', old: 'o' })
  await ctx.flush()
  assert.equal(unitRecord(w).charmState, { b: 'z', keep: 'k' })
})

buffered('a hook run again with the same commit key commits nothing twice; a new key commits again', async () => {
  // The chaos suite's kill -9 between a hook's commit and its saved `done` ran install again and counted it twice.
  const w = world()
  const count = async (commitKey: string, relationValue: string): Promise<void> => {
    const ctx = new UnitHookContext({
      controller: w.c, unit: 'web/0', kind: 'hook', name: 'install', local: localState(w, 'web/0'), logger: createMemoryLogger('unit.web/0'), contextId: `ctx-${++contexts}`, commitKey,
      relation: { id: w.db, endpoint: 'db', remoteUnit: 'mysql/0', remoteApplication: 'mysql' }
    })
    const seen = Number((await tool(ctx, 'state-get', 'count')).stdout.trim() || '0')
    assert.equal(await tool(ctx, 'state-set', `count=${seen + 1}`), ok())
    assert.equal(await tool(ctx, 'relation-set', `seen=${relationValue}`), ok())
    await ctx.flush()
  }
  await count('state-a:1', 'first')
  await count('state-a:1', 'again')
  assert.equal(unitRecord(w).charmState, { count: '1' }, 'the second run of run 1 changed nothing')
  assert.is(bag(w, w.db, 'web/0')?.['seen'], 'first', 'nor its relation settings')
  await count('state-a:2', 'next')
  assert.equal(unitRecord(w).charmState, { count: '2' })
  assert.is(unitRecord(w).lastHookRun, 'state-a:2')
  // A refused commit is not remembered: the same run commits once it is allowed.
  const refused = w.c.apply({ type: 'commit-hook-changes', unit: 'web/0', hookRun: 'state-a:3', relationSettings: [{ relationId: 999, settings: { x: 'y' } }], requestId: 'refused-1', proposer: { kind: 'unit', name: 'web/0' } })
  assert.is(refused.ok, false)
  await count('state-a:3', 'after refusal')
  assert.equal(unitRecord(w).charmState, { count: '3' })
})

buffered.run()

// ---------------------------------------------------------------------------------

const immediate = suite('UnitHookContext: leadership and immediate effects')

immediate('relation-set --app and leader-set: leader only; leader-set lands at once', async () => {
  const w = world()
  const follower = dbChanged(w, 'web/1')
  assert.equal(await tool(follower, 'relation-set', '--app', 'url=x'), fails(1, 'cannot write relation settings'))
  assert.equal((await tool(follower, 'leader-set', 'a=b')).code, 1)
  assert.equal((await tool(follower, 'relation-get', '--app', '-', 'web')).code, 1)

  const leader = context(w)
  assert.equal(await tool(leader, 'leader-set', 'dsn=mysql://db', 'other=1'), ok())
  assert.equal(readerOf(w.c.context).application('web')!.leaderSettings, { dsn: 'mysql://db', other: '1' }, 'before any flush')
  assert.equal(await tool(follower, 'leader-get', 'dsn'), ok('mysql://db\n'))
  assert.equal(await tool(leader, 'leader-set', 'other='), ok())
  assert.equal(readerOf(w.c.context).application('web')!.leaderSettings, { dsn: 'mysql://db' })
  assert.equal(commits(w), [])
})

immediate('is-leader follows the lease and the clock: False from expiry minus the drift margin', async () => {
  const w = world()
  const leader = context(w)
  assert.equal(await tool(leader, 'is-leader'), ok('True\n'))
  assert.equal(await tool(context(w, { unit: 'web/1' }), 'is-leader'), ok('False\n'))
  w.c.clock = 54_999
  assert.equal(await tool(leader, 'is-leader', '--format', 'json'), ok('true\n'))
  w.c.clock = 55_000
  assert.equal(await tool(leader, 'is-leader'), ok('False\n'))
  assert.equal((await tool(leader, 'leader-set', 'a=b')).code, 1)
  // Renewed: the same context believes again.
  w.c.runAs('web/0', 'extend-leadership', { application: 'web', unit: 'web/0', now: 55_000, durationMs: 60_000 })
  assert.equal(await tool(leader, 'is-leader'), ok('True\n'))
})

immediate('status-set and application-version-set are immediate; status-get reads back', async () => {
  const w = world()
  w.c.clock = 1234.7
  const ctx = context(w)
  assert.equal(await tool(ctx, 'status-set', 'maintenance', 'installing'), ok())
  const workload = unitRecord(w).workload
  assert.equal([workload.status, workload.message, workload.since], ['maintenance', 'installing', 1234])
  assert.equal(await tool(ctx, 'status-get'), ok('maintenance\n'))
  assert.equal(await tool(ctx, 'status-get', '--include-data', '--format', 'json'), ok('{"message":"installing","status":"maintenance","status-data":{}}\n'))
  assert.equal((await tool(ctx, 'status-set', 'error')).code, 2)
  assert.equal(await tool(ctx, 'application-version-set', '8.0.36'), ok())
  assert.is(readerOf(w.c.context).application('web')!.workloadVersion, '8.0.36')
  assert.equal(commits(w), [], 'nothing was buffered')
})

// Juju's status-set and status-get are both calls on the controller's state, so a hook
// reads back what it set (worker/uniter/runner/context: SetUnitStatus, UnitStatus);
// this machine's view of the model receives the change only later.
immediate('status-get after status-set in the same run answers with the new status while the machine view lags', async () => {
  const w = world()
  const stale = w.c.context
  const agent = { model: () => stale, submit: w.c.submit.bind(w.c), now: () => 0, applicationStatus: w.c.applicationStatus.bind(w.c) }
  const ctx = new UnitHookContext({ controller: agent, unit: 'web/0', kind: 'action', name: 'check', local: localState(w, 'web/0'), logger: createMemoryLogger('unit.web/0'), contextId: `ctx-${++contexts}`, action: { id: '1', name: 'check', params: {} } })
  assert.equal(await tool(ctx, 'status-get'), ok('waiting\n'), 'before: the view')
  assert.equal(await tool(ctx, 'status-set', 'blocked', 'no db'), ok())
  assert.is(readerOf(stale).unit('web/0')!.workload.status, 'waiting', 'the view still has the old status')
  assert.equal(await tool(ctx, 'status-get', '--include-data', '--format', 'json'), ok('{"message":"no db","status":"blocked","status-data":{}}\n'))
})

immediate('status-set --application: the leader sets the application status at once; others are refused', async () => {
  const w = world()
  w.c.clock = 2000
  const leader = context(w)
  assert.equal(await tool(leader, 'status-get', '--application', '--format', 'json'),
    ok('{"application-status":{"status":"unknown","units":{"web/0":{"status":"waiting"},"web/1":{"status":"waiting"}}}}\n'))
  assert.equal(await tool(leader, 'status-set', '--application', 'blocked', 'need a database'), ok())
  const app = readerOf(w.c.context).application('web')!.status
  assert.equal([app?.status, app?.message, app?.since], ['blocked', 'need a database', 2000])
  assert.match((await tool(leader, 'status-get', '--application', '--format', 'json')).stdout, /"status":"blocked"/)
  const other = context(w, { unit: 'web/1' })
  assert.equal((await tool(other, 'status-set', '--application', 'active')).code, 1, 'only the leader')
  // The model refuses it too, from a unit whose lease has run out.
  const refused = w.c.apply({ type: 'set-application-status', unit: 'web/1', status: 'active', message: '', now: 2000, requestId: 'x', proposer: { kind: 'unit', name: 'web/1' } })
  assert.match(refused.ok ? '' : refused.error, /is not the leader of "web"/)
})

immediate('status-get --application: the leader reads every unit through the controller, not its machine view (which holds only its own)', async () => {
  const w = world()
  w.c.runAs('web/1', 'set-unit-status', { unit: 'web/1', status: 'blocked', message: 'no db', now: 10 })
  const machine = unitRecord(w).machine
  assert.is.not(machine, unitRecord(w, 'web/1').machine, 'web/1 is on another machine')
  const view = machineModelView(w.c.context, machine)
  assert.equal(readerOf(view).application('web')!.units, ['web/0'])
  assert.is(readerOf(view).unit('web/1'), undefined)
  // What web/0's machine agent has: its own share of the model, and the controller to ask.
  const agentClock = { now: 0 }
  const agent = { model: () => view, submit: w.c.submit.bind(w.c), now: () => agentClock.now, applicationStatus: w.c.applicationStatus.bind(w.c) }
  const logger = createMemoryLogger('unit.web/0')
  const on = (): UnitHookContext => new UnitHookContext({ controller: agent, unit: 'web/0', kind: 'hook', name: 'update-status', local: localState(w, 'web/0'), logger, contextId: `ctx-${++contexts}` })
  assert.equal(await tool(on(), 'status-get', '--application', '--include-data', '--format', 'json'), ok(
    '{"application-status":{"message":"","status":"unknown","status-data":{},"units":{"web/0":{"message":"waiting for machine","status":"waiting","status-data":{}},"web/1":{"message":"no db","status":"blocked","status-data":{}}}}}\n'))
  assert.is(w.c.applicationStatusAsks, 1)
  // Smart format: the application's status word, as before.
  assert.equal(await tool(on(), 'status-get', '--application'), ok('unknown\n'))
  // The own unit's status alone is read from the view, not asked for.
  assert.equal(await tool(on(), 'status-get'), ok('waiting\n'))
  assert.is(w.c.applicationStatusAsks, 2)
  // A non-leader is refused before anything is asked.
  const follower = new UnitHookContext({ controller: { ...agent, model: () => machineModelView(w.c.context, unitRecord(w, 'web/1').machine) }, unit: 'web/1', kind: 'hook', name: 'update-status', local: localState(w, 'web/1'), logger, contextId: `ctx-${++contexts}` })
  assert.equal(await tool(follower, 'status-get', '--application'), fails(1, 'finding application status: this unit is not the leader'))
  assert.is(w.c.applicationStatusAsks, 2)
  // The controller checks the lease on its own clock: web/0's clock still believes, the
  // controller's lease has run out, so it refuses and the tool fails with its one line.
  w.c.clock = 60_000
  assert.equal(await tool(on(), 'status-get', '--application'), fails(1, 'finding application status: memory controller: permission denied: unit "web/0" does not lead'))
  assert.equal(logger.records.filter(r => r.level === 'warning'), [], 'nothing left off')
})

immediate('action-set deep-merges nested keys across calls; action-fail records the message', async () => {
  const w = world()
  const ctx = context(w, { action: { name: 'backup', id: '7', params: {} } })
  assert.equal(await tool(ctx, 'action-set', 'result.path=/tmp/b', 'result.size.bytes=10'), ok())
  assert.equal(await tool(ctx, 'action-set', 'result.size.blocks=1', 'done=yes'), ok())
  assert.equal(ctx.actionResults, { result: { path: '/tmp/b', size: { bytes: '10', blocks: '1' } }, done: 'yes' })
  assert.equal(await tool(ctx, 'action-set', 'done.really=yes'), ok())
  assert.equal(ctx.actionResults.done, { really: 'yes' }, 'a map replaces a value')
  assert.is(ctx.actionFailure, undefined)
  assert.equal(await tool(ctx, 'action-fail', 'disk full'), ok())
  assert.is(ctx.actionFailure, 'disk full')
  assert.equal((await tool(context(w), 'action-set', 'a=b')).code, 1, 'not in an action')
})

immediate.run()
