import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { decode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import { ModelStateMachine } from '../runtime/model/model-state-machine.ts'
import type { CommandResult, Entity, ModelCommand, ModelContext } from '../runtime/model/model-types.ts'
import { forEachChangedKey, tableEntries, tableFrom, tableGet, tableKeys, tableShapeProblem } from '../runtime/model/table.ts'
import { snapshotModel } from '../runtime/model/model-snapshot.ts'
import { entryRuns } from '../runtime/raft/proposal-queue.ts'
import { encode } from '../runtime/codec.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'
import type { Entry } from '../runtime/raft/raft-types.ts'

/**
 * `apply-batch` (runtime/model/apply/batch-commands.ts): a machine agent's batch committed
 * as one Raft entry. Juju's agents send many entities in one bulk API call and get one
 * result per entity, each succeeding or failing on its own (juju/juju
 * apiserver/common/setstatus.go: SetStatus loops over args.Entities, one ErrorResult each);
 * here each command also keeps its own request id and exactly-once dedup.
 */

const admin: Entity = { kind: 'user', name: 'admin' }
const controller: Entity = { kind: 'controller', id: '1' }
const addMachine = (requestId: string, placement?: string): ModelCommand =>
  ({ type: 'add-machine', requestId, proposer: admin, ...(placement === undefined ? {} : { placement }) })
const removeMachine = (requestId: string, machine: string): ModelCommand => ({ type: 'remove-machine', machine, requestId, proposer: admin })
const batch = (commands: ModelCommand[], proposer: Entity = controller): ModelCommand => ({ type: 'apply-batch', commands, requestId: 'c1/batch', proposer })

function apply (context: ModelContext, command: ModelCommand, index: number): { context: ModelContext, result: CommandResult, deltas: string[] } {
  const outcome = applyCommand(context, command, { index, term: 2 })
  return { context: outcome.context, result: outcome.result, deltas: outcome.deltas.map(d => d.key) }
}

function results (result: CommandResult): readonly CommandResult[] {
  assert.ok(result.ok, JSON.stringify(result))
  return result.ok ? result.results ?? [] : []
}

test('a batch applies its commands in order at its one index, each with its own result; a refused one changes nothing of the others', () => {
  const { context, result, deltas } = apply(emptyModel(), batch([addMachine('a'), removeMachine('b', '7'), addMachine('c')]), 5)
  assert.equal(results(result), [
    { ok: true, index: 5, machines: ['0'] },
    { ok: false, index: 5, error: 'controller: cannot remove machine "7": machine "7" not found' },
    { ok: true, index: 5, machines: ['1'] }
  ])
  assert.is(context.revision, 5)
  assert.is(context.term, 2)
  assert.equal([...tableKeys(context.machines)].sort(), ['0', '1'])
  assert.equal(deltas, ['machine/0', 'machine/0/status', 'machine/1', 'machine/1/status'], 'the deltas of the commands that applied')
})

test('each command of a batch is deduplicated by its own request id: within the batch, and when the batch comes again split differently', () => {
  const first = apply(emptyModel(), batch([addMachine('a'), addMachine('a'), addMachine('b')]), 3)
  assert.equal(results(first.result).map(r => r.ok && r.machines), [['0'], ['0'], ['1']], 'the repeat inside the batch gets the first result')
  // A retry after a lost reply: the same commands, now two entries, plus one new command.
  const again = apply(first.context, batch([addMachine('a'), addMachine('c')]), 4)
  assert.equal(results(again.result).map(r => r.ok && r.machines), [['0'], ['2']])
  const last = apply(again.context, addMachine('b'), 5)
  assert.equal(last.result, { ok: true, index: 3, machines: ['1'] }, 'a single command retried after its batch: the batch\'s result')
  assert.equal([...tableKeys(last.context.machines)].sort(), ['0', '1', '2'])
  assert.is(tableGet(last.context.requests.current, 'controller-1 c1/batch'), undefined, 'the batch\'s own id is not remembered')
})

test('a batch changes in place only what its own commands copied: the context it started from keeps every byte, and the result is whole', () => {
  // 31 machines first, so the batch's writes land in nodes the committed context holds.
  let base = emptyModel()
  for (let i = 0; i < 31; i++) base = apply(base, addMachine(`m${i}`), i + 1).context
  const before = encode(snapshotModel(base))
  // A full batch: new machines (many keys share upper nodes), refusals and repeats between them.
  const commands: ModelCommand[] = []
  for (let i = 0; i < limits.modelEntryCommandsMax; i++) {
    commands.push(i % 8 === 3 ? removeMachine(`r${i}`, '999') : i % 8 === 5 ? addMachine(`m${i - 1}`) : addMachine(`n${i}`))
  }
  const first = apply(base, batch(commands), 100)
  const second = apply(base, batch(commands), 100)
  assert.equal(encode(snapshotModel(base)), before, 'the committed context is unchanged, however its nodes were shared')
  assert.equal(encode(snapshotModel(first.context)), encode(snapshotModel(second.context)), 'the same batch on the same context: the same bytes')
  const ok = results(first.result).filter(r => r.ok).length
  assert.is(ok, limits.modelEntryCommandsMax - 4, 'every command but the four refusals applied')
  assert.is(first.context.machines.size, 31 + limits.modelEntryCommandsMax - 8, 'new machines: not the refusals, not the repeats')
  assert.is(tableShapeProblem(first.context.machines), undefined, 'every key where its hash puts it, and the size counts the entries')
  assert.equal(encode(first.context.machines), encode(tableFrom(tableEntries(first.context.machines))), 'no empty node is kept: the shape inserting the keys afresh gives')
  // What watchers read: the keys changed since the committed context, and only those.
  const changed: string[] = []
  forEachChangedKey(base.keyRevisions, first.context.keyRevisions, key => { changed.push(key) })
  assert.equal(changed.sort(), [...new Set(first.deltas)].sort())
  for (let i = 0; i < 31; i++) assert.is(tableGet(first.context.requests.current, `user-admin m${i}`)?.type, 'add-machine', 'earlier requests are still remembered')
})

test('a batch from anyone but a controller, empty, too long or inside a batch is refused, one line each', () => {
  const model = emptyModel()
  const refused = (command: ModelCommand, error: string): void => {
    const { context, result, deltas } = apply(model, command, 1)
    assert.equal(result, { ok: false, index: 1, error })
    assert.equal(deltas, [])
    assert.equal([...tableKeys(context.machines)].sort(), [])
  }
  refused(batch([addMachine('a')], admin), 'controller: cannot apply a batch of 1 commands: only a controller proposes a batch, not "user"')
  refused(batch([]), `controller: cannot apply a batch of 0 commands: expected 1 to ${limits.modelEntryCommandsMax} commands, got 0`)
  const many = Array.from({ length: limits.modelEntryCommandsMax + 1 }, (_, i) => addMachine(`m${i}`))
  refused(batch(many), `controller: cannot apply a batch of ${many.length} commands: expected 1 to ${limits.modelEntryCommandsMax} commands, got ${many.length}`)
  refused({ ...batch([]), commands: 'x' } as unknown as ModelCommand, 'controller: cannot apply a batch of 0 commands: expected a list of commands, got "x"')
  const nested = apply(model, batch([batch([addMachine('a')]), addMachine('b')]), 1)
  assert.equal(results(nested.result), [
    { ok: false, index: 1, error: 'controller: cannot apply a batch of 1 commands: a batch cannot hold another batch' },
    { ok: true, index: 1, machines: ['0'] }
  ])
})

test('the model state machine commits a batch as one entry and hands back every result', () => {
  const machine = new ModelStateMachine()
  const bytes = machine.encodeCommand(batch([addMachine('a'), addMachine('b')]))
  assert.is((decode(bytes, 'test') as { type: string }).type, 'apply-batch')
  const result = machine.apply(bytes, { index: 1, term: 1 })
  assert.equal(results(result).map(r => r.ok), [true, true])
  assert.is(machine.state().revision, 1)
  assert.equal([...tableKeys(machine.state().machines)].sort(), ['0', '1'])
})

/** The runs entryRuns makes of `commands` with the model's grouping, as their lengths. */
function runLengths (commands: readonly ModelCommand[]): number[] {
  const grouping = new ModelStateMachine().grouping
  const waiting = commands.map(command => ({ command, data: encode(command), alone: !grouping.groupable(command) }))
  return entryRuns(waiting, grouping).map(run => run.length)
}

test(`a leader groups proposals into entries of at most ${limits.modelEntryCommandsMax} commands and ${limits.modelEntryBytesMax} bytes, in order; a batch stays alone`, () => {
  const forty = Array.from({ length: 40 }, (_, i) => addMachine(`s${i}`))
  assert.equal(runLengths(forty), [limits.modelEntryCommandsMax, 40 - limits.modelEntryCommandsMax])
  // Commands of ~100 KiB each (a placement string): two fit one entry, the third starts another.
  const big = Array.from({ length: 5 }, (_, i) => addMachine(`b${i}`, 'x'.repeat(100 * 1024)))
  assert.equal(runLengths(big), [2, 2, 1])
  assert.equal(runLengths([addMachine('one')]), [1])
  assert.equal(runLengths([addMachine('a'), batch([addMachine('b')]), addMachine('c'), addMachine('d')]), [1, 1, 2], 'a batch is never put in a batch')
})

test('a grouped entry is the apply-batch of its commands, built from their encodings, and splits back into their results', () => {
  const machine = new ModelStateMachine('1')
  for (const count of [2, 15, 16, limits.modelEntryCommandsMax]) {
    const commands = Array.from({ length: count }, (_, i) => addMachine(`g${count}-${i}`))
    const bytes = machine.grouping.encodeGroup(commands.map(command => machine.encodeCommand(command)))
    assert.equal(decode(bytes, 'test'), { type: 'apply-batch', requestId: '1/group', proposer: controller, commands }, `${count} commands`)
  }
  const fresh = new ModelStateMachine('c1')
  const two = [addMachine('x'), removeMachine('y', '9')]
  const result = fresh.apply(fresh.grouping.encodeGroup(two.map(command => fresh.encodeCommand(command))), { index: 4, term: 1 })
  assert.equal(fresh.grouping.splitResult(result, 2), [
    { ok: true, index: 4, machines: ['0'] },
    { ok: false, index: 4, error: 'controller: cannot remove machine "9": machine "9" not found' }
  ])
  const refused: CommandResult = { ok: false, index: 4, error: 'no' }
  assert.equal(fresh.grouping.splitResult(refused, 2), [refused, refused], 'a refusal of the whole entry is each command\'s')
})

// Group commit (runtime/raft/proposal-queue.ts), as etcd's server batches the proposals
// that wait while its raft loop handles a Ready: here they also share one entry.
test('proposals made while the previous one is on its way to a commit share one entry, and each gets its own result', async () => {
  const entries: Entry[] = []
  const g = await SimControllerGroup.create(new Simulation({ seed: 3 }), { size: 3 })
  assert.ok(await g.runUntil(() => g.leader() !== undefined, 5_000), 'a leader')
  const leader = g.leader()!
  const follower = g.hosts().find(h => h.id !== leader.id)!
  const results: CommandResult[] = []
  await g.runFor(500)
  const before = leader.persistedLog().lastIndex()
  const first = leader.propose(addMachine('first'))
  assert.ok(await g.runUntil(() => leader.persistedLog().lastIndex() > before, 1_000, 1), 'the first appended')
  assert.ok(leader.appliedIndex < leader.persistedLog().lastIndex(), 'and not yet committed')
  // While the first is on its way to a commit, these wait for it, then go together.
  const rest = leader.proposeAll([addMachine('r1'), removeMachine('r2', '42'), addMachine('r3'), addMachine('first')])
  for (const [i, p] of [first, ...rest].entries()) void p.then(result => { results[i] = result })
  assert.ok(await g.runUntil(() => results.filter(r => r !== undefined).length === 5 && follower.appliedIndex >= leader.appliedIndex, 5_000), 'all five applied')
  assert.equal(results.map(r => r.ok ? r.machines : r.error), [
    ['0'], ['1'], 'controller: cannot remove machine "42": machine "42" not found', ['2'], ['0']
  ], 'each its own result; the repeated request id gets the first one\'s')
  for (let index = follower.persistedLog().firstIndex(); index <= follower.appliedIndex; index++) entries.push(...follower.persistedLog().entries(index, index + 1, Infinity))
  const carried = entries.filter(e => e.type === 'normal' && e.data.length > 0).map(e => decode(e.data, 'test') as ModelCommand)
    .filter(c => c.type === 'apply-batch' || c.type.endsWith('-machine'))
  assert.equal(carried.map(c => c.type === 'apply-batch' ? c.commands.length : 1), [1, 4], 'the four proposed while the first was in flight went as one entry')
  assert.equal([...tableKeys(follower.state().machines)].sort(), ['0', '1', '2'], 'a follower applied the same')
  await g.stop()
})

test.run()
