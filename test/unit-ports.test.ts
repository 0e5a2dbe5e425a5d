import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { AnyActorLogic } from 'xstate'
import { initialRemoteState } from '../actors/unit/remote-state.ts'
import type { HookOutcome } from '../actors/unit/operation.ts'
import { createUnitActor, unitMachine, type UnitActorRef } from '../actors/unit/unit-machine.ts'
import type { UnitPorts } from '../actors/unit/unit-ports.ts'
import { HookLock } from '../runtime/hook-lock.ts'
import type { LocalState } from '../actors/unit/local-state.ts'
import { UnitWorld } from '../sim/unit-world.ts'

/** Ports that keep each unit's saved state and hooks apart, so a mix-up shows. */
function recordingPorts (lock: HookLock): UnitPorts & { saved: Map<string, LocalState>, hooks: string[] } {
  const saved = new Map<string, LocalState>()
  const hooks: string[] = []
  return {
    saved,
    hooks,
    loadLocalState: async unit => saved.get(unit),
    persistLocalState: async ({ unit, local }) => { saved.set(unit, local) },
    acquireHookLock: (unit, acquired) => lock.acquire(unit, acquired),
    runHook: async ({ unit, hook }): Promise<HookOutcome> => { hooks.push(`${unit} ${hook.kind}`); return { kind: 'succeeded' } },
    deployCharm: async () => ({ kind: 'deployed' }),
    runAction: async () => ({ status: 'completed', results: {} }),
    runCommand: async () => ({ exitCode: 0, stdout: '', stderr: '' })
  }
}

function logicOf (actor: UnitActorRef): AnyActorLogic {
  return (actor as unknown as { logic: AnyActorLogic }).logic
}

/** Bounded: the actors only await their (immediate) ports. */
async function untilIdle (actors: UnitActorRef[]): Promise<void> {
  const idle = (a: UnitActorRef): boolean => JSON.stringify(a.getSnapshot().value).includes('"idle"')
  for (let i = 0; i < 2_000 && !actors.every(idle); i++) await new Promise(resolve => setImmediate(resolve))
}

test('two unit actors share the one unit machine, and each one\'s effects reach its own ports', async () => {
  const lock = new HookLock('machine-0')
  const a = recordingPorts(lock)
  const b = recordingPorts(lock)
  const web = createUnitActor(a, { input: { unit: 'web/0', remote: initialRemoteState('local:web-0'), seed: 1 } })
  const db = createUnitActor(b, { input: { unit: 'db/0', remote: initialRemoteState('local:db-0'), seed: 2 } })
  try {
    web.start()
    db.start()
    await untilIdle([web, db])
    assert.ok(logicOf(web) === unitMachine && logicOf(db) === unitMachine, 'no machine definition per unit')
    assert.equal([...a.saved.keys()], ['web/0'])
    assert.equal([...b.saved.keys()], ['db/0'])
    assert.ok(a.hooks.length > 0 && a.hooks.every(h => h.startsWith('web/0 ')), JSON.stringify(a.hooks))
    assert.ok(b.hooks.length > 0 && b.hooks.every(h => h.startsWith('db/0 ')), JSON.stringify(b.hooks))
    assert.ok(a.saved.get('web/0')!.installed && b.saved.get('db/0')!.installed)
  } finally {
    web.stop()
    db.stop()
  }
})

test('a unit actor stopped from outside (kill -9) while holding or waiting for the hook lock gives it back', async () => {
  const lock = new HookLock('machine-0')
  // web/0's install hook never ends: it holds the lock until its actor is stopped.
  const held = { ...recordingPorts(lock), runHook: async (): Promise<HookOutcome> => await new Promise<HookOutcome>(() => {}) }
  const waiting = recordingPorts(lock)
  const other = recordingPorts(lock)
  const web = createUnitActor(held, { input: { unit: 'web/0', remote: initialRemoteState('local:web-0'), seed: 1 } })
  const db = createUnitActor(waiting, { input: { unit: 'db/0', remote: initialRemoteState('local:db-0'), seed: 2 } })
  const kv = createUnitActor(other, { input: { unit: 'kv/0', remote: initialRemoteState('local:kv-0'), seed: 3 } })
  try {
    web.start()
    for (let i = 0; i < 2_000 && lock.holder !== 'web/0'; i++) await new Promise(resolve => setImmediate(resolve))
    assert.is(lock.holder, 'web/0')
    db.start()
    kv.start()
    for (let i = 0; i < 2_000 && lock.waiting < 2; i++) await new Promise(resolve => setImmediate(resolve))
    assert.is(lock.waiting, 2, 'db/0 and kv/0 wait for the lock')
    // db/0 is killed while waiting: it leaves the queue; web/0 is killed while holding: kv/0 gets the lock.
    db.stop()
    assert.is(lock.waiting, 1)
    web.stop()
    await untilIdle([kv])
    assert.is(lock.holder, undefined)
    assert.is(lock.waiting, 0)
    assert.ok(other.saved.get('kv/0')!.installed, 'kv/0 ran its hooks once the killed holder gave the lock back')
    assert.equal(waiting.hooks, [])
  } finally {
    web.stop()
    db.stop()
    kv.stop()
  }
})

test('units of a simulated world, restarted too, all run the shared unit machine', async () => {
  const world = new UnitWorld({ seed: 3 })
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 3, ['0', '0', '1'])
  await world.advance(1_000)
  world.restart('web/1')
  await world.advance(1_000)
  for (const unit of ['web/0', 'web/1', 'web/2']) {
    assert.ok(logicOf(world.actor(unit)) === unitMachine, unit)
    assert.is(world.stateOf(unit), 'idle')
  }
  assert.ok(world.hooks('web/1').includes('install'))
})

test.run()
