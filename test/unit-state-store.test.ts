import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createActor, fromPromise } from 'xstate'
import { LevelStorage } from '../agent/level-storage.ts'
import { SimStorage } from '../sim/sim-storage.ts'
import { createUnitStateStore, unitStateActors, unitStateKey } from '../actors/unit/unit-state-store.ts'
import { initialLocalState, type LocalState } from '../actors/unit/local-state.ts'
import { unitMachine } from '../actors/unit/unit-machine.ts'
import { initialRemoteState } from '../actors/unit/remote-state.ts'
import type { HookOutcome } from '../actors/unit/operation.ts'
import { encode } from '../runtime/codec.ts'
import type { Storage } from '../runtime/storage.ts'

async function rejectsWith (run: () => Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await run()
  } catch (error) {
    assert.match(String((error as Error).message), pattern)
    return
  }
  assert.unreachable(`expected a rejection matching ${String(pattern)}`)
}

const sample: LocalState = {
  ...initialLocalState(),
  installed: true,
  operation: { kind: 'run-hook', step: 'pending', hook: { kind: 'relation-joined', relationId: 3, endpoint: 'db', remoteUnit: 'db/0', changeVersion: 2 } },
  charm: { url: 'local:kv-1', modifiedVersion: 0 },
  relations: { 3: { id: 3, endpoint: 'db', remoteApplication: 'db', peer: false, implicit: false, containerScoped: false, members: { 'db/0': 2 }, applicationMembers: {}, changedPending: 'db/0' } },
  charmState: { token: 'abc' }
}

async function roundTrip (storage: Storage): Promise<void> {
  const store = createUnitStateStore(storage)
  assert.is(await store.load('kv/0'), undefined)
  await store.save('kv/0', sample)
  assert.equal(await store.load('kv/0'), sample)
}

test('unit state round-trips through SimStorage', async () => {
  await roundTrip(new SimStorage())
})

test('unit state round-trips through LevelDB (classic-level) and survives reopening', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cantrip-unit-state-'))
  try {
    const storage = await LevelStorage.open(dir)
    await roundTrip(storage)
    await storage.close()
    const reopened = await LevelStorage.open(dir)
    assert.equal(await createUnitStateStore(reopened).load('kv/0'), sample)
    await reopened.close()
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('corrupt or misshapen state is refused with one clear line naming the unit', async () => {
  const storage = new SimStorage()
  const store = createUnitStateStore(storage)
  await storage.put(unitStateKey('kv/0'), new Uint8Array([0xc1, 0xff, 0x00]), { sync: true })
  await rejectsWith(() => store.load('kv/0'), /unit state "kv\/0": expected a msgpack value, got 3 bytes/)
  await storage.put(unitStateKey('kv/1'), encode({ ...sample, operation: { kind: 'dance', step: 'queued' } }), { sync: true })
  await rejectsWith(() => store.load('kv/1'), /unit state "kv\/1": expected operation.kind one of install\|upgrade\|run-hook\|run-action\|continue, got "dance"/)
  await storage.put(unitStateKey('kv/2'), encode({ ...sample, installed: 'yes' }), { sync: true })
  await rejectsWith(() => store.load('kv/2'), /expected boolean field "installed", got "yes"/)
})

test('a unit actor whose state cannot be loaded stops in failed with the reason, running nothing', async () => {
  const storage = new SimStorage()
  await storage.put(unitStateKey('kv/0'), new Uint8Array([0xc1, 0xff, 0x00]), { sync: true })
  let hooks = 0
  const actor = createActor(unitMachine.provide({
    actors: {
      ...unitStateActors(createUnitStateStore(storage)),
      runHook: fromPromise(async (): Promise<HookOutcome> => { hooks++; return { kind: 'succeeded' } })
    }
  }), { input: { unit: 'kv/0', remote: initialRemoteState('local:kv-0'), seed: 1 } }).start()
  for (let i = 0; i < 20 && actor.getSnapshot().status === 'active'; i++) await Promise.resolve()
  assert.is(actor.getSnapshot().value, 'failed', JSON.stringify(actor.getSnapshot().value))
  assert.match(actor.getSnapshot().context.failure!, 'unit state "kv/0": expected a msgpack value')
  assert.is(hooks, 0)
})

test('a side effect that is not provided fails loudly with what to provide', async () => {
  const actor = createActor(unitMachine, { input: { unit: 'kv/0', remote: initialRemoteState('local:kv-0'), seed: 1 } }).start()
  for (let i = 0; i < 20 && actor.getSnapshot().status === 'active'; i++) await Promise.resolve()
  assert.is(actor.getSnapshot().value, 'failed')
  assert.match(actor.getSnapshot().context.failure!, 'unit actor "loadLocalState": not provided')
})

test.run()
