/**
 * The admin's model watch (actors/controller/model-watches.ts) and the CLI's loop over
 * it (agent/cli/model-watcher.ts). Juju's model: an API watcher's `Next` blocks until
 * the watched state changes and is called again at once (api/watcher/watcher.go,
 * apiserver/facades/client/client/client.go WatchAll); a watcher that outlives its
 * server is restarted by the client. Here a held request answers once the controller's
 * applied revision passes the caller's, or with its own revision when the hold runs out.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ModelWatches } from '../actors/controller/model-watches.ts'
import type { ModelWatchReply } from '../actors/controller/api-requests.ts'
import { ManualClock } from './support/manual-clock.ts'
import { limits } from '../runtime/limits.ts'
import { watchModel } from '../agent/cli/model-watcher.ts'

function settled (promise: Promise<ModelWatchReply>): { reply: ModelWatchReply | undefined } {
  const box: { reply: ModelWatchReply | undefined } = { reply: undefined }
  void promise.then(reply => { box.reply = reply })
  return box
}

const tick = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

test('a watch behind the applied revision is answered at once, with it', async () => {
  const clock = new ManualClock()
  const watches = new ModelWatches({ clock, revision: () => 7 })
  assert.equal(await watches.watch(5), { ok: true, revision: 7 })
  assert.is(watches.held, 0)
  assert.is(clock.pending, 0, 'nothing held, no timer')
})

test('held → answered by the commit that passes it; commits that do not pass it leave it held', async () => {
  const clock = new ManualClock()
  let revision = 7
  const watches = new ModelWatches({ clock, revision: () => revision, holdMs: 1_000 })
  const answer = settled(watches.watch(8))
  await tick()
  assert.is(watches.held, 1)
  revision = 8
  watches.applied()
  await tick()
  assert.is(answer.reply, undefined, 'revision 8 is not past 8')
  revision = 9
  watches.applied()
  await tick()
  assert.equal(answer.reply, { ok: true, revision: 9 })
  assert.is(watches.held, 0)
  assert.is(clock.pending, 0, 'its hold timer is gone with it')
})

test('held → the hold runs out: answered with the controller\'s own revision (not past the caller\'s)', async () => {
  const clock = new ManualClock()
  const watches = new ModelWatches({ clock, revision: () => 4, holdMs: 1_000 })
  const answer = settled(watches.watch(6))
  clock.advance(999)
  await tick()
  assert.is(answer.reply, undefined)
  clock.advance(1)
  await tick()
  assert.equal(answer.reply, { ok: true, revision: 4 })
  assert.is(watches.held, 0)
})

test('past heldMax a watch is refused in one line; stop refuses every held watch', async () => {
  const clock = new ManualClock()
  const watches = new ModelWatches({ clock, revision: () => 1, heldMax: 2 })
  const a = settled(watches.watch(1))
  const b = settled(watches.watch(1))
  assert.equal(await watches.watch(1), { ok: false, error: 'controller api: cannot watch the model: 2 watches held, the maximum is 2' })
  watches.stop()
  await tick()
  const stopping = { ok: false, error: 'controller api: cannot watch the model: this controller is stopping' }
  assert.equal([a.reply, b.reply], [stopping, stopping])
  assert.equal(await watches.watch(0), stopping)
  assert.is(clock.pending, 0)
})

test('refuse: held watches end with the reason, new ones are refused until the refusal is lifted', async () => {
  const clock = new ManualClock()
  let revision = 3
  const watches = new ModelWatches({ clock, revision: () => revision })
  const held = settled(watches.watch(3))
  watches.refuse('this controller has had no leader for 1800 ms')
  await tick()
  const refused = { ok: false, error: 'controller api: cannot watch the model: this controller has had no leader for 1800 ms' }
  assert.equal(held.reply, refused)
  assert.equal(await watches.watch(3), refused)
  assert.is(watches.held, 0)
  assert.is(clock.pending, 0)
  watches.refuse(undefined)
  const again = settled(watches.watch(3))
  revision = 4
  watches.applied()
  await tick()
  assert.equal(again.reply, { ok: true, revision: 4 })
})

test('the CLI loop: waits for its first read, calls back once per revision passed, watches again from there', async () => {
  const asked: Array<{ peer: string, since: number, timeoutMs: number }> = []
  const replies: Array<(reply: ModelWatchReply) => void> = []
  let read!: (revision: number) => void
  const first = new Promise<number>(resolve => { read = resolve })
  let changes = 0
  const stop = watchModel({
    members: ['c0', 'c1'],
    ask: async (peer, since, timeoutMs) => {
      asked.push({ peer, since, timeoutMs })
      return await new Promise(resolve => replies.push(resolve))
    },
    lastRead: async () => await first,
    fallback: () => { throw new Error('not expected') },
    requestTimeoutMs: 5_000
  }, () => { changes++ })
  await tick()
  assert.is(asked.length, 0, 'nothing is asked before the model was read')
  read(10)
  await tick()
  assert.equal(asked, [{ peer: 'c0', since: 10, timeoutMs: limits.modelWatchHoldMs + 5_000 }])
  replies[0]!({ ok: true, revision: 10 })
  await tick()
  assert.is(changes, 0, 'a hold that ran out is no change')
  assert.equal(asked[1], { peer: 'c0', since: 10, timeoutMs: limits.modelWatchHoldMs + 5_000 })
  replies[1]!({ ok: true, revision: 12 })
  await tick()
  assert.is(changes, 1)
  assert.equal(asked[2]?.since, 12, 'the next watch starts from the revision it was told of')
  stop()
  replies[2]!({ ok: true, revision: 13 })
  await tick()
  assert.is(changes, 1, 'nothing after unsubscribing')
  assert.is(asked.length, 3)
})

test('the CLI loop: a controller that does not know model-watch hands the watch to gossip notices', async () => {
  let fallbacks = 0
  let undone = 0
  const stop = watchModel({
    members: ['c0'],
    ask: async () => ({ ok: false, error: 'controller api: expected a request {op: "model" | "members"}, got {op: "model-watch", since: 3}' }),
    lastRead: async () => 3,
    fallback: () => { fallbacks++; return () => { undone++ } },
    requestTimeoutMs: 5_000
  }, () => {})
  for (let i = 0; i < 5; i++) await tick()
  assert.is(fallbacks, 1)
  stop()
  assert.is(undone, 1)
})

test('the CLI loop: a failed controller is left for the next member', async () => {
  const asked: string[] = []
  let changes = 0
  const stop = watchModel({
    members: ['c0', 'c1'],
    ask: async peer => {
      asked.push(peer)
      if (peer === 'c0') throw new Error('peer "c0": unreachable')
      // Held from then on, as a controller holds a watch nothing passes.
      return asked.length === 2 ? { ok: true, revision: 5 } : await new Promise<never>(() => {})
    },
    lastRead: async () => 4,
    fallback: () => () => {},
    requestTimeoutMs: 5_000
  }, () => { changes++ })
  const deadline = Date.now() + 30_000
  while (changes === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
  stop()
  assert.equal(asked.slice(0, 2), ['c0', 'c1'])
  assert.ok(changes >= 1)
})

test.run()
