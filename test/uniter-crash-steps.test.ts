import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { UnitWorld } from '../sim/unit-world.ts'
import type { LocalState } from '../actors/unit/local-state.ts'
import { describeHook } from '../actors/unit/hook-info.ts'

/**
 * kill -9 of the unit's agent at every step boundary of every operation kind (deploy,
 * run-hook, skip-hook, accept/resign leadership, run-action, upgrade, teardown), once
 * before and once after the step's write lands; then restart from the durable state and
 * check the continuation against juju-semantics §2.11.
 */
const subject = 'kv/0'

type Step = (world: UnitWorld) => void

const script: Array<[string, Step]> = [
  ['deploy', w => { w.model.deploy({ name: 'kv', peers: ['cluster'], requires: { db: 'db' } }, 2); w.model.deploy({ name: 'db', provides: { server: 'db' } }, 1) }],
  ['integrate', w => { w.model.relate('kv:db', 'db:server') }],
  ['action', w => { w.model.enqueueAction(subject, 'backup') }],
  ['config fails, resolved --no-retry', w => { w.failHook(subject, 'config-changed'); w.model.setConfig('kv', { setting: 'config-1' }) }],
  ['resolve', w => { w.model.resolved(subject, 'no-hooks') }],
  ['remote settings', w => { w.model.relationSet('db/0', w.model.relationIds()[1]!) }],
  ['refresh', w => { w.model.refresh('kv', 'local:kv-1') }],
  ['lose leadership', w => { w.model.setLeader('kv', 'kv/1') }],
  ['regain leadership', w => { w.model.setLeader('kv', subject) }],
  ['remove unit', w => { w.model.removeUnit(subject) }]
]

interface RunResult {
  hooks: string[]
  final: LocalState | undefined
  persists: number
  crashed: boolean
  /** The durable operation (kind/step) the crash left behind. */
  crashedAt: string | undefined
}

function hooksOf (world: UnitWorld): string[] {
  return world.hooks(subject)
}

async function recoverAfterCrash (world: UnitWorld, label: string): Promise<void> {
  const op = world.durable.get(subject)?.operation
  const mark = world.mark()
  const emittedMark = world.emitted.length
  world.start(subject)
  await world.settle()
  const after = world.hooksSince(subject, mark)
  const emitted = world.emitted.slice(emittedMark).filter(e => e.unit === subject).map(e => e.event)
  if (op === undefined) return
  if (op.kind === 'run-hook' && op.step === 'pending') {
    // §2.11: crashed mid-hook → treated as a failed hook → error state, nothing runs.
    assert.is(world.stateOf(subject), 'hookError', `${label}: a pending hook after a crash is an error`)
    assert.equal(after, [], `${label}: nothing runs in error`)
    world.model.resolved(subject, 'retry-hooks')
    await world.settle()
    assert.is(world.hooksSince(subject, mark)[0], describeHook(op.hook!), `${label}: resolved re-runs the failed hook first`)
  } else if (op.kind === 'run-hook' && op.step === 'queued') {
    assert.is(after[0], describeHook(op.hook!), `${label}: a queued hook runs first after restart`)
  } else if (op.kind === 'run-hook' && op.step === 'done') {
    const committed = emitted.find(e => e.type === 'hook.committed')
    assert.ok(committed !== undefined && committed.type === 'hook.committed', `${label}: the done hook is committed`)
    assert.is(describeHook(committed.hook), describeHook(op.hook!), `${label}: the done hook is the first commit`)
    assert.is(committed.ran, false, `${label}: a done hook is committed without running again`)
  } else if (op.kind === 'install' || op.kind === 'upgrade') {
    assert.ok(emitted.some(e => e.type === 'charm.deployed'), `${label}: an interrupted charm deploy resumes`)
  } else if (op.kind === 'run-action') {
    const completions = emitted.filter(e => e.type === 'action.completed')
    if (op.step === 'pending') assert.is(completions.length, 1, `${label}: a pending action is failed once`)
    else assert.is(completions.length, 0, `${label}: a finished action is only committed`)
  }
}

async function runScript (crash?: { at: number, write: boolean }): Promise<RunResult> {
  const world = new UnitWorld()
  let crashed = false
  let crashedAt: string | undefined
  for (const [name, step] of script) {
    if (crash !== undefined && !crashed && world.persistCountOf(subject) < crash.at) {
      world.crashAtPersist(crash.at - world.persistCountOf(subject), crash.write, subject)
    }
    step(world)
    await world.settle()
    if (crash !== undefined && !crashed && world.persistCountOf(subject) >= crash.at && !world.running(subject) && !world.model.removedUnits.includes(subject)) {
      crashed = true
      const op = world.durable.get(subject)?.operation
      crashedAt = op === undefined ? 'nothing persisted' : `${op.kind}/${op.step}`
      await recoverAfterCrash(world, `crash at persist ${crash.at} (${crash.write ? 'after' : 'before'} the write, during "${name}")`)
    }
  }
  assert.equal(world.errors(), [])
  return { hooks: hooksOf(world), final: world.durable.get(subject), persists: world.persistCountOf(subject), crashed, crashedAt }
}

function withoutRunCount (local: LocalState | undefined): Omit<LocalState, 'hookRuns'> | undefined {
  if (local === undefined) return undefined
  const { hookRuns: _runs, ...rest } = local
  return rest
}

/** The crashed run may repeat the in-flight hook once and add restart-time leader-settings-changed. */
function sameHooksModuloRestart (reference: string[], actual: string[]): string | undefined {
  let i = 0
  let j = 0
  let repeats = 0
  while (j < actual.length) {
    if (i < reference.length && reference[i] === actual[j]) { i++; j++; continue }
    if (j > 0 && actual[j] === actual[j - 1] && repeats === 0) { repeats++; j++; continue }
    if (actual[j] === 'leader-settings-changed') { j++; continue }
    return `hook ${j} "${actual[j]}" not expected (reference has "${reference[i]}")\n  reference: ${JSON.stringify(reference)}\n  actual:    ${JSON.stringify(actual)}`
  }
  return i === reference.length ? undefined : `missing hooks from "${reference[i]}"\n  reference: ${JSON.stringify(reference)}\n  actual:    ${JSON.stringify(actual)}`
}

test('kill -9 at every step boundary resumes as §2.11 says and converges to the same state', async () => {
  const reference = await runScript()
  assert.ok(reference.final?.removed === true, 'the reference run ends with the unit removed')
  const covered = new Set<string>()
  let crashes = 0
  for (let at = 1; at <= reference.persists; at++) {
    for (const write of [false, true]) {
      const result = await runScript({ at, write })
      if (!result.crashed) continue
      crashes++
      covered.add(result.crashedAt ?? '')
      const label = `crash at persist ${at} ${write ? 'after' : 'before'} the write`
      // The run counter is bookkeeping: a crashed run may run a hook more (leader-settings-changed at restart).
      assert.equal(withoutRunCount(result.final), withoutRunCount(reference.final), `${label}: final durable state`)
      const mismatch = sameHooksModuloRestart(reference.hooks, result.hooks)
      assert.is(mismatch, undefined, `${label}: ${mismatch ?? ''}`)
    }
  }
  for (const state of ['install/pending', 'install/done', 'upgrade/pending', 'upgrade/done', 'run-hook/queued',
    'run-hook/pending', 'run-hook/done', 'run-action/pending', 'run-action/done', 'continue/pending']) {
    assert.ok(covered.has(state), `no crash left the durable operation at ${state}; covered: ${[...covered].sort().join(', ')}`)
  }
  assert.is(crashes, 2 * reference.persists, `crashed before and after each of the ${reference.persists} persisted steps of ${subject}`)
})

test.run()
