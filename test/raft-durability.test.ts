/**
 * Durability on the real disk: three controllers on LevelDB (agent/level-storage.ts)
 * commit commands, then all three lose power at once. The disk under each is
 * test/support/power-cut-level.ts, which keeps only what was synced: whatever a write
 * without `sync: true` changed after the last synced write is undone at the cut. After a
 * restart from those directories every acknowledged command must be there, and no
 * controller's term may have gone back (a vote it gave must not be forgotten).
 *
 * The same run on a disk that ignores `sync` (as `sync: false` in LevelStorage would)
 * must lose acknowledged commands: that is the proof this test notices unsynced writes.
 * Mutation-checked by hand, too: with `sync: false` hard-coded in LevelStorage.put/del/
 * batch the first test fails.
 */
import '../runtime/polyfill.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ModelReplica } from '../actors/controller/model-replica.ts'
import { LevelStorage } from '../agent/level-storage.ts'
import type { ModelCommand } from '../runtime/model/model-types.ts'
import { SeededRandom } from '../runtime/random.ts'
import { SimClock } from '../sim/sim-clock.ts'
import { SimNetwork } from '../sim/sim-network.ts'
import { PowerCutLevel } from './support/power-cut-level.ts'

const ids = ['c0', 'c1', 'c2']
const admin = { kind: 'user', name: 'admin' } as const
const commandCount = 12
/** Every wait in this test is bounded by this. */
const waitMsMax = 20_000

async function waitFor (what: string, condition: () => boolean): Promise<void> {
  const until = performance.now() + waitMsMax
  while (!condition()) {
    if (performance.now() > until) throw new Error(`raft durability test: timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

function addMachine (n: number): ModelCommand {
  return { type: 'add-machine', requestId: `machine-${n}`, proposer: admin }
}

interface PowerCutRound {
  acknowledged: number
  /** Machines in the model after the restart (a linearizable read). */
  survived: number
  termsBefore: number[]
  termsAfter: number[]
  writes: { synced: number, unsynced: number, lost: number }
}

/** Commits `commandCount` commands, cuts the power of all three controllers, restarts them. */
async function powerCutRound (ignoreSync: boolean): Promise<PowerCutRound> {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-durability-'))
  const clock = new SimClock()
  const started = performance.now()
  // The simulated clock follows the wall clock, so hosts, network and disk share real time.
  const driver = setInterval(() => { clock.advanceTo(Math.max(clock.now(), performance.now() - started)) }, 2)
  const network = new SimNetwork({ clock, random: new SeededRandom(11), latency: { kind: 'uniform', minMs: 0, maxMs: 2 } })
  const nodes: Array<ModelReplica | undefined> = ids.map(() => undefined)
  const storages: Array<LevelStorage | undefined> = ids.map(() => undefined)
  const disks: PowerCutLevel[] = []
  const start = async (i: number, disk: boolean): Promise<void> => {
    storages[i] = await LevelStorage.open(join(root, ids[i]!), disk
      ? { wrap: db => { const d = new PowerCutLevel(db, { ignoreSync }); disks[i] = d; return d } }
      : {})
    nodes[i] = await ModelReplica.start({
      id: ids[i]!,
      peers: ids,
      storage: storages[i],
      transport: network.transport(ids[i]!),
      clock,
      random: new SeededRandom(200 + i),
      tickMs: 20,
      electionTicks: 10,
      heartbeatTicks: 2,
      leaseDurationMs: 3_000
    })
  }
  const leader = (): ModelReplica | undefined => nodes.find(n => n !== undefined && n.host.role === 'leader')
  try {
    for (let i = 0; i < ids.length; i++) await start(i, true)
    await waitFor('a leader', () => leader() !== undefined)
    let acknowledged = 0
    for (let n = 0; n < commandCount; n++) {
      const result = await leader()!.submit(addMachine(n))
      assert.ok(result.ok, `machine ${n}: ${JSON.stringify(result)}`)
      acknowledged++
    }
    const termsBefore = nodes.map(node => node!.host.term)

    // All three lose power at once: nothing more is sent or written, unsynced writes go.
    let lost = 0
    for (let i = 0; i < ids.length; i++) {
      nodes[i]!.crash()
      network.crash(ids[i]!)
      lost += await disks[i]!.powerCut()
      nodes[i] = undefined
      storages[i] = undefined
    }
    const writes = {
      synced: disks.reduce((sum, d) => sum + d.synced, 0),
      unsynced: disks.reduce((sum, d) => sum + d.unsynced, 0),
      lost
    }

    for (let i = 0; i < ids.length; i++) await start(i, false)
    const termsAfter = nodes.map(node => node!.host.persistedLog().hardState().term)
    await waitFor('a leader after the power cut', () => leader() !== undefined)
    const model = await leader()!.read()
    return { acknowledged, survived: model.machines.size, termsBefore, termsAfter, writes }
  } finally {
    for (let i = 0; i < ids.length; i++) {
      await nodes[i]?.stop()
      await storages[i]?.close()
    }
    clearInterval(driver)
    rmSync(root, { recursive: true, force: true })
  }
}

test('a power cut on all three controllers loses no acknowledged command and no term', async () => {
  const round = await powerCutRound(false)
  assert.is(round.acknowledged, commandCount)
  assert.is(round.survived, commandCount, `acknowledged ${round.acknowledged}, found ${round.survived} after the cut (${JSON.stringify(round.writes)})`)
  assert.ok(round.writes.synced > 0, `synced writes: ${JSON.stringify(round.writes)}`)
  round.termsAfter.forEach((term, i) => {
    assert.ok(term >= round.termsBefore[i]!, `${ids[i]!}: term ${round.termsBefore[i]!} before the cut, ${term} on disk after it`)
  })
})

test('the same power cut on disks that ignore sync loses acknowledged commands: the test above would notice', async () => {
  const round = await powerCutRound(true)
  assert.is(round.writes.synced, 0)
  assert.ok(round.writes.lost > 0, JSON.stringify(round.writes))
  assert.ok(round.survived < round.acknowledged, `acknowledged ${round.acknowledged}, still found ${round.survived}`)
})

test.run()
