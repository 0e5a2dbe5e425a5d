import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cpuShareRate, expectedOf, nextJobIndex, nextSleeperIndex, planJobs, simulateRun, type Job } from '../scripts/test-schedule.ts'

/** scripts/test-schedule.ts: how npm test packs its files into jobs and its jobs onto the cores. */

const job = (name: string, expectedSeconds: number, demand: number): Job => ({ files: [name], expectedSeconds, demand })

test('a swarm\'s expected wall is its CPU over the cores, whatever the machine\'s load made its measured wall', () => {
  assert.equal(expectedOf({ 'sim-provisioning.test.ts': { wall: 161.5, cpu: 67.3 } }, 'sim-provisioning.test.ts', 2), { wall: 33.65, cpu: 67.3 })
  // The system swarm runs two workers too (runSwarm with jobs: 2): 82 CPU-s in 92 s of wall inside a whole run.
  assert.equal(expectedOf({ 'sim-system-swarm.test.ts': { wall: 92.3, cpu: 82.3 } }, 'sim-system-swarm.test.ts', 2), { wall: 41.15, cpu: 82.3 })
  assert.equal(expectedOf({ 'cli-e2e.test.ts': { wall: 118.8, cpu: 16.9 } }, 'cli-e2e.test.ts', 2), { wall: 118.8, cpu: 16.9 })
  assert.equal(expectedOf({}, 'new.test.ts', 2), { wall: 5, cpu: 2.5 })
})

test('slow files run alone, quick ones share a job, longest first', () => {
  const jobs = planJobs(['a.test.ts', 'b.test.ts', 'c.test.ts'], { 'a.test.ts': { wall: 60, cpu: 6 }, 'b.test.ts': { wall: 2, cpu: 2 }, 'c.test.ts': { wall: 3, cpu: 3 } }, 2)
  assert.equal(jobs.map(j => j.files), [['a.test.ts'], ['b.test.ts', 'c.test.ts']])
  assert.is(jobs[0]!.demand, 0.1)
  assert.is(jobs[1]!.demand, 1)
})

test('a swarm holding both cores for 43 s goes before a 60 s job that waits', () => {
  const jobs = planJobs(['sim-controller-group.test.ts', 'cli-e2e.test.ts'], { 'sim-controller-group.test.ts': { wall: 300, cpu: 86 }, 'cli-e2e.test.ts': { wall: 60, cpu: 6 } }, 2)
  assert.equal(jobs.map(j => j.files[0]), ['sim-controller-group.test.ts', 'cli-e2e.test.ts'])
})

test('a waiting job starts beside anything; a CPU-bound one only where the cores have room', () => {
  const swarm = job('swarm', 40, 2)
  const queue = [job('cpu', 30, 1), job('wait', 20, 0.1)]
  assert.is(nextJobIndex(queue, [], 2), 0, 'nothing runs: the longest starts')
  assert.is(nextJobIndex(queue, [swarm], 2), 1, 'a swarm runs: only the waiting job may start')
  assert.is(nextJobIndex([job('cpu', 30, 1)], [swarm], 2), -1)
  assert.is(nextJobIndex(queue, [job('other', 10, 1)], 2), 0, 'two one-core jobs fit on two cores')
})

test('the predicted run: waits overlap, CPU is shared', () => {
  assert.is(simulateRun([job('a', 100, 0), job('b', 100, 0)], 2, 2), 100)
  assert.is(simulateRun([job('a', 100, 0), job('b', 100, 0)], 1, 2), 200)
  // A third one-core job waits for room on two cores.
  assert.is(simulateRun([job('a', 100, 1), job('b', 100, 1), job('c', 100, 1)], 3, 2), 200)
  // Four waiting jobs wanting 2.2 cores of 2: their 220 CPU-s need 110 s of the two cores
  // (each one's CPU share slowed to 0.846: 45 s of waits + 55 / 0.846 s of CPU).
  assert.ok(Math.abs(simulateRun(['a', 'b', 'c', 'd'].map(n => job(n, 100, 0.55)), 4, 2) - 110) < 1e-6)
  // Never faster than the cores allow: a long job that waits beside CPU-bound ones.
  const mixed = [job('wait', 300, 0.2), job('cpu1', 100, 1), job('cpu2', 100, 1), job('cpu3', 100, 1)]
  assert.ok(simulateRun(mixed, 4, 2) >= (60 + 300) / 2 - 1e-6)
})

test('the CPU share\'s rate: 1 while the cores suffice, else the one that burns exactly the cores', () => {
  assert.is(cpuShareRate([0.5, 1, 0.5], 2), 1)
  assert.ok(Math.abs(cpuShareRate([1, 1, 1], 2) - 2 / 3) < 1e-9, 'three one-core jobs share two cores')
  assert.ok(Math.abs(cpuShareRate([2, 1], 2) - 2 / 3) < 1e-9, 'a swarm on both cores and a one-core job')
  const demands = [0.2, 0.55, 0.9, 1]
  const r = cpuShareRate(demands, 2)
  assert.ok(Math.abs(demands.reduce((n, d) => n + d * r / ((1 - d) * r + d), 0) - 2) < 1e-9)
})

test('a sleeper lane takes only the jobs that mostly wait, beside the lanes', () => {
  const queue = [job('cpu', 60, 1), job('half', 50, 0.5), job('sleeper', 40, 0.1)]
  assert.is(nextSleeperIndex(queue), 2)
  assert.is(nextSleeperIndex(queue.slice(0, 2)), -1, 'nothing that mostly waits: the sleeper lane starts nothing')
  // One lane runs cpu then half (110 s); the sleeper's 40 s of waiting overlap them.
  assert.ok(Math.abs(simulateRun(queue, 1, 2) - 150) < 1e-6)
  assert.ok(Math.abs(simulateRun(queue, 1, 2, 1) - 110) < 1e-6)
})

test.run()
