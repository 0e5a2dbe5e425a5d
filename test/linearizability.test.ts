/** The linearizability checker: classic histories, the recorder, and randomized histories from a linearizable store. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { SeededRandom, type Random } from '../runtime/random.ts'
import { checkLinearizable, type CheckResult } from '../sim/linearizability/check.ts'
import { HistoryRecorder, type Operation } from '../sim/linearizability/history.ts'
import { kv, kvModel, type KvInput, type KvOutput, type Model } from '../sim/linearizability/model.ts'

const test = suite('linearizability')

type KvOperation = Operation<KvInput, KvOutput>
/** [client, input, output (undefined: never returned), call, return (undefined: never returned)] */
type Row = [string, KvInput, KvOutput | undefined, number, number | undefined]

function history (rows: Row[]): KvOperation[] {
  return rows.map(([client, input, output, call, ret], index) => ({ id: index + 1, client, input, output, call, return: ret }))
}

function check (rows: Row[]): CheckResult {
  return checkLinearizable(kvModel, history(rows))
}

function assertOk (result: CheckResult, what: string): void {
  if (result.ok !== true) assert.unreachable(`${what}: expected linearizable, got ${JSON.stringify(result, null, 2)}`)
}

function assertRejected (result: CheckResult, what: string): string {
  if (result.ok !== false) throw new assert.Assertion({ message: `${what}: expected not linearizable, got ${JSON.stringify(result)}`, operator: 'rejected', expects: false, actual: result.ok, generated: false })
  return result.explanation
}

// ---------------------------------------------------------------------------------
// Classic histories.

test('an empty history is linearizable', () => {
  assertOk(check([]), 'empty')
})

test('a sequential history that follows the model is linearizable', () => {
  assertOk(check([
    ['c1', kv.get('x'), kv.value(undefined), 0, 1],
    ['c1', kv.put('x', 'a'), kv.ok('put'), 2, 3],
    ['c2', kv.get('x'), kv.value('a'), 4, 5],
    ['c2', kv.put('x', 'b'), kv.ok('put'), 6, 7],
    ['c1', kv.get('x'), kv.value('b'), 8, 9]
  ]), 'sequential')
})

test('concurrent writes with reads that fix a single order are linearizable', () => {
  // The reads force "put b" before "put a": b is seen first, then a, and a stays.
  assertOk(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 50],
    ['c2', kv.put('x', 'b'), kv.ok('put'), 0, 50],
    ['c3', kv.get('x'), kv.value('b'), 10, 20],
    ['c3', kv.get('x'), kv.value('a'), 30, 40],
    ['c4', kv.get('x'), kv.value('a'), 60, 70]
  ]), 'one order')
})

test('concurrent writes cannot be observed in both orders', () => {
  const explanation = assertRejected(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 50],
    ['c2', kv.put('x', 'b'), kv.ok('put'), 0, 50],
    ['c3', kv.get('x'), kv.value('b'), 10, 20],
    ['c3', kv.get('x'), kv.value('a'), 30, 40],
    ['c4', kv.get('x'), kv.value('b'), 60, 70]
  ]), 'both orders')
  assert.match(explanation, /culprit: #5 c4: get\("x"\) → "b" \[60, 70\]/)
})

test('a stale read after a completed write is rejected, with the write and the read named', () => {
  const result = check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c1', kv.put('x', 'b'), kv.ok('put'), 20, 30],
    ['c2', kv.get('x'), kv.value('a'), 40, 50]
  ])
  const explanation = assertRejected(result, 'stale read')
  assert.ok(result.ok === false)
  assert.equal(result.operationIds, [1, 2, 3])
  assert.match(explanation, /culprit: #3 c2: get\("x"\) → "a" \[40, 50\]/)
  assert.match(explanation, /#2 c1: put\("x", "b"\) → ok \[20, 30\]/)
  assert.match(explanation, /longest partial linearization found \(2 operations\): #1 put\("x", "a"\) → ok, #2 put\("x", "b"\) → ok/)
  assert.match(explanation, /state after it: "x"="b"/)
})

test('a read concurrent with the overwriting write may return either value', () => {
  assertOk(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c1', kv.put('x', 'b'), kv.ok('put'), 20, 30],
    ['c2', kv.get('x'), kv.value('a'), 25, 50],
    ['c3', kv.get('x'), kv.value('b'), 25, 50]
  ]), 'concurrent read')
})

test('a read of a value never written is rejected', () => {
  const explanation = assertRejected(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c2', kv.get('x'), kv.value('zzz'), 5, 15]
  ]), 'never written')
  assert.match(explanation, /culprit: #2 c2: get\("x"\) → "zzz"/)
})

test('a read of nothing after a completed write is rejected, before it is accepted', () => {
  assertRejected(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c2', kv.get('x'), kv.value(undefined), 11, 12]
  ]), 'absent after write')
  assertOk(check([
    ['c2', kv.get('x'), kv.value(undefined), 0, 1],
    ['c1', kv.put('x', 'a'), kv.ok('put'), 2, 10]
  ]), 'absent before write')
})

test('the failing prefix ends at the first read that cannot be placed, not at the end', () => {
  const rows: Row[] = [
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c1', kv.put('x', 'b'), kv.ok('put'), 20, 30],
    ['c2', kv.get('x'), kv.value('a'), 40, 50]
  ]
  for (let i = 0; i < 50; i++) rows.push(['c3', kv.put('x', `v${i}`), kv.ok('put'), 100 + 10 * i, 105 + 10 * i])
  const explanation = assertRejected(check(rows), 'early violation')
  assert.match(explanation, /culprit: #3 /)
  assert.not.match(explanation, /v49/)
})

test('operations that return and are called at the same instant count as concurrent', () => {
  assertOk(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c2', kv.get('x'), kv.value(undefined), 10, 20]
  ]), 'tie')
  assertRejected(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c2', kv.get('x'), kv.value(undefined), 11, 20]
  ]), 'no tie')
})

test('a write that never returned may have taken effect, or not', () => {
  const before: Row[] = [
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c2', kv.put('x', 'b'), undefined, 20, undefined]
  ]
  assertOk(check([...before, ['c3', kv.get('x'), kv.value('b'), 30, 40]]), 'took effect')
  assertOk(check([...before, ['c3', kv.get('x'), kv.value('a'), 30, 40]]), 'not yet, or never')
  // Long after its client gave up, it may still land.
  assertOk(check([...before, ['c3', kv.get('x'), kv.value('a'), 100, 110], ['c3', kv.get('x'), kv.value('b'), 200, 210]]), 'took effect late')
  // But only once: after b was seen, a cannot come back.
  assertRejected(check([...before, ['c3', kv.get('x'), kv.value('b'), 30, 40], ['c3', kv.get('x'), kv.value('a'), 50, 60]]), 'took effect and undone')
  // And never before it was called.
  assertRejected(check([['c3', kv.get('x'), kv.value('b'), 0, 5], ['c2', kv.put('x', 'b'), undefined, 20, undefined]]), 'took effect before its call')
})

test('pending operations need not be linearized, even when nothing could follow them', () => {
  assertOk(check([
    ['c1', kv.put('x', 'a'), undefined, 0, undefined],
    ['c2', kv.put('x', 'b'), undefined, 0, undefined],
    ['c3', kv.get('x'), undefined, 0, undefined]
  ]), 'all pending')
  assertOk(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c2', kv.cas('x', 'zzz', 'b'), undefined, 1, undefined],
    ['c3', kv.get('x'), kv.value('a'), 20, 30]
  ]), 'pending cas that cannot swap')
})

test('a pending cas takes effect only if its expectation held', () => {
  assertOk(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c2', kv.cas('x', 'a', 'b'), undefined, 20, undefined],
    ['c3', kv.get('x'), kv.value('b'), 30, 40]
  ]), 'cas could swap')
  assertRejected(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c2', kv.cas('x', 'other', 'b'), undefined, 20, undefined],
    ['c3', kv.get('x'), kv.value('b'), 30, 40]
  ]), 'cas could not swap')
})

test('cas swaps exactly when the key holds the expected value', () => {
  assertOk(check([
    ['c1', kv.cas('x', undefined, 'a'), kv.swapped(true), 0, 10],
    ['c2', kv.cas('x', undefined, 'b'), kv.swapped(false), 20, 30],
    ['c2', kv.cas('x', 'a', 'c'), kv.swapped(true), 40, 50],
    ['c1', kv.get('x'), kv.value('c'), 60, 70]
  ]), 'cas sequence')
  assertRejected(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c2', kv.cas('x', 'a', 'b'), kv.swapped(false), 20, 30]
  ]), 'cas failed although the value matched')
  assertRejected(check([
    ['c1', kv.put('x', 'a'), kv.ok('put'), 0, 10],
    ['c2', kv.cas('x', 'z', 'b'), kv.swapped(true), 20, 30]
  ]), 'cas swapped although the value differed')
  // Two concurrent create-if-absent: exactly one may win.
  assertOk(check([
    ['c1', kv.cas('x', undefined, 'a'), kv.swapped(true), 0, 10],
    ['c2', kv.cas('x', undefined, 'b'), kv.swapped(false), 0, 10]
  ]), 'one winner')
  assertRejected(check([
    ['c1', kv.cas('x', undefined, 'a'), kv.swapped(true), 0, 10],
    ['c2', kv.cas('x', undefined, 'b'), kv.swapped(true), 0, 10],
    ['c3', kv.get('x'), kv.value('b'), 20, 30],
    ['c3', kv.get('x'), kv.value('a'), 40, 50]
  ]), 'two winners')
})

test('append concatenates, and concurrent appends land in some single order', () => {
  assertOk(check([
    ['c1', kv.append('x', 'a'), kv.ok('append'), 0, 10],
    ['c2', kv.append('x', 'b'), kv.ok('append'), 0, 10],
    ['c3', kv.get('x'), kv.value('ba'), 20, 30]
  ]), 'appends')
  assertRejected(check([
    ['c1', kv.append('x', 'a'), kv.ok('append'), 0, 10],
    ['c2', kv.append('x', 'b'), kv.ok('append'), 0, 10],
    ['c3', kv.get('x'), kv.value('a'), 20, 30]
  ]), 'lost append')
})

test('a reply of the wrong kind is rejected', () => {
  assertRejected(check([['c1', kv.get('x'), kv.ok('put'), 0, 10]]), 'wrong kind')
})

test('keys are checked independently, and a violation on one key is found among many', () => {
  const rows: Row[] = []
  for (let k = 0; k < 10; k++) {
    rows.push(['c1', kv.put(`k${k}`, 'a'), kv.ok('put'), 0, 10])
    rows.push(['c2', kv.get(`k${k}`), kv.value(k === 7 ? undefined : 'a'), 20, 30])
  }
  const explanation = assertRejected(check(rows), 'one bad key')
  assert.match(explanation, /get\("k7"\) → undefined/)
  assert.not.match(explanation, /"k3"/)
})

test('a check that exceeds its budget answers unknown instead of searching on', () => {
  // Many concurrent writes and a read that fits none of them: the search must try
  // every order of the writes before it can say no.
  const rows: Row[] = []
  for (let i = 0; i < 10; i++) rows.push([`c${i}`, kv.put('x', `v${i}`), kv.ok('put'), 0, 100])
  rows.push(['r', kv.get('x'), kv.value('never'), 0, 100])
  const result = checkLinearizable(kvModel, history(rows), { timeBudgetOps: 1000 })
  assert.is(result.ok, 'unknown')
  assert.ok(result.ok === 'unknown' && /gave up after 1000 model steps/.test(result.reason), JSON.stringify(result))
  // Memoisation collapses the orders (they all end in some state with the same set), so
  // the default budget decides it.
  assertRejected(checkLinearizable(kvModel, history(rows)), 'default budget')
})

test('a model without partition or hash is memoised with equal', () => {
  // A counter: `inc` adds one and replies with the new count.
  let equalCalls = 0
  const counter: Model<number, 'inc', number> = {
    init: () => 0,
    step: (state, _input, output) => ({ ok: output === undefined || output === state + 1, next: state + 1 }),
    equal: (a, b) => { equalCalls++; return a === b },
    describe: (_input, output) => `inc → ${output ?? '?'}`
  }
  const ops: Array<Operation<'inc', number>> = [
    { id: 1, client: 'a', input: 'inc', output: 2, call: 0, return: 10 },
    { id: 2, client: 'b', input: 'inc', output: 1, call: 0, return: 10 },
    { id: 3, client: 'c', input: 'inc', output: undefined, call: 0, return: undefined },
    { id: 5, client: 'd', input: 'inc', output: undefined, call: 0, return: undefined },
    { id: 4, client: 'c', input: 'inc', output: 4, call: 20, return: 30 }
  ]
  assertOk(checkLinearizable(counter, ops), 'counter')
  // Failing makes the search meet {1, 2, 3, 5} twice (3 before 5 and 5 before 3).
  const bad = ops.map(o => o.id === 4 ? { ...o, output: 6 } : o)
  assert.match(assertRejected(checkLinearizable(counter, bad), 'counter'), /culprit: #4 c: inc → 6 \[20, 30\]/)
  assert.ok(equalCalls > 0)
})

test('a malformed history is an assertion, not a verdict', () => {
  assert.throws(() => check([['c1', kv.get('x'), kv.value(undefined), 10, 5]]), /returned at 5, before its call at 10/)
  assert.throws(() => checkLinearizable(kvModel, [...history([['c1', kv.get('x'), kv.value(undefined), 0, 1]]), ...history([['c1', kv.get('x'), kv.value(undefined), 0, 1]])]), /duplicate id/)
})

/**
 * The definition, searched naively: some order of the operations that puts each one after
 * every operation that returned before it was called, leaves out only operations that
 * never returned, and that the model accepts step by step. Fine for a handful of operations.
 */
function linearizableByBruteForce (ops: KvOperation[]): boolean {
  const returned = ops.filter(o => o.return !== undefined).length
  const explore = (state: ReadonlyMap<string, string>, done: Set<number>, doneReturned: number): boolean => {
    if (doneReturned === returned) return true
    for (const o of ops) {
      if (done.has(o.id)) continue
      if (ops.some(p => !done.has(p.id) && p.return !== undefined && p.return < o.call)) continue
      const { ok, next } = kvModel.step(state, o.input, o.return === undefined ? undefined : o.output)
      if (!ok) continue
      done.add(o.id)
      const found = explore(next, done, doneReturned + (o.return === undefined ? 0 : 1))
      done.delete(o.id)
      if (found) return true
    }
    return false
  }
  return explore(new Map(), new Set(), 0)
}

test('on small arbitrary histories the checker agrees with a brute-force search (3000 seeds)', () => {
  const verdicts = { accepted: 0, rejected: 0 }
  for (let seed = 1; seed <= 3000; seed++) {
    const random = new SeededRandom(seed)
    const values = [undefined, 'a', 'b']
    const pick = (): string | undefined => values[random.int(0, values.length - 1)]
    const rows: Row[] = []
    const count = random.int(1, 7)
    for (let i = 0; i < count; i++) {
      const key = random.next() < 0.8 ? 'x' : 'y'
      const call = random.int(0, 20)
      const ret = random.next() < 0.2 ? undefined : call + random.int(0, 10)
      let input: KvInput
      let output: KvOutput
      switch (random.int(0, 3)) {
        case 0: input = kv.put(key, pick() ?? 'a'); output = kv.ok('put'); break
        case 1: input = kv.get(key); output = kv.value(pick()); break
        case 2: input = kv.cas(key, pick(), pick() ?? 'b'); output = kv.swapped(random.next() < 0.5); break
        default: input = kv.append(key, pick() ?? 'a'); output = kv.ok('append')
      }
      rows.push([`c${i}`, input, ret === undefined ? undefined : output, call, ret])
    }
    const expected = linearizableByBruteForce(history(rows))
    const result = check(rows)
    assert.is(result.ok, expected, `seed ${seed}: checker says ${String(result.ok)}, brute force ${String(expected)}\n${JSON.stringify(rows)}`)
    verdicts[expected ? 'accepted' : 'rejected']++
  }
  // Both verdicts must be well represented for the agreement to mean anything.
  assert.ok(verdicts.accepted > 500 && verdicts.rejected > 500, JSON.stringify(verdicts))
})

// ---------------------------------------------------------------------------------
// The recorder.

test('the recorder records calls, replies, abandoned and discarded operations', () => {
  const recorder = new HistoryRecorder<KvInput, KvOutput>()
  const a = recorder.invoke('c1', kv.put('x', 'a'), 0)
  const b = recorder.invoke('c2', kv.put('x', 'b'), 1)
  const c = recorder.invoke('c3', kv.get('x'), 2)
  const d = recorder.invoke('c4', kv.put('x', 'd'), 2)
  const e = recorder.invoke('c5', kv.get('x'), 3)
  recorder.complete(a, kv.ok('put'), 5)
  recorder.abandon(b)
  recorder.discard(d)
  recorder.complete(c, kv.value('a'), 6)
  assert.is(recorder.openCount, 1)
  assert.is(recorder.size, 4)
  assert.equal(recorder.history(), [
    { id: a, client: 'c1', input: kv.put('x', 'a'), output: kv.ok('put'), call: 0, return: 5 },
    { id: b, client: 'c2', input: kv.put('x', 'b'), output: undefined, call: 1, return: undefined },
    { id: c, client: 'c3', input: kv.get('x'), output: kv.value('a'), call: 2, return: 6 },
    { id: e, client: 'c5', input: kv.get('x'), output: undefined, call: 3, return: undefined }
  ])
  assertOk(checkLinearizable(kvModel, recorder.history()), 'recorded')
})

test('the recorder refuses misuse: completing twice, unknown ids, time going backwards', () => {
  const recorder = new HistoryRecorder<KvInput, KvOutput>()
  const a = recorder.invoke('c1', kv.get('x'), 10)
  recorder.complete(a, kv.value(undefined), 12)
  assert.throws(() => recorder.complete(a, kv.value(undefined), 13), /cannot complete operation #1: already completed/)
  assert.throws(() => recorder.abandon(99), /cannot abandon operation #99: no such operation/)
  assert.throws(() => recorder.invoke('c2', kv.get('x'), 11), /at 11, before the last recorded time 12/)
  const b = recorder.invoke('c2', kv.get('x'), 12)
  recorder.abandon(b)
  assert.throws(() => recorder.complete(b, kv.value(undefined), 20), /already abandoned/)
})

test('the recorder asserts its operationsMax', () => {
  const recorder = new HistoryRecorder<KvInput, KvOutput>({ operationsMax: 3 })
  for (let i = 0; i < 3; i++) recorder.invoke('c', kv.get('x'), i)
  assert.throws(() => recorder.invoke('c', kv.get('x'), 3), /more than 3 operations \(operationsMax\)/)
})

// ---------------------------------------------------------------------------------
// Randomized histories from a store that is linearizable by construction: each operation
// takes effect atomically at a random instant between its call and its return.

interface Generated {
  operations: KvOperation[]
  /** Per operation id: the key's value right after the operation took effect (writers only). */
  valueAfter: Map<number, string | undefined>
  /** Operation ids that certainly changed their key's value. */
  changed: Set<number>
}

interface Workload {
  clients: number
  keys: number
  operations: number
  pendingProbability: number
}

function generate (random: SeededRandom, workload: Workload): Generated {
  interface Planned { id: number, client: string, key: string, kind: KvInput['op'], call: number, ret: number | undefined, at: number | undefined, order: number }
  const planned: Planned[] = []
  const clientTime = new Array<number>(workload.clients).fill(0)
  const kinds: Array<KvInput['op']> = ['get', 'get', 'get', 'put', 'put', 'cas', 'cas', 'append']
  for (let id = 1; id <= workload.operations; id++) {
    const c = random.int(0, workload.clients - 1)
    const call = clientTime[c]! + random.int(0, 5)
    const kind = kinds[random.int(0, kinds.length - 1)]!
    const key = `k${random.int(0, workload.keys - 1)}`
    if (random.next() < workload.pendingProbability) {
      // The client times out and moves on; the request lands later, or never.
      const at = random.next() < 0.6 ? call + random.int(0, 200) : undefined
      planned.push({ id, client: `c${c}`, key, kind, call, ret: undefined, at, order: random.next() })
      clientTime[c] = call + 30
    } else {
      const ret = call + random.int(0, 20)
      planned.push({ id, client: `c${c}`, key, kind, call, ret, at: random.int(call, ret), order: random.next() })
      clientTime[c] = ret
    }
  }

  // Apply in order of the instant each took effect; ties in any order, since operations
  // taking effect at the same instant both span it and so are concurrent.
  const store = new Map<string, string>()
  const written = new Map<string, string[]>()
  const inputs = new Map<number, KvInput>()
  const outputs = new Map<number, KvOutput>()
  const valueAfter = new Map<number, string | undefined>()
  const changed = new Set<number>()
  const effective = planned.filter(p => p.at !== undefined).sort((a, b) => a.at! - b.at! || a.order - b.order)
  const token = (p: Planned): string => `<${p.id}>`
  const inputOf = (p: Planned, current: string | undefined): KvInput => {
    switch (p.kind) {
      case 'get': return kv.get(p.key)
      case 'put': return kv.put(p.key, token(p))
      case 'append': return kv.append(p.key, token(p))
      case 'cas': {
        // Half the time expect what is there, so that some cas operations succeed.
        const older = written.get(p.key) ?? []
        const expect = random.next() < 0.5 ? current : older[random.int(0, older.length)]
        return kv.cas(p.key, expect, token(p))
      }
    }
  }
  for (const p of effective) {
    const current = store.get(p.key)
    const input = inputOf(p, current)
    inputs.set(p.id, input)
    let output: KvOutput
    switch (input.op) {
      case 'get': output = kv.value(current); break
      case 'put': store.set(p.key, input.value); output = kv.ok('put'); changed.add(p.id); break
      case 'append': store.set(p.key, (current ?? '') + input.value); output = kv.ok('append'); changed.add(p.id); break
      case 'cas': {
        const swapped = current === input.expect
        if (swapped) { store.set(p.key, input.value); changed.add(p.id) }
        output = kv.swapped(swapped)
        break
      }
    }
    outputs.set(p.id, output)
    if (input.op !== 'get') valueAfter.set(p.id, store.get(p.key))
    const seen = written.get(p.key) ?? []
    const value = store.get(p.key)
    if (value !== undefined) seen.push(value)
    written.set(p.key, seen)
  }
  for (const p of planned) if (!inputs.has(p.id)) inputs.set(p.id, inputOf(p, undefined))

  // Replay the calls and returns in time order through the recorder.
  const recorder = new HistoryRecorder<KvInput, KvOutput>()
  const timeline: Array<{ time: number, call: boolean, p: Planned }> = []
  for (const p of planned) {
    timeline.push({ time: p.call, call: true, p })
    if (p.ret !== undefined) timeline.push({ time: p.ret, call: false, p })
  }
  timeline.sort((a, b) => a.time - b.time || Number(b.call) - Number(a.call) || a.p.id - b.p.id)
  const recorded = new Map<number, number>()
  for (const event of timeline) {
    if (event.call) {
      recorded.set(event.p.id, recorder.invoke(event.p.client, inputs.get(event.p.id)!, event.time))
      if (event.p.ret === undefined && random.next() < 0.5) recorder.abandon(recorded.get(event.p.id)!)
    } else {
      recorder.complete(recorded.get(event.p.id)!, outputs.get(event.p.id)!, event.time)
    }
  }
  // Recorder ids follow call order; map the generator's facts onto them.
  const operations = recorder.history()
  const byRecorded = new Map<number, number>()
  for (const [plannedId, recordedId] of recorded) byRecorded.set(recordedId, plannedId)
  const remap = <V>(m: Map<number, V>): Map<number, V> => {
    const out = new Map<number, V>()
    for (const op of operations) { const id = byRecorded.get(op.id)!; if (m.has(id)) out.set(op.id, m.get(id)!) }
    return out
  }
  return {
    operations,
    valueAfter: remap(valueAfter),
    changed: new Set([...remap(new Map([...changed].map(id => [id, true]))).keys()])
  }
}

/**
 * Makes one completed read return a value that had certainly been overwritten before the
 * read was called: W wrote it and returned, then a W2 that certainly changed the key was
 * called and returned, then the read was called. Every writer leaves its own fresh token
 * last in the value, so no later state equals the one W left: the mutated history cannot
 * be linearizable. Returns undefined when the history has no such read.
 */
function staleRead (generated: Generated, random: Random): KvOperation[] | undefined {
  const ops = generated.operations
  const reads = ops.filter(o => o.input.op === 'get' && o.return !== undefined)
  const offset = reads.length === 0 ? 0 : random.int(0, reads.length - 1)
  for (let n = 0; n < reads.length; n++) {
    const read = reads[(n + offset) % reads.length]!
    const key = read.input.key
    for (const w of ops) {
      if (w.input.key !== key || w.return === undefined || !generated.changed.has(w.id)) continue
      const overwritten = ops.some(w2 => w2.input.key === key && generated.changed.has(w2.id) && w2.return !== undefined && w.return! < w2.call && w2.return < read.call!)
      if (!overwritten) continue
      const stale = generated.valueAfter.get(w.id)
      return ops.map(o => o.id === read.id ? { ...o, output: kv.value(stale) } : o)
    }
  }
  return undefined
}

const smallWorkload: Workload = { clients: 4, keys: 3, operations: 120, pendingProbability: 0.05 }

test('histories of a linearizable store are always accepted (300 seeds)', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const generated = generate(new SeededRandom(seed), smallWorkload)
    assertOk(checkLinearizable(kvModel, generated.operations), `seed ${seed}`)
  }
})

test('histories with many pending operations are accepted (100 seeds)', () => {
  for (let seed = 1; seed <= 100; seed++) {
    const generated = generate(new SeededRandom(10_000 + seed), { clients: 6, keys: 2, operations: 80, pendingProbability: 0.3 })
    assertOk(checkLinearizable(kvModel, generated.operations), `seed ${10_000 + seed}`)
  }
})

test('the same histories with one read made stale are rejected (300 seeds)', () => {
  let mutated = 0
  for (let seed = 1; seed <= 300; seed++) {
    const random = new SeededRandom(seed)
    const generated = generate(random, smallWorkload)
    const stale = staleRead(generated, random.stream('mutation'))
    if (stale === undefined) continue
    mutated++
    assertRejected(checkLinearizable(kvModel, stale), `seed ${seed}`)
  }
  // Nearly every history has a read to spoil; the test is void if none had.
  assert.ok(mutated > 250, `only ${mutated} of 300 histories had a detectably stale read`)
})

test('a 2,000-operation history over 20 keys and 8 clients is accepted, and rejected once spoiled', () => {
  const random = new SeededRandom(2000)
  const generated = generate(random, { clients: 8, keys: 20, operations: 2000, pendingProbability: 0.02 })
  assertOk(checkLinearizable(kvModel, generated.operations), 'large')
  const stale = staleRead(generated, random.stream('mutation'))
  assert.ok(stale !== undefined)
  assertRejected(checkLinearizable(kvModel, stale), 'large, spoiled')
})

test.run()
