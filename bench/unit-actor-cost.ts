import { initialRemoteState } from '../actors/unit/remote-state.ts'
import type { UnitPorts } from '../actors/unit/unit-ports.ts'
import { createUnitActor } from '../actors/unit/unit-machine.ts'
import { encode } from '../runtime/codec.ts'
import { SimClock } from '../sim/sim-clock.ts'

/**
 * `node --import tsx bench/unit-actor-cost.ts [hooks]`: the CPU the shipping unit actor
 * (actors/unit/unit-machine.ts, as a unit host creates it) costs per hook on its own, with
 * effects that answer at once: each round changes the remote config hash, so the actor goes
 * idle → resolving → one `config-changed` hook through its three persisted steps (the save
 * encodes the local state as the store does) → idle. A swarm seed is too noisy on a busy
 * machine to see a change of a few per cent in the unit side; this isolates it. Prints
 * CPU-us per hook (after a warm-up) and, from a second, inspected actor, the XState
 * snapshots, microsteps and events per hook, which move with the statechart's shape.
 */
const rounds = Number(process.argv[2] ?? 3000)
const warmup = Math.min(300, Math.floor(rounds / 4))

interface Run { hooks: number, cpuUs: number, counts: Record<string, number> }

async function run (rounds: number, counted: boolean): Promise<Run> {
  let hooks = 0
  const ports: UnitPorts = {
    loadLocalState: async () => undefined,
    persistLocalState: async ({ local }) => { encode(local) },
    acquireHookLock: (_unit, acquired) => { acquired(); return () => {} },
    runHook: async () => { hooks++; return { kind: 'succeeded' } },
    deployCharm: async () => ({ kind: 'deployed' }),
    runAction: async () => ({ status: 'completed', results: {} }),
    runCommand: async () => ({ exitCode: 0, stdout: '', stderr: '' })
  }
  const counts: Record<string, number> = {}
  const inspect = (event: { type: string }): void => { counts[event.type] = (counts[event.type] ?? 0) + 1 }
  const remote = initialRemoteState('local:kv-0')
  const actor = createUnitActor(ports, { clock: new SimClock(), ...(counted ? { inspect } : {}), input: { unit: 'kv/0', remote, seed: 1 } })
  // Every promise the round started settles before the next round (the effects answer at once).
  const settle = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }
  actor.start()
  await settle()
  let started = process.cpuUsage()
  let hooksBefore = 0
  for (let round = 0; round < rounds; round++) {
    if (round === warmup) {
      started = process.cpuUsage()
      hooksBefore = hooks
      for (const key of Object.keys(counts)) counts[key] = 0
    }
    actor.send({ type: 'remote.changed', remote: { ...remote, configHash: `config-${round}` } })
    await settle()
  }
  const used = process.cpuUsage(started)
  const state = JSON.stringify(actor.getSnapshot().value)
  actor.stop()
  if (!state.includes('"uniter":"idle"')) throw new Error(`unit-actor-cost: the actor ended in ${state}, not idle`)
  return { hooks: hooks - hooksBefore, cpuUs: used.user + used.system, counts }
}

const timed = await run(rounds, false)
const counted = await run(Math.min(rounds, 600), true)
const per = (name: string): string => ((counted.counts[name] ?? 0) / counted.hooks).toFixed(1)
console.log(`${timed.hooks} hooks: ${(timed.cpuUs / timed.hooks).toFixed(1)} CPU-us a hook; per hook ${per('@xstate.snapshot')} snapshots, ${per('@xstate.microstep')} microsteps, ${per('@xstate.event')} events, ${per('@xstate.actor')} actors started`)
