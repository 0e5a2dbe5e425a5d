/**
 * The model's backfills (agent/controller/model-backfills.ts): a controller copies into its
 * own stores every charm archive, resource file and agent bundle the model names, as
 * Juju's joining controllers take the whole blob store. Only the charm archives used to be
 * copied, so a resource or bundle uploaded to a controller that then died was gone.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { agentStoreHashes, charmStoreHashes, ModelBackfills, type BackfilledStore } from '../agent/controller/model-backfills.ts'
import type { AgentBinaryRecord } from '../runtime/model/agent-binaries.ts'
import type { CharmRecord } from '../runtime/model/charm-types.ts'
import type { ApplicationRecord, ModelContext } from '../runtime/model/model-types.ts'
import { emptyTable, tableFrom, tableWith, type Table } from '../runtime/model/table.ts'
import { ManualClock } from './support/manual-clock.ts'

type Stored = Pick<ModelContext, 'charms' | 'applications' | 'agentBinaries'>

const settle = async (): Promise<void> => { for (let i = 0; i < 20; i++) await new Promise(resolve => setImmediate(resolve)) }

// Only the fields the backfill reads; the records are otherwise opaque to it.
const charm = (hash: string): CharmRecord => ({ hash }) as Partial<CharmRecord> as CharmRecord
const app = (scale: number, resources: Record<string, string>): ApplicationRecord => ({
  scale,
  ...(Object.keys(resources).length === 0 ? {} : { resources: Object.fromEntries(Object.entries(resources).map(([name, hash]) => [name, { revision: 1, hash, size: 1 }])) })
}) as Partial<ApplicationRecord> as ApplicationRecord
const bundle = (hash: string): AgentBinaryRecord => ({ version: '0.1.1', platform: 'linux/x64', hash, size: 1 })

/** A store that holds `heldAtStart` and copies from peers that have `peersHave`, recording each fetch. */
function store (heldAtStart: string[], peersHave: Set<string>): BackfilledStore & { held: BackfilledStore['held'], has: Set<string>, fetched: string[] } {
  const has = new Set(heldAtStart)
  const fetched: string[] = []
  return {
    has,
    fetched,
    held: async hash => has.has(hash),
    fetch: async hash => {
      fetched.push(hash)
      if (!peersHave.has(hash)) return false
      has.add(hash)
      return true
    }
  }
}

test('the charm store is named its charms\' archives and its applications\' resource files; the agent store its bundles', () => {
  const model: Stored = {
    charms: tableFrom([['local:kv-1', charm('c1')], ['local:web-1', charm('c2')]]),
    applications: tableFrom([['kv', app(1, { data: 'r1', extra: 'c1' })], ['web', app(1, {})]]),
    agentBinaries: tableFrom([['0.1.1/linux/x64', bundle('b1')]])
  }
  assert.equal(charmStoreHashes(model).sort(), ['c1', 'c2', 'r1'], 'a resource whose bytes equal an archive is named once')
  assert.equal(agentStoreHashes(model), ['b1'])
  assert.equal(agentStoreHashes({}), [], 'a model before any upgrade-model names no bundle')
})

test('a controller that joined late copies resources and agent bundles too, and passes again only when the named content changes', async () => {
  const clock = new ManualClock()
  const peersHave = new Set(['c1', 'r1', 'r2', 'b1'])
  const charms = store(['c1'], peersHave)
  const agentBinaries = store([], peersHave)
  let model: Stored = {
    charms: tableFrom([['local:kv-1', charm('c1')]]),
    applications: tableFrom([['kv', app(1, { data: 'r1' })]]),
    agentBinaries: tableFrom([['0.1.1/linux/x64', bundle('b1')]])
  }
  const backfills = new ModelBackfills({ clock, model: () => model, charms, agentBinaries })
  backfills.start()
  clock.advance(0)
  await settle()
  assert.equal(charms.fetched, ['r1'], 'the resource file is copied; the archive it held is not asked for')
  assert.equal(agentBinaries.fetched, ['b1'])
  assert.ok(charms.has.has('r1') && agentBinaries.has.has('b1'))
  assert.is(clock.pending, 0, 'nothing missing: no pass pending')

  // A scale change replaces the applications table but names no new content: no pass.
  model = { ...model, applications: tableWith(model.applications, 'kv', app(2, { data: 'r1' })) }
  backfills.applied()
  assert.is(clock.pending, 0, 'no pass for a change that names nothing new')

  // attach-resource: new content under the same name is copied at once.
  model = { ...model, applications: tableWith(model.applications, 'kv', app(2, { data: 'r2' })) }
  backfills.applied()
  clock.advance(0)
  await settle()
  assert.equal(charms.fetched, ['r1', 'r2'])
  assert.equal(agentBinaries.fetched, ['b1'], 'the agent store is not passed over for a charm store change')
  backfills.stop()
  assert.is(clock.pending, 0)
})

test('a bundle no peer has yet stays missing and is asked for again at the interval, not lost', async () => {
  const clock = new ManualClock()
  const peersHave = new Set<string>()
  const agentBinaries = store([], peersHave)
  const empty: Table<CharmRecord> = emptyTable()
  const model: Stored = { charms: empty, applications: emptyTable(), agentBinaries: tableFrom([['0.1.1/linux/x64', bundle('b1')]]) }
  const backfills = new ModelBackfills({ clock, model: () => model, charms: store([], peersHave), agentBinaries })
  backfills.start()
  clock.advance(0)
  await settle()
  assert.equal(agentBinaries.fetched, ['b1'])
  assert.is(clock.pending, 1, 'a pass is scheduled while the bundle is missing')
  peersHave.add('b1')
  clock.advance(60_000)
  await settle()
  assert.equal(agentBinaries.fetched, ['b1', 'b1'])
  assert.ok(agentBinaries.has.has('b1'))
  backfills.stop()
})

test.run()
