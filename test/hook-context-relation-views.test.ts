/**
 * What the relation tools show inside `<endpoint>-relation-created` and
 * `<endpoint>-relation-broken`, for a regular and a peer relation, as Juju's hook context
 * builds it, pinned to the exact bytes of each tool's output in the default (smart) and
 * JSON formats.
 *
 * Juju's sources followed:
 * - internal/worker/uniter/runner/context/contextfactory.go (getContextRelations, HookContext):
 *   the context holds every relation the relation state tracker knows, each with the
 *   members its hooks have seen; the created-relations resolver joins the relation before
 *   `-created` runs, so `-created` sees its relation with no members. A relation that is not
 *   a peer relation, is dying or suspended and has no members left is "broken".
 * - internal/worker/uniter/runner/context/context.go (RelationIds, Relation): relation-ids
 *   leaves broken relations out, but `Relation(id)` still finds them, so `-r <id>` works in
 *   `-broken` and relation-list there prints the (empty) member list.
 * - internal/worker/uniter/runner/jujuc/relation-ids.go, relation-list.go, relation-get.go:
 *   the formats; relation-get with no unit in `-created`/`-broken` reads the remote
 *   application's bag.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { hookContextLocal } from '../actors/unit/hook-context-local.ts'
import type { HookInfo } from '../actors/unit/hook-info.ts'
import { initialLocalState, type LocalRelation, type LocalState } from '../actors/unit/local-state.ts'
import { runTool, type ToolResult } from '../agent/hook-tools/run-tool.ts'
import { UnitHookContext } from '../agent/uniter/unit-hook-context.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import type { CharmSummaryInput } from '../runtime/model/model-types.ts'
import { MemoryController } from './support/model-controller.ts'

const webCharm: CharmSummaryInput = { name: 'web', requires: { db: 'mysql' }, peers: { cluster: 'web-peers' } }
const mysqlCharm: CharmSummaryInput = { name: 'mysql', provides: { db: 'mysql' } }

interface World { c: MemoryController, db: number, peer: number }

/** web ×2 and mysql ×2 related on db, everyone in scope; mysql/0 leads mysql and wrote its application bag. */
function world (): World {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:web-0', hash: 'a'.repeat(16), metadata: webCharm })
  c.run('add-charm', { url: 'local:mysql-0', hash: 'b'.repeat(16), metadata: mysqlCharm })
  c.run('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 2 })
  c.run('deploy', { application: 'mysql', charm: 'local:mysql-0', config: {}, constraints: {}, numUnits: 2 })
  const db = c.run('integrate', { a: 'web:db', b: 'mysql:db' }).relationId!
  const peer = readerOf(c.context).application('web')!.relations.find(id => id !== db)!
  for (const unit of ['web/0', 'web/1', 'mysql/0', 'mysql/1']) c.runAs(unit, 'enter-scope', { unit, relationId: db })
  for (const unit of ['web/0', 'web/1']) c.runAs(unit, 'enter-scope', { unit, relationId: peer })
  c.runAs('mysql/0', 'claim-leadership', { application: 'mysql', unit: 'mysql/0', now: 0, durationMs: 60_000 })
  c.runAs('mysql/0', 'relation-settings', { unit: 'mysql/0', relationId: db, application: true, settings: { database: 'shop' } })
  return { c, db, peer }
}

const dbRelation = (w: World, members: string[]): LocalRelation =>
  ({ id: w.db, endpoint: 'db', remoteApplication: 'mysql', peer: false, implicit: false, containerScoped: false, members: Object.fromEntries(members.map(u => [u, 1])), applicationMembers: {} })
const peerRelation = (w: World, members: string[]): LocalRelation =>
  ({ id: w.peer, endpoint: 'cluster', remoteApplication: 'web', peer: true, implicit: false, containerScoped: false, members: Object.fromEntries(members.map(u => [u, 1])), applicationMembers: {} })

function localWith (...relations: LocalRelation[]): LocalState {
  const local = initialLocalState()
  for (const relation of relations) local.relations[String(relation.id)] = relation
  return local
}

let contexts = 0

/** web/0's context for `hook`, built as the unit agent builds it (process-unit-workspace.ts). */
function hookContext (w: World, hook: HookInfo, local: LocalState): UnitHookContext {
  const name = `${hook.endpoint!}-${hook.kind}`
  return new UnitHookContext({
    controller: w.c,
    unit: 'web/0',
    kind: 'hook',
    name,
    relation: { id: hook.relationId!, endpoint: hook.endpoint!, remoteUnit: '', remoteApplication: hook.remoteApplication! },
    local: hookContextLocal(local, hook),
    logger: createMemoryLogger('unit.web/0'),
    contextId: `ctx-${++contexts}`
  })
}

const createdHook = (id: number, endpoint: string, remoteApplication: string, peer: boolean): HookInfo =>
  ({ kind: 'relation-created', relationId: id, endpoint, remoteApplication, relationKind: { peer, implicit: false, containerScoped: false } })

async function tool (ctx: UnitHookContext, name: string, ...args: string[]): Promise<ToolResult> {
  const result = await runTool(ctx, name, args, { cwd: '/' })
  if ('needsStdin' in result) throw new Error(`${name} asked for stdin`)
  return result
}

const ok = (stdout = ''): ToolResult => ({ code: 0, stdout, stderr: '' })

const created = suite('relation views in -relation-created')

created('a regular relation: listed by relation-ids, no units yet, the remote application bag readable, relation-set buffered', async () => {
  const w = world()
  // db is the first relation web/0 sees: nothing is in its local state yet.
  const ctx = hookContext(w, createdHook(w.db, 'db', 'mysql', false), localWith())
  assert.equal(await tool(ctx, 'relation-ids'), ok(`db:${w.db}\n`))
  assert.equal(await tool(ctx, 'relation-ids', '--format', 'json'), ok(`["db:${w.db}"]\n`))
  assert.equal(await tool(ctx, 'relation-ids', 'db', '--format', 'yaml'), ok(`- db:${w.db}\n`))
  // The peer relation is not created yet for this unit: not in its context.
  assert.equal(await tool(ctx, 'relation-ids', 'cluster', '--format', 'json'), ok('[]\n'))
  assert.equal(await tool(ctx, 'relation-list'), ok(''))
  assert.equal(await tool(ctx, 'relation-list', '--format', 'json'), ok('[]\n'))
  assert.equal(await tool(ctx, 'relation-list', '-r', `db:${w.db}`), ok(''))
  assert.equal(await tool(ctx, 'relation-list', '-r', String(w.db), '--format', 'json'), ok('[]\n'))
  assert.equal(await tool(ctx, 'relation-list', '--app'), ok('mysql\n'))
  assert.equal(await tool(ctx, 'relation-get'), ok('database: shop\n'))
  assert.equal(await tool(ctx, 'relation-get', '--format', 'json'), ok('{"database":"shop"}\n'))
  assert.equal(await tool(ctx, 'relation-set', 'ready=no'), ok())
  assert.equal(await tool(ctx, 'relation-get', '-', 'web/0', '--format', 'json'), ok('{"ready":"no"}\n'))
})

created('a peer relation: listed, relation-list -r prints nothing (no "relation not found"), the own application named by --app', async () => {
  const w = world()
  // db was created (and its units joined) before; the peer relation comes next.
  const ctx = hookContext(w, createdHook(w.peer, 'cluster', 'web', true), localWith(dbRelation(w, ['mysql/0', 'mysql/1'])))
  assert.equal(await tool(ctx, 'relation-ids'), ok(`cluster:${w.peer}\n`))
  assert.equal(await tool(ctx, 'relation-ids', '--format', 'json'), ok(`["cluster:${w.peer}"]\n`))
  assert.equal(await tool(ctx, 'relation-ids', 'db'), ok(`db:${w.db}\n`))
  assert.equal(await tool(ctx, 'relation-list', '-r', `cluster:${w.peer}`), ok(''))
  assert.equal(await tool(ctx, 'relation-list', '-r', `cluster:${w.peer}`, '--format', 'json'), ok('[]\n'))
  assert.equal(await tool(ctx, 'relation-list', '-r', `db:${w.db}`), ok('mysql/0\nmysql/1\n'))
  assert.equal(await tool(ctx, 'relation-list', '--app'), ok('web\n'))
  // The own application's bag of a peer relation: readable by every unit, leader or not
  // (apiserver/facades/agent/uniter readLocalApplicationSettings); web/1 leads, not web/0.
  w.c.runAs('web/1', 'claim-leadership', { application: 'web', unit: 'web/1', now: 0, durationMs: 60_000 })
  w.c.runAs('web/1', 'relation-settings', { unit: 'web/1', relationId: w.peer, application: true, settings: { shared: 'yes' } })
  assert.equal(await tool(ctx, 'is-leader'), ok('False\n'))
  assert.equal(await tool(ctx, 'relation-get', '--format', 'json'), ok('{"shared":"yes"}\n'))
  assert.equal(await tool(ctx, 'relation-get', '--app', 'shared', 'web'), ok('yes\n'))
  assert.equal(await tool(ctx, 'relation-set', '--app', 'shared=no'), { code: 1, stdout: '', stderr: 'ERROR cannot write relation settings\n' })
  // Not a regular relation's: there only the leader reads its own application's bag.
  assert.equal(await tool(ctx, 'relation-get', '-r', `db:${w.db}`, '--app', '-', 'web'), { code: 1, stdout: '', stderr: 'ERROR permission denied\n' })
})

created.run()

const broken = suite('relation views in -relation-broken')

broken('a regular relation after remove-relation: left out of relation-ids, -r still finds it, no units, JUJU_RELATION_ID names it', async () => {
  const w = world()
  w.c.run('remove-relation', { relationId: w.db })
  // Every mysql unit has departed (their -departed hooks committed): no members left.
  const hook: HookInfo = { kind: 'relation-broken', relationId: w.db, endpoint: 'db', remoteApplication: 'mysql' }
  const ctx = hookContext(w, hook, localWith(dbRelation(w, []), peerRelation(w, ['web/1'])))
  assert.equal(ctx.relation?.id, w.db, 'the hook is still about db (JUJU_RELATION_ID)')
  assert.equal(await tool(ctx, 'relation-ids'), ok(''))
  assert.equal(await tool(ctx, 'relation-ids', '--format', 'json'), ok('[]\n'))
  assert.equal(await tool(ctx, 'relation-ids', 'cluster'), ok(`cluster:${w.peer}\n`))
  assert.equal(await tool(ctx, 'relation-list'), ok(''))
  assert.equal(await tool(ctx, 'relation-list', '--format', 'json'), ok('[]\n'))
  assert.equal(await tool(ctx, 'relation-list', '-r', `db:${w.db}`, '--format', 'json'), ok('[]\n'))
  assert.equal(await tool(ctx, 'relation-list', '--app'), ok('mysql\n'))
  assert.equal(await tool(ctx, 'relation-get', '--format', 'json'), ok('{"database":"shop"}\n'))
})

broken('a unit being removed: its relations stay alive, so -broken still lists its own relation (not inactive)', async () => {
  const w = world()
  w.c.run('remove-unit', { unit: 'web/0' })
  const hook: HookInfo = { kind: 'relation-broken', relationId: w.db, endpoint: 'db', remoteApplication: 'mysql' }
  const ctx = hookContext(w, hook, localWith(dbRelation(w, []), peerRelation(w, [])))
  // getContextRelations calls a relation broken only when it is dying or suspended.
  assert.equal(await tool(ctx, 'relation-ids', '--format', 'json'), ok(`["db:${w.db}"]\n`))
  assert.equal(await tool(ctx, 'relation-list', '--format', 'json'), ok('[]\n'))
  // A peer relation is never broken: listed with its last members gone.
  assert.equal(await tool(ctx, 'relation-ids', 'cluster', '--format', 'json'), ok(`["cluster:${w.peer}"]\n`))
})

broken.run()
