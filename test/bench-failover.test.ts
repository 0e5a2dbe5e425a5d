import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantripElectionEvents, electionTimes, etcdElectionEvents } from '../bench/election-log.ts'
import { summarise } from '../bench/failover-trials.ts'

// The failover bench's reading of each store's election log and its summary over trials
// (bench/failover-trials.ts). The wording is etcd raft's (raft.go: becomePreCandidate,
// becomeCandidate, becomeLeader log "%x became … at term %d"), which cantrip's core shares.

test('cantripd stderr lines give each election step with its time', () => {
  const text = [
    '2026-11-27T15:52:48.225Z INFO cantripd.oXfp.default.raft 12D3KooWA became pre-candidate at term 1',
    '2026-11-27T15:52:48.300Z INFO cantripd.oXfp.default.raft 12D3KooWA granted vote to 12D3KooWB for term 2',
    '2026-11-27T15:52:49.592Z INFO cantripd.oXfp.default.raft 12D3KooWA became candidate at term 2',
    '2026-11-27T15:52:49.632Z INFO cantripd.oXfp.default.raft 12D3KooWA became follower at term 2 (leader 12D3KooWB)',
    'not a log line',
    '2026-11-27T15:52:49.700Z INFO cantripd.oXfp.default.raft 12D3KooWB became leader at term 2'
  ].join('\n')
  assert.equal(cantripElectionEvents(text), [
    { atMs: Date.parse('2026-11-27T15:52:48.225Z'), step: 'pre-candidate', term: 1 },
    { atMs: Date.parse('2026-11-27T15:52:49.592Z'), step: 'candidate', term: 2 },
    { atMs: Date.parse('2026-11-27T15:52:49.700Z'), step: 'leader', term: 2 }
  ])
})

test('etcd zap lines give the same steps, whichever way zap wrote the offset', () => {
  const text = [
    '{"level":"info","ts":"2026-11-27T15:52:48.225Z","caller":"raft/raft.go:800","msg":"8e9e05c52164694d became pre-candidate at term 1"}',
    '{"level":"info","ts":"2026-11-27T15:52:48.331+0000","caller":"raft/raft.go:700","msg":"8e9e05c52164694d became leader at term 2"}',
    '{"level":"info","ts":"2026-11-27T15:52:48.400Z","msg":"published local member"}',
    'panic: not json'
  ].join('\n')
  assert.equal(etcdElectionEvents(text), [
    { atMs: Date.parse('2026-11-27T15:52:48.225Z'), step: 'pre-candidate', term: 1 },
    { atMs: Date.parse('2026-11-27T15:52:48.331Z'), step: 'leader', term: 2 }
  ])
})

test('a trial counts each step from the kill, first member first; steps before the kill do not count', () => {
  const kill = 1_000_000.4
  const events = [
    { atMs: 999_000, step: 'leader' as const, term: 1 },
    { atMs: 1_000_700, step: 'pre-candidate' as const, term: 1 },
    { atMs: 1_000_650, step: 'pre-candidate' as const, term: 1 },
    { atMs: 1_000_760, step: 'candidate' as const, term: 2 },
    { atMs: 1_000_800, step: 'leader' as const, term: 2 }
  ]
  assert.equal(electionTimes(events, kill), { preCandidateMs: 650, candidateMs: 760, leaderMs: 800 })
  assert.equal(electionTimes([], kill), { preCandidateMs: null, candidateMs: null, leaderMs: null })
})

test('the summary is median, p90 and max over recovered trials, with the unrecovered counted apart', () => {
  const trial = (ms: number | null, leaderMs: number | null): { ms: number | null, preCandidateMs: null, candidateMs: null, leaderMs: number | null } => ({ ms, preCandidateMs: null, candidateMs: null, leaderMs })
  const samples = [...[500, 600, 700, 800, 900, 1_000, 1_100, 1_200, 1_300].map(ms => trial(ms, ms - 100)), trial(2_000, null), trial(null, 900)]
  const f = summarise(samples, 600)
  assert.equal([f.trials, f.unrecovered, f.p50Ms, f.p90Ms, f.maxMs], [11, 1, 1_000, 2_000, 2_000])
  assert.is(f.parts.afterLeaderMs, 100)
  assert.is(f.parts.leaderMs, 900)
  assert.is(f.reason, undefined)
  const none = summarise([trial(null, null)], 600)
  assert.equal([none.p50Ms, none.p90Ms, none.maxMs, none.unrecovered], [null, null, null, 1])
  assert.match(none.reason!, 'no write succeeded within 30000 ms of the kill in any of 1 trials')
})

test.run()
