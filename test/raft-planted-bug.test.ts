/**
 * The bug planted on purpose in the Raft core (the simulator's commit rule for
 * 'raft-commit-previous-term', sim/raft-planted-bugs.ts, given as RaftOptions.commitRule),
 * which exists only so the simulator can prove it finds this class of bug. It replays Figure 8 of the Raft paper (test/testdata/raft/figure-8.txt:
 * 5 nodes, one entry per message, messages driven by hand) twice: without the bug the
 * old leader never commits 3@2 and nothing committed is ever overwritten; with it the
 * old leader counts replicas, commits and applies 3@2, and the next leader overwrites it
 * with 3@3, which the interaction world's state-machine and leader-completeness checks report.
 */
import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { raftCommitRule } from '../runtime/raft/commit-rule.ts'
import { MemoryRaftStorage } from '../runtime/raft/memory-raft-storage.ts'
import { RawNode } from '../runtime/raft/raw-node.ts'
import { SeededRandom } from '../runtime/random.ts'
import { plantedCommitRule } from '../sim/raft-planted-bugs.ts'
import type { PlantedBug } from '../sim/scenario/scenario-types.ts'
import { runControllerGroupFaults } from '../sim/scenarios/controller-group-faults.ts'
import { RaftInteractionEnv, parseScript } from './support/raft-interaction.ts'

const script = parseScript(readFileSync(new URL('./testdata/raft/figure-8.txt', import.meta.url), 'utf8'))

interface Figure8Run {
  env: RaftInteractionEnv
  /** Node 1's commit index once it has brought 3 and 4 up to 3@2 in term 4. */
  oldLeaderCommit: number
  /** What node 1 applied at index 3 (term), if anything. */
  oldLeaderApplied: number | undefined
}

/** Runs the Figure 8 script with or without the planted bug (only the add-nodes line differs). */
function runFigure8 (bug: boolean): Figure8Run {
  const env = new RaftInteractionEnv()
  let oldLeaderCommit = -1
  let addNodesSeen = false
  for (const step of script) {
    let line = step.line
    if (line.startsWith('add-nodes')) {
      addNodesSeen = true
      if (bug) line += ' planted-bug=raft-commit-previous-term'
    }
    // The script asks for node 1's status just before it crashes in step (d).
    if (line === 'status 1') oldLeaderCommit = env.nodes.get('1')!.node!.status().commit
    env.run(line)
  }
  assert.ok(addNodesSeen, 'the script starts its nodes with add-nodes')
  assert.ok(oldLeaderCommit >= 0, 'the script reached "status 1"')
  const applied = env.nodes.get('1')!.machine.find(e => e.index === 3)
  return { env, oldLeaderCommit, oldLeaderApplied: applied?.term }
}

test('figure 8 without the planted bug: 3@2 on a majority is not committed in term 4, and its overwrite harms nothing', () => {
  const run = runFigure8(false)
  assert.is(run.oldLeaderCommit, 2, 'the term-4 leader keeps its commit at 2')
  assert.is(run.oldLeaderApplied, undefined, 'nothing was applied at 3 by the old leader')
  const log2 = run.env.nodes.get('2')!.storage
  assert.is(log2.term(3), 3, 'the term-5 leader overwrote 3@2 with 3@3')
  assert.equal(run.env.violations, [])
})

test('figure 8 with the planted bug: the term-4 leader commits and applies 3@2, the term-5 leader overwrites it, and the checks say so', () => {
  const run = runFigure8(true)
  assert.is(run.oldLeaderCommit, 3, 'the term-4 leader counted replicas of 3@2 and committed it')
  assert.is(run.oldLeaderApplied, 2, 'the old leader applied 3@2')
  const log2 = run.env.nodes.get('2')!.storage
  assert.is(log2.term(3), 3, 'the term-5 leader overwrote the committed 3@2 with 3@3')
  const text = run.env.violations.join('\n')
  assert.match(text, /5 leads term 5 without applied entry 3@2/, 'leader completeness is broken')
  assert.match(text, /applied 3@3 "" but 1 applied 3@2 "x"/, 'state-machine safety is broken')
})

test('planted bug: off unless asked for, and only the one known name is accepted', () => {
  const storage = MemoryRaftStorage.bootstrap(['1'])
  const base = { id: '1', storage, random: new SeededRandom(1), electionTicks: 10, heartbeatTicks: 1 }
  assert.not.throws(() => new RawNode(base))
  // The rule every shipped host gets demands the leader's own term; the planted one the entry's.
  const log = { term: (index: number) => index === 3 ? 2 : undefined }
  assert.is(raftCommitRule.requiredTerm(3, 4, log), 4)
  assert.is(plantedCommitRule('raft-commit-previous-term').requiredTerm(3, 4, log), 2)
  assert.not.throws(() => new RawNode({ ...base, commitRule: plantedCommitRule('raft-commit-previous-term') }))
  assert.throws(() => plantedCommitRule('commit-everything' as PlantedBug), /planted bug must be one of \["raft-commit-previous-term"\], got "commit-everything"/)
})

/**
 * The bug only shows when a new leader's catch-up of a follower spans several append
 * messages (the follower acknowledges old-term entries before the leader's own entry),
 * so the fault scenario runs with 1 KiB messages. Measured since followers answer on the
 * leader's own requests (raft-host.ts): the first failing seed was 42 (2 of seeds 1..300
 * fail: 42 and 201); before that change it was 15 (2 of 1..500; none of 1..2000 at the
 * default 512 KiB). Since a candidate whose election timed out backs off (raft.ts) and a
 * send waits longer for its answer, it was 117 (2 of 1..400: 117 and 347). Since the
 * leader commits the proposals that arrive while its last grouped entry applies as one
 * entry (group commit), fewer, larger entries make the catch-up span fewer messages: it
 * is 265 (3 of 1..1200: 265, 618 and 901; at 512-byte messages 1 of 1..400, seed 140).
 *
 * `npm test` tries that seed first and searches the rest of 1..300 only if it passes:
 * the same claim (a seed in 1..300 breaks the commit rule and passes without the bug) at
 * one seed's cost, where running the 264 seeds below it was 16.5 of this file's 16.9
 * CPU-s inside a whole run. A change that moves the simulated trajectories still passes
 * (at the search's cost) and prints the seed to pin. CANTRIP_LONG=1 (`npm run
 * test:long`) searches 1..300 in order, as before, so the first seed it finds is also the
 * first failing one.
 */
const messageBytes = 1024
const seedsSearched = 300
const pinnedSeed = 265

function seedsToTry (): number[] {
  const inOrder = Array.from({ length: seedsSearched }, (_, i) => i + 1)
  return process.env['CANTRIP_LONG'] === '1' ? inOrder : [pinnedSeed, ...inOrder.filter(seed => seed !== pinnedSeed)]
}

test(`the controller-group fault swarm finds the planted bug as a commit-rule violation within seeds 1..${seedsSearched} (${pinnedSeed} first), and the same seed passes without it`, async () => {
  const found: number[] = []
  for (const seed of seedsToTry()) {
    const result = await runControllerGroupFaults({ seed, maxSizePerMessage: messageBytes, plantedBug: 'raft-commit-previous-term' })
    if (result.kind === 'safety') {
      assert.match(result.failure ?? '', /commit rule: c\d \(term \d+\) committed \d+ whose entry is of term \d+/)
      found.push(seed)
      break
    }
  }
  assert.ok(found.length > 0, `a safety failure within seeds 1..${seedsSearched}`)
  if (found[0] !== pinnedSeed) console.error(`raft-planted-bug: seed ${pinnedSeed} no longer breaks the commit rule, seed ${String(found[0])} does: pin it in pinnedSeed`)
  for (const seed of found) {
    const clean = await runControllerGroupFaults({ seed, maxSizePerMessage: messageBytes })
    assert.is(clean.failure, undefined, `seed ${seed} passes without the bug`)
  }
})

test.run()
