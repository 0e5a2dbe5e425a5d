import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { decode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import { ModelStateMachine } from '../runtime/model/model-state-machine.ts'
import type { CommandResult, Entity, ModelCommand, ModelContext } from '../runtime/model/model-types.ts'
import { tableGet, tableKeys } from '../runtime/model/table.ts'
import { entryGroups } from '../actors/controller/model-replica.ts'

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

test(`a leader splits a batch into entries of at most ${limits.modelEntryCommandsMax} commands and ${limits.modelEntryBytesMax} bytes, in order`, () => {
  const forty = Array.from({ length: 40 }, (_, i) => addMachine(`s${i}`))
  assert.equal(entryGroups(forty).map(group => group.length), [limits.modelEntryCommandsMax, 40 - limits.modelEntryCommandsMax])
  assert.equal(entryGroups(forty).flat(), forty)
  // Commands of ~100 KiB each (a placement string): two fit one entry, the third starts another.
  const big = Array.from({ length: 5 }, (_, i) => addMachine(`b${i}`, 'x'.repeat(100 * 1024)))
  assert.equal(entryGroups(big).map(group => group.length), [2, 2, 1])
  assert.equal(entryGroups([addMachine('one')]), [[addMachine('one')]])
})

test.run()
