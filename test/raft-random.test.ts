/**
 * Randomized schedules against the Raft core, through the interaction harness: message
 * loss, duplication and reordering, partitions, crashes (also halfway through handling
 * a Ready) and restarts (also with the state machine rebuilt from the RaftSnapshot), log compaction,
 * membership changes, leadership transfers and reads, all drawn from a seed. After
 * every step the harness checks Raft's safety properties (one leader per term, applied
 * entries agree everywhere, a new leader holds every applied entry, no message judged
 * invalid). At the end the faults heal and the cluster must elect a leader and commit
 * a new entry on every voter within a tick budget.
 *
 * A failure prints the seed and the commands that led to it, which paste into a
 * test/testdata/raft script as they are. CANTRIP_LONG=1 runs many more seeds.
 */
import { writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { SeededRandom, type Random } from '../runtime/random.ts'
import { RaftInteractionEnv } from './support/raft-interaction.ts'

const long = process.env['CANTRIP_LONG'] === '1'
const seeds = long ? 2000 : 120
const stepsPerRun = 1000
const livenessRoundsMax = 400

interface Run {
  env: RaftInteractionEnv
  random: Random
  commands: string[]
  founders: string[]
  proposals: number
}

function run (r: Run, line: string): string {
  r.commands.push(line)
  const output = r.env.run(line)
  if (r.env.violations.length > 0) throw new Error(`raft random: safety violation after "${line}": ${r.env.violations.join('; ')}`)
  return output
}

function pick<T> (random: Random, items: readonly T[]): T {
  return items[random.int(0, items.length - 1)]!
}

function liveIds (r: Run): string[] {
  return [...r.env.nodes.values()].filter(n => n.node !== undefined).map(n => n.id)
}

/** One random step; the weights favour the ordinary life of a cluster over faults. */
function randomStep (r: Run): void {
  const { random, env } = r
  const live = liveIds(r)
  const all = [...env.nodes.keys()]
  const roll = random.int(1, 100)
  if (live.length === 0 || roll <= 3) {
    const down = all.filter(id => !live.includes(id))
    if (down.length > 0) run(r, `restart ${pick(random, down)}${random.next() < 0.5 ? ' from-snapshot' : ''}`)
    return
  }
  const id = pick(random, live)
  if (roll <= 20) {
    // Time passes for everyone.
    for (const each of live) run(r, `tick ${each}`)
  } else if (roll <= 26) run(r, `tick ${id} count=${random.int(1, 5)}`)
  else if (roll <= 42) run(r, `process-ready ${id}`)
  else if (roll <= 64) deliverSome(r, id)
  else if (roll <= 74) run(r, `propose ${id} p${r.proposals++}`)
  else if (roll <= 77) run(r, `partition ${randomPartition(r)}`)
  else if (roll <= 80) run(r, 'heal')
  else if (roll <= 81) run(r, `crash ${id}`)
  else if (roll <= 82) run(r, `process-ready ${id} crash`)
  else if (roll <= 85) compactSome(r, id)
  else if (roll <= 88) changeMembership(r, id)
  else if (roll <= 91) run(r, `read-index ${id} r${r.proposals++}`)
  else if (roll <= 92) run(r, `transfer-leadership ${id} ${pick(random, all)}`)
  else run(r, `stabilize ${live.join(' ')}`)
}

function deliverSome (r: Run, id: string): void {
  const waiting = r.env.network.filter(m => m.to === id).length
  if (waiting === 0) return
  const nth = r.random.int(1, waiting)
  const roll = r.random.int(1, 10)
  if (roll === 1) run(r, `deliver-msgs ${id} nth=${nth} drop`)
  else if (roll === 2) run(r, `deliver-msgs ${id} nth=${nth} keep`)
  else if (roll <= 5) run(r, `deliver-msgs ${id} nth=${nth}`)
  else run(r, `deliver-msgs ${id}`)
}

function randomPartition (r: Run): string {
  const ids = [...r.env.nodes.keys()]
  const left = ids.filter(() => r.random.next() < 0.5)
  const right = ids.filter(id => !left.includes(id))
  return [...left, '|', ...right].join(' ')
}

function compactSome (r: Run, id: string): void {
  const world = r.env.nodes.get(id)!
  const from = world.storage.snapshot().metadata.index
  if (world.appliedIndex <= from) return
  run(r, `compact ${id} ${r.random.int(from + 1, world.appliedIndex)}`)
}

function changeMembership (r: Run, id: string): void {
  const config = r.env.nodes.get(id)!.node!.status().config.voters
  const outsiders = [...r.env.nodes.keys()].filter(n => !config.includes(n))
  if (outsiders.length > 0 && (config.length <= 2 || r.random.next() < 0.5)) run(r, `add-voter ${id} ${pick(r.random, outsiders)}`)
  else run(r, `remove-voter ${id} ${pick(r.random, config)}`)
}

/** Heal everything, then tick and stabilize until a fresh entry is applied on every voter. */
function checkLiveness (r: Run): void {
  run(r, 'heal')
  for (const world of r.env.nodes.values()) if (world.node === undefined) run(r, `restart ${world.id}`)
  const marker = `final-${r.proposals}`
  let proposedAt: string | undefined
  for (let round = 0; round < livenessRoundsMax; round++) {
    const ids = [...r.env.nodes.keys()]
    run(r, `stabilize ${ids.join(' ')}`)
    const leader = ids.find(id => r.env.nodes.get(id)!.node!.status().role === 'leader')
    if (leader !== undefined && proposedAt === undefined) {
      if (run(r, `propose ${leader} ${marker}`).startsWith('accepted')) proposedAt = leader
    }
    if (leader !== undefined && proposedAt !== undefined && markerEverywhere(r, leader, marker)) return
    if (proposedAt !== undefined && leader !== proposedAt) proposedAt = undefined
    for (const id of ids) run(r, `tick ${id}`)
  }
  throw new Error(`raft random: no leader committed "${marker}" on every voter within ${livenessRoundsMax} rounds`)
}

function markerEverywhere (r: Run, leader: string, marker: string): boolean {
  const voters = r.env.nodes.get(leader)!.node!.status().config.voters
  return voters.every(id => r.env.nodes.get(id)!.machine.some(e => e.text === marker))
}

function runSeed (seed: number): void {
  const random = new SeededRandom(seed)
  const env = new RaftInteractionEnv()
  const size = random.next() < 0.5 ? 3 : 5
  const founders = Array.from({ length: size }, (_, i) => String(i + 1))
  const r: Run = { env, random, commands: [], founders, proposals: 0 }
  const options = [
    `heartbeat=${random.int(1, 3)}`,
    random.next() < 0.3 ? 'max-size=32' : '',
    random.next() < 0.3 ? `max-inflight=${random.int(1, 3)}` : '',
    'snapshot-timeout=30',
    // Safety must not depend on either; liveness after healing neither.
    random.next() < 0.15 ? 'prevote=false' : '',
    random.next() < 0.15 ? 'checkquorum=false' : ''
  ].filter(o => o !== '').join(' ')
  try {
    run(r, 'log-level silent')
    run(r, `add-nodes ${size} voters=(${founders.join(',')}) ${options}`)
    run(r, `add-nodes 2 ${options}`)
    for (let step = 0; step < stepsPerRun; step++) randomStep(r)
    checkLiveness(r)
  } catch (err) {
    const dump = process.env['RAFT_RANDOM_DUMP']
    if (dump !== undefined) writeFileSync(dump, r.commands.map(c => `${c}\n----\n`).join('\n'))
    const script = r.commands.slice(-60).map(c => `${c}\n----\n`).join('\n')
    throw new Error(`raft random: seed ${seed} failed: ${(err as Error).message}\nlast commands:\n${script}`, { cause: err })
  }
}

test(`raft random schedules: safety at every step and liveness after healing (${seeds} seeds)`, () => {
  for (let seed = 1; seed <= seeds; seed++) runSeed(seed)
  assert.ok(true)
})

test('raft random schedules: the same seed gives the same run', () => {
  const trace = (seed: number): string => {
    const random = new SeededRandom(seed)
    const env = new RaftInteractionEnv()
    const r: Run = { env, random, commands: [], founders: ['1', '2', '3'], proposals: 0 }
    const outputs = [run(r, 'add-nodes 3 voters=(1,2,3)')]
    for (let step = 0; step < 200; step++) {
      const before = r.commands.length
      randomStep(r)
      if (r.commands.length > before) outputs.push(env.run(`raft-state`))
    }
    return r.commands.join('\n') + outputs.join('\n')
  }
  assert.is(trace(7), trace(7))
  assert.is.not(trace(7), trace(8))
})

test.run()
