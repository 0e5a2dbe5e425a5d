/**
 * Leadership claims at the leading controller (actors/controller/lease-claim-gate.ts), as
 * Juju's lease manager takes them: a claim that another unit's lease refuses is answered
 * from the applied leases and never proposed; of a burst of claims for one free lease
 * exactly one is committed and the rest are answered after it, with the line applying
 * them would have given; the holder's own claim (an extension) and a claim after expiry
 * are proposed as before.
 */
import '../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { controllerProposeProtocol } from '../actors/controller/model-replica.ts'
import { decode, encode } from '../runtime/codec.ts'
import { entityTag } from '../runtime/model/model-apply.ts'
import { recallRequest } from '../runtime/model/model-draft.ts'
import type { CommandResult, Entity, ModelCommand } from '../runtime/model/model-types.ts'
import { tableGet } from '../runtime/model/table.ts'
import { utcTimestamp } from '../runtime/utc-time.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'

const admin = { kind: 'user', name: 'admin' } as const
const identify = (peer: string): Entity | undefined => /^machine-\d+$/.test(peer) ? { kind: 'machine', id: peer.slice('machine-'.length) } : undefined
const durationMs = 60_000

/** Three controllers and `web` with four units: web/0 and web/1 on machine 0, web/2 and web/3 on machine 1. */
async function setup (): Promise<SimControllerGroup> {
  const group = await SimControllerGroup.create(new Simulation({ seed: 5 }), { size: 3, hostOptions: () => ({ agents: { modelUuid: 'model-1', identify } }) })
  assert.ok(await group.runUntil(() => group.leader() !== undefined, 3_000))
  let n = 0
  for (const body of [
    { type: 'add-machine' }, { type: 'add-machine' },
    { type: 'add-charm', url: 'local:web-0', hash: 'ab'.repeat(8), metadata: { name: 'web' } },
    { type: 'deploy', application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 4, placement: ['0', '0', '1', '1'] }
  ]) {
    let outcome: CommandResult | undefined
    void group.leaderNode()!.submit({ ...body, requestId: `setup-${++n}`, proposer: admin } as unknown as ModelCommand).then(r => { outcome = r })
    assert.ok(await group.runUntil(() => outcome !== undefined, 5_000), 'setup command answered')
    assert.ok(outcome!.ok, JSON.stringify(outcome))
  }
  return group
}

function claim (unit: string, now: number, requestId = `claim-${unit}-${now}`): ModelCommand {
  return { type: 'claim-leadership', application: 'web', unit, now, durationMs, requestId, proposer: { kind: 'unit', name: unit } }
}

type BatchReply = { ok: boolean, results?: Array<{ ok: boolean, result?: CommandResult }> }

/** Sends `batch` to the leader as machine `machine`'s agent; resolves with each command's result. */
function sendBatch (group: SimControllerGroup, machine: string, batch: ModelCommand[]): Promise<CommandResult[]> {
  const leader = group.leader()!.id
  return group.network.transport(`machine-${machine}`).request(leader, controllerProposeProtocol, encode({ batch }, 'test'), { timeoutMs: 5_000 })
    .then(bytes => {
      const reply = decode(bytes, 'test') as BatchReply
      assert.ok(reply.ok && reply.results !== undefined, JSON.stringify(reply))
      return reply.results.map(r => { assert.ok(r.ok, JSON.stringify(r)); return r.result! })
    })
}

async function settle<T> (group: SimControllerGroup, promise: Promise<T>): Promise<T> {
  let outcome: { value: T } | undefined
  void promise.then(value => { outcome = { value } })
  assert.ok(await group.runUntil(() => outcome !== undefined, 10_000, 5), 'answered')
  return outcome!.value
}

/** Whether the leader's model remembers the request: only a proposed (committed) command is remembered. */
function committed (group: SimControllerGroup, command: ModelCommand): boolean {
  return recallRequest(group.leader()!.state().requests, `${entityTag(command.proposer)} ${command.requestId}`) !== undefined
}

test('a burst of claims for a free lease: one is committed, the others are answered after it without a proposal', async () => {
  const group = await setup()
  const now = Math.floor(group.sim.clock.now())
  const claims = [claim('web/0', now), claim('web/1', now), claim('web/2', now), claim('web/3', now)]
  // Two machines' batches reach the leader while the first claim is still being committed.
  const first = sendBatch(group, '0', claims.slice(0, 2))
  const second = sendBatch(group, '1', claims.slice(2))
  const results = [...await settle(group, first), ...await settle(group, second)]
  const winners = results.filter(r => r.ok)
  assert.is(winners.length, 1, JSON.stringify(results))
  const holder = tableGet(group.leader()!.state().leases, 'web')!.holder
  assert.is(winners[0]!.ok && winners[0]!.lease?.holder, holder)
  for (const [i, result] of results.entries()) {
    if (result.ok) {
      assert.ok(committed(group, claims[i]!), 'the winning claim is in the log')
      continue
    }
    // The very line applying the claim gives (test/model-leases.test.ts pins it).
    assert.is(result.error, `controller: cannot claim leadership of "web" for "web/${i}": "${holder}" holds it until ${utcTimestamp(now + durationMs)}`)
    assert.not.ok(committed(group, claims[i]!), `the losing claim of web/${i} was never proposed`)
  }
  await group.stop()
})

test('the holder\'s claim extends its lease; another unit\'s claim after the expiry is proposed and wins', async () => {
  const group = await setup()
  const now = Math.floor(group.sim.clock.now())
  const [granted] = await settle(group, sendBatch(group, '0', [claim('web/0', now)]))
  assert.ok(granted!.ok && granted!.lease?.holder === 'web/0')
  const extension = claim('web/0', now + 1_000)
  const [extended] = await settle(group, sendBatch(group, '0', [extension]))
  assert.equal(extended!.ok && extended!.lease, { holder: 'web/0', expiry: now + 1_000 + durationMs })
  assert.ok(committed(group, extension), 'an extension is proposed')

  const early = claim('web/2', now + durationMs)
  const [refused] = await settle(group, sendBatch(group, '1', [early]))
  assert.not.ok(refused!.ok, 'still held at the claim\'s now')
  assert.not.ok(committed(group, early))
  const late = claim('web/2', now + 1_000 + durationMs)
  const [won] = await settle(group, sendBatch(group, '1', [late]))
  assert.equal(won!.ok && won!.lease, { holder: 'web/2', expiry: now + 1_000 + 2 * durationMs }, 'granted at the expiry')
  assert.ok(committed(group, late))
  await group.stop()
})

test.run()
