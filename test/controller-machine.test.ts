import '../runtime/polyfill.ts'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createActor, fromCallback, fromPromise } from 'xstate'
import {
  controllerMachine, runsSingularWorkers,
  type ClaimOutcome, type ControllerActor, type ControllerEvent, type ControllerInput
} from '../actors/controller/controller-machine.ts'
import type { NodeId, RaftRole } from '../runtime/raft/raft-types.ts'
import { SimClock } from '../sim/sim-clock.ts'

const test = suite('controller machine: Raft role and singular workers')

// Each test drives one actor on a simulated clock: time moves only through
// clock.advance, and every claim stays pending until the test settles it.

const retryMs = 300

interface Claim {
  readonly controller: NodeId
  /** Simulated time the claim was proposed. */
  readonly at: number
  readonly resolve: (outcome: ClaimOutcome) => void
  readonly reject: (error: unknown) => void
}

interface Harness {
  readonly clock: SimClock
  readonly actor: ControllerActor
  readonly claims: Claim[]
  readonly workers: { starts: number, stops: number }
  readonly errors: unknown[]
}

function harness (input: Partial<ControllerInput> = {}): Harness {
  const clock = new SimClock()
  const claims: Claim[] = []
  const workers = { starts: 0, stops: 0 }
  const errors: unknown[] = []
  const machine = controllerMachine.provide({
    actors: {
      claimLease: fromPromise<ClaimOutcome, { controller: NodeId }>(async ({ input }) => {
        const { promise, resolve, reject } = Promise.withResolvers<ClaimOutcome>()
        claims.push({ controller: input.controller, at: clock.now(), resolve, reject })
        return await promise
      }),
      singularWorkers: fromCallback<ControllerEvent, { controller: NodeId }>(({ input }) => {
        assert.is(input.controller, 'c1')
        workers.starts++
        return () => { workers.stops++ }
      })
    }
  })
  const actor = createActor(machine, {
    clock,
    input: { id: 'c1', role: 'follower', term: 1, leader: 'c2', claimRetryMs: retryMs, ...input }
  })
  actor.subscribe({ error: err => { errors.push(err) } })
  actor.start()
  return { clock, actor, claims, workers, errors }
}

/** Lets a settled claim's promise reach the actor (no simulated time passes). */
const settled = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

function pending (h: Harness, claim?: Claim): Claim {
  const last = claim ?? h.claims.at(-1)
  assert.ok(last !== undefined, 'no claim was made')
  return last
}

async function grant (h: Harness, validForMs: number, claim?: Claim): Promise<void> {
  pending(h, claim).resolve({ granted: true, validForMs })
  await settled()
}

async function refuse (h: Harness, why: string, claim?: Claim): Promise<void> {
  pending(h, claim).resolve({ granted: false, why })
  await settled()
}

async function fail (h: Harness, message: string, claim?: Claim): Promise<void> {
  pending(h, claim).reject(new Error(message))
  await settled()
}

function role (h: Harness, to: RaftRole, term: number, leader: NodeId | ''): void {
  h.actor.send({ type: 'raft.role', role: to, term, leader })
}
const lead = (h: Harness): void => { role(h, 'leader', 2, 'c1') }
const stepDown = (h: Harness): void => { role(h, 'follower', 3, 'c2') }

/** The state and the effects so far: claims made (by time), worker starts and stops. */
function observe (h: Harness): { value: unknown, claimsAt: number[], starts: number, stops: number, runs: boolean } {
  const snapshot = h.actor.getSnapshot()
  assert.equal(h.errors, [], 'the actor failed')
  assert.is(snapshot.status, 'active')
  const runs = runsSingularWorkers(snapshot)
  assert.is(runs, h.workers.starts - h.workers.stops === 1, 'runsSingularWorkers agrees with the running workers')
  return { value: snapshot.value, claimsAt: h.claims.map(c => c.at), starts: h.workers.starts, stops: h.workers.stops, runs }
}

const context = (h: Harness): ReturnType<ControllerActor['getSnapshot']>['context'] => h.actor.getSnapshot().context

const follower = { raft: 'follower', singular: 'standby' }
const leading = (singular: unknown): unknown => ({ raft: 'leader', singular })
const valid = leading({ holding: 'valid' })
const renewing = leading({ holding: { expiring: 'renewing' } })
const retrying = leading({ holding: { expiring: 'retrying' } })

/** Leader holding a lease granted at time 0 for `validForMs`. */
async function holding (validForMs = 1000): Promise<Harness> {
  const h = harness()
  lead(h)
  await grant(h, validForMs)
  return h
}

// ---- starting and roles ---------------------------------------------------------------

test('starting goes to the input role, and only a leader claims', () => {
  const states: Array<[RaftRole, string]> = [['follower', 'follower'], ['pre-candidate', 'preCandidate'], ['candidate', 'candidate']]
  for (const [input, state] of states) {
    const h = harness({ role: input, term: 4, leader: '' })
    assert.equal(observe(h), { value: { raft: state, singular: 'standby' }, claimsAt: [], starts: 0, stops: 0, runs: false }, input)
  }
  const h = harness({ role: 'leader', term: 4, leader: 'c1' })
  assert.equal(observe(h), { value: leading('claiming'), claimsAt: [0], starts: 0, stops: 0, runs: false })
  assert.is(h.claims[0]?.controller, 'c1')
  assert.equal([context(h).role, context(h).term, context(h).leader], ['leader', 4, 'c1'])
})

test('raft.role moves between all four roles and records term and leader', () => {
  const h = harness()
  const steps: Array<[RaftRole, number, NodeId | '', string]> = [
    ['pre-candidate', 1, '', 'preCandidate'],
    ['candidate', 2, '', 'candidate'],
    ['leader', 2, 'c1', 'leader'],
    ['follower', 3, 'c3', 'follower'],
    ['candidate', 4, '', 'candidate'],
    ['follower', 4, 'c2', 'follower']
  ]
  for (const [to, term, leader, state] of steps) {
    role(h, to, term, leader)
    const snapshot = h.actor.getSnapshot()
    assert.equal((snapshot.value as { raft: string }).raft, state, to)
    assert.equal([snapshot.context.role, snapshot.context.term, snapshot.context.leader], [to, term, leader], to)
  }
  assert.equal(observe(h).claimsAt, [0], 'only becoming leader claimed')
})

test('a follower does not claim, whatever the time', () => {
  const h = harness()
  role(h, 'follower', 2, 'c3')
  h.clock.advance(60_000)
  assert.equal(observe(h), { value: follower, claimsAt: [], starts: 0, stops: 0, runs: false })
})

// ---- claiming -----------------------------------------------------------------------

test('becoming leader claims; a grant holds and starts the workers once', async () => {
  const h = harness()
  lead(h)
  assert.equal(observe(h), { value: leading('claiming'), claimsAt: [0], starts: 0, stops: 0, runs: false })
  h.clock.advance(40)
  await grant(h, 1000)
  assert.equal(observe(h), { value: valid, claimsAt: [0], starts: 1, stops: 0, runs: true })
  assert.equal([context(h).validForMs, context(h).renewAfterMs, context(h).holds, context(h).lastRefusal], [1000, 500, 1, undefined])
})

test('a refused claim waits with the reason, then claims again after claimRetryMs', async () => {
  const h = harness()
  lead(h)
  await refuse(h, 'held by "c2" until 5000')
  assert.equal(observe(h), { value: leading('waiting'), claimsAt: [0], starts: 0, stops: 0, runs: false })
  assert.is(context(h).lastRefusal, 'held by "c2" until 5000')
  h.clock.advance(retryMs - 1)
  assert.equal(observe(h).claimsAt, [0])
  h.clock.advance(1)
  assert.equal(observe(h), { value: leading('claiming'), claimsAt: [0, retryMs], starts: 0, stops: 0, runs: false })
  await grant(h, 1000)
  assert.equal(observe(h).value, valid)
  assert.is(context(h).lastRefusal, undefined, 'a grant clears the refusal')
})

test('a failed claim waits too, with the error as the reason', async () => {
  const h = harness()
  lead(h)
  await fail(h, 'proposal dropped: leadership lost')
  assert.equal(observe(h), { value: leading('waiting'), claimsAt: [0], starts: 0, stops: 0, runs: false })
  assert.is(context(h).lastRefusal, 'proposal dropped: leadership lost')
  h.clock.advance(retryMs)
  assert.equal(observe(h).claimsAt, [0, retryMs])
})

// ---- holding and renewing -----------------------------------------------------------

test('after renewAfterMs a hold renews; a granted renewal returns to valid without restarting the workers', async () => {
  const h = await holding(1000)
  h.clock.advance(499)
  assert.equal(observe(h).value, valid)
  h.clock.advance(1)
  assert.equal(observe(h), { value: renewing, claimsAt: [0, 500], starts: 1, stops: 0, runs: true })
  h.clock.advance(100)
  await grant(h, 800)
  assert.equal(observe(h), { value: valid, claimsAt: [0, 500], starts: 1, stops: 0, runs: true })
  assert.equal([context(h).validForMs, context(h).renewAfterMs, context(h).holds], [800, 400, 1])
  h.clock.advance(399)
  assert.equal(observe(h).claimsAt, [0, 500])
  h.clock.advance(1)
  assert.equal(observe(h), { value: renewing, claimsAt: [0, 500, 1000], starts: 1, stops: 0, runs: true }, 'the next renewal follows the new grant')
})

test('a refused or failed renewal retries after claimRetryMs, still holding', async () => {
  const h = await holding(2000)
  h.clock.advance(1000)
  await refuse(h, 'not applied')
  assert.equal(observe(h), { value: retrying, claimsAt: [0, 1000], starts: 1, stops: 0, runs: true })
  assert.is(context(h).lastRefusal, 'not applied')
  h.clock.advance(retryMs)
  assert.equal(observe(h).value, renewing)
  await fail(h, 'timed out')
  assert.equal(observe(h), { value: retrying, claimsAt: [0, 1000, 1300], starts: 1, stops: 0, runs: true })
  assert.is(context(h).lastRefusal, 'timed out')
  h.clock.advance(retryMs)
  await grant(h, 2000)
  assert.equal(observe(h), { value: valid, claimsAt: [0, 1000, 1300, 1600], starts: 1, stops: 0, runs: true })
})

test('with no renewal by validForMs after the last grant, it stops the workers and claims again', async () => {
  const h = await holding(1000)
  h.clock.advance(600) // renewing from 500; its beliefLeft timer (due at 1000) goes with the grant
  await grant(h, 800) // at 600: believed until 1400, renewing from 1000
  h.clock.advance(400)
  const stuck = pending(h)
  h.clock.advance(399)
  assert.equal(observe(h), { value: renewing, claimsAt: [0, 500, 1000], starts: 1, stops: 0, runs: true })
  h.clock.advance(1)
  assert.equal(observe(h), { value: leading('claiming'), claimsAt: [0, 500, 1000, 1400], starts: 1, stops: 1, runs: false })
  await grant(h, 1000, stuck)
  assert.equal(observe(h).value, leading('claiming'), 'the abandoned renewal settling changes nothing')
  await grant(h, 1000)
  assert.equal(observe(h), { value: valid, claimsAt: [0, 500, 1000, 1400], starts: 2, stops: 1, runs: true })
  assert.is(context(h).holds, 2)
})

test('belief ends while retrying too', async () => {
  const h = await holding(1000)
  h.clock.advance(500)
  await refuse(h, 'not applied')
  h.clock.advance(retryMs) // renewing again at 800
  await fail(h, 'timed out')
  h.clock.advance(199)
  assert.equal(observe(h).value, retrying)
  h.clock.advance(1)
  assert.equal(observe(h), { value: leading('claiming'), claimsAt: [0, 500, 800, 1000], starts: 1, stops: 1, runs: false })
})

test('a leader event while holding (a new term) keeps the workers running', async () => {
  const h = await holding(1000)
  role(h, 'leader', 5, 'c1')
  assert.equal(observe(h), { value: valid, claimsAt: [0], starts: 1, stops: 0, runs: true })
  assert.is(context(h).term, 5)
})

// ---- stepping down ------------------------------------------------------------------

/** Each brings a leader to a singular state and returns the claim in flight there, if any. */
const stepDownFrom: Array<[string, unknown, (h: Harness) => Promise<Claim | undefined>]> = [
  ['claiming', leading('claiming'), async h => { lead(h); return pending(h) }],
  ['waiting', leading('waiting'), async h => { lead(h); await refuse(h, 'held elsewhere'); return undefined }],
  ['holding.valid', valid, async h => { lead(h); await grant(h, 1000); return undefined }],
  ['holding.expiring.renewing', renewing, async h => { lead(h); await grant(h, 1000); h.clock.advance(500); return pending(h) }],
  ['holding.expiring.retrying', retrying, async h => { lead(h); await grant(h, 1000); h.clock.advance(500); await refuse(h, 'x'); return undefined }]
]

for (const [from, value, reach] of stepDownFrom) {
  test(`stepping down in ${from} goes to standby, stops the workers and ignores a late claim`, async () => {
    const h = harness()
    const inFlight = await reach(h)
    const before = observe(h)
    assert.equal(before.value, value)
    stepDown(h)
    const after = observe(h)
    assert.equal(after, { value: follower, claimsAt: before.claimsAt, starts: before.starts, stops: before.starts, runs: false })
    if (inFlight !== undefined) await grant(h, 1000, inFlight)
    h.clock.advance(10_000)
    assert.equal(observe(h), after, 'nothing happens after stepping down')
    assert.equal([context(h).role, context(h).term, context(h).leader], ['follower', 3, 'c2'])
  })
}

test('a claim from an earlier leadership settling late does not decide the current claim', async () => {
  const h = harness()
  lead(h)
  const old = pending(h)
  stepDown(h)
  h.clock.advance(50)
  role(h, 'leader', 4, 'c1')
  assert.equal(observe(h).claimsAt, [0, 50])
  await grant(h, 1000, old)
  assert.equal(observe(h), { value: leading('claiming'), claimsAt: [0, 50], starts: 0, stops: 0, runs: false })
  await refuse(h, 'held by "c2"')
  assert.equal(observe(h).value, leading('waiting'))
})

// ---- status helpers -------------------------------------------------------------------

test('runsSingularWorkers is true only in holding', async () => {
  const h = harness()
  const seen: Array<[unknown, boolean]> = []
  const note = (): void => { const { value, runs } = observe(h); seen.push([value, runs]) }
  note()
  lead(h); note()
  await refuse(h, 'x'); note()
  h.clock.advance(retryMs); await grant(h, 1000); note()
  h.clock.advance(500); note()
  await fail(h, 'x'); note()
  stepDown(h); note()
  assert.equal(seen, [
    [follower, false], [leading('claiming'), false], [leading('waiting'), false],
    [valid, true], [renewing, true], [retrying, true], [follower, false]
  ])
})

test('holds counts grants after not holding, not renewals or refusals', async () => {
  const h = await holding(1000)
  assert.is(context(h).holds, 1)
  h.clock.advance(500)
  await grant(h, 1000) // a renewal
  assert.is(context(h).holds, 1)
  h.clock.advance(500) // renewing from 1000, belief ends at 1500
  await refuse(h, 'x')
  h.clock.advance(500)
  assert.equal(observe(h).value, leading('claiming'))
  await grant(h, 1000)
  assert.is(context(h).holds, 2)
  stepDown(h)
  lead(h)
  await refuse(h, 'x')
  h.clock.advance(retryMs)
  await grant(h, 1000)
  assert.is(context(h).holds, 3)
  assert.equal(observe(h).starts, 3)
})

test.run()
