/**
 * The chaos run's record (issue 28, item 5) without running any chaos: reportFigures
 * appends a record only to the file a chaos run names, the records and each file's
 * verdict become the summary (a suite that did not report is null with the reason, never
 * zero), the totals sum what a reader looks for, every suite the chaos files report is
 * promised, and every committed bench/results/*-chaos.json holds the keys.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  chaosFiguresVariable, chaosPromises, chaosRecordingWanted, chaosSummary, checkChaosResults, fileVerdicts, parseFigureLines,
  type ChaosRunFacts, type FigureRecord, type FileVerdict
} from '../scripts/chaos-results.ts'
import { appendFigureRecord, callerTestFile, chaosFull, figureRecord, reportFigures, reportSkipped } from './chaos/support/chaos-scale.ts'

const root = join(import.meta.dirname, '..')

const facts: ChaosRunFacts = {
  startedAt: '2026-11-27T21:00:00.000Z',
  measuredAt: '2026-11-27T21:10:00.000Z',
  commit: 'abc123',
  machine: { cores: 2, cpu: 'AMD EPYC', memoryBytes: 25e9, node: 'v20.20.2' },
  load: { start: [20, 30, 35], end: [25, 30, 34] },
  fraction: 0.02,
  seed: undefined,
  pattern: '^chaos/.*\\.test\\.ts$',
  runSeconds: 600,
  cpuSeconds: 300
}

/** Every promised suite reporting every promised figure (1 each), as a complete passing run would. */
function completeRecords (): FigureRecord[] {
  return Object.entries(chaosPromises).flatMap(([file, promises]) => promises.map(p => ({
    suite: p.suite, file, run: 'full' as const, fraction: 0.02, seedEnv: undefined, figures: Object.fromEntries(p.figures.map(f => [f, 1]))
  })))
}
const allFiles = Object.keys(chaosPromises)
const allPassed = (): Map<string, FileVerdict> => new Map(allFiles.map(f => [f, { outcome: 'passed' }]))

test('reportFigures appends a record only where a chaos run names a file, and keeps NaN as text', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-chaos-results-'))
  const path = join(dir, 'figures.jsonl')
  const before = process.env[chaosFiguresVariable]
  try {
    delete process.env[chaosFiguresVariable]
    reportFigures('unnamed', { trials: 1 })
    assert.not.ok(existsSync(path), 'no file named, nothing written')
    process.env[chaosFiguresVariable] = path
    reportFigures('named', { trials: 2, acknowledged: 60, lost: 0, electionP99Ms: Number.NaN, rejected: 'usage:3' })
    reportSkipped('skipped-suite', 'needs root for network namespaces')
    const { records, problems } = parseFigureLines(readFileSync(path, 'utf8'))
    assert.equal(problems, [])
    assert.is(records.length, 2)
    assert.equal(records[0], { suite: 'named', file: 'chaos-results.test.ts', run: chaosFull ? 'full' : 'sample', fraction: records[0]!.fraction, figures: { trials: 2, acknowledged: 60, lost: 0, electionP99Ms: 'NaN', rejected: 'usage:3' } })
    assert.is(records[1]!.skipped, 'needs root for network namespaces')
    assert.equal(records[1]!.figures, {})
  } finally {
    if (before === undefined) delete process.env[chaosFiguresVariable]
    else process.env[chaosFiguresVariable] = before
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a record names the test file that called; a malformed line is a problem, not dropped', () => {
  const stack = 'Error\n    at reportFigures (file:///w/test/chaos/support/chaos-scale.ts:40:3)\n    at Object.handler (file:///w/test/chaos/controller-kill.test.ts:89:5)'
  assert.is(callerTestFile(stack), 'chaos/controller-kill.test.ts')
  assert.is(callerTestFile('Error\n    at x (file:///w/scripts/run.ts:1:1)'), undefined)
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-chaos-results-'))
  try {
    const path = join(dir, 'figures.jsonl')
    appendFigureRecord(path, figureRecord('a', { trials: 1 }, 'chaos/a.test.ts'))
    appendFigureRecord(undefined, figureRecord('b', { trials: 1 }, undefined))
    const { records, problems } = parseFigureLines(readFileSync(path, 'utf8') + '{"suite": "half\n{"suite":"c","figures":{"x":null}}\n')
    assert.equal(records.map(r => r.suite), ['a'])
    assert.is(problems.length, 2)
    assert.match(problems[0]!, /^chaos figures: expected a JSON figure record, got "\{\\"suite\\": \\"half"/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('only a chaos run that selects a chaos file records; npm test never does', () => {
  assert.ok(chaosRecordingWanted({ CANTRIP_CHAOS: '1' }, ['chaos/fuzz-cli.test.ts']))
  assert.not.ok(chaosRecordingWanted({}, ['chaos/fuzz-cli.test.ts', 'raft.test.ts']))
  assert.not.ok(chaosRecordingWanted({ CANTRIP_CHAOS: '0' }, ['chaos/fuzz-cli.test.ts']))
  assert.not.ok(chaosRecordingWanted({ CANTRIP_CHAOS: '1' }, ['raft.test.ts']))
})

test('each file of a job gets its verdict: passed, failed with the FAIL lines, crashed, not run', () => {
  const files = ['chaos/a.test.ts', 'chaos/b.test.ts', 'chaos/c.test.ts']
  assert.equal([...fileVerdicts(files, 'anything', true).values()].map(v => v.outcome), ['passed', 'passed', 'passed'])
  const failing = 'chaos/a.test.ts\n a  •  (1 / 1)\n\nchaos/b.test.ts\n b  ✘   (0 / 1)\n\n   FAIL  b  "kills"\n    acknowledged writes lost  (is)\n\nchaos/c.test.ts\n c  •  (1 / 1)\n\n  Total:     3\n  Passed:    2\n'
  const v = fileVerdicts(files, failing, false)
  assert.equal(v.get('chaos/a.test.ts'), { outcome: 'passed' })
  assert.is(v.get('chaos/b.test.ts')!.outcome, 'failed')
  assert.match((v.get('chaos/b.test.ts') as { reason: string }).reason, /^ {3}FAIL {2}b {2}"kills"\n {4}acknowledged writes lost/)
  assert.equal(v.get('chaos/c.test.ts'), { outcome: 'passed' })
  // A crash or a timeout marks no test: the file that was running failed and the ones after it never started.
  const crashed = fileVerdicts(files, 'chaos/a.test.ts\n a  •  (1 / 1)\n\nchaos/b.test.ts\nError: listen EADDRINUSE\n\nrun-tests: chaos/a.test.ts, chaos/b.test.ts, chaos/c.test.ts: killed after 14400 s\n', false)
  assert.equal(crashed.get('chaos/a.test.ts'), { outcome: 'passed' })
  assert.is(crashed.get('chaos/b.test.ts')!.outcome, 'failed')
  assert.match((crashed.get('chaos/b.test.ts') as { reason: string }).reason, 'killed after 14400 s')
  assert.is(crashed.get('chaos/c.test.ts')!.outcome, 'not run')
})

test('a complete passing run: every suite with its figures, the totals summed, the keys all there', () => {
  const records = completeRecords()
  const kill = records.find(r => r.suite === 'controller-kill 3 controllers')!
  Object.assign(kill.figures, { seed: 650_990, trials: 2, acknowledged: 120, lost: 0, duplicates: 0, electionP50Ms: 700, electionP99Ms: 1_400 })
  const summary = chaosSummary(facts, allFiles, records, allPassed(), [], new Map([['chaos/controller-kill.test.ts', { wall: 300.4, cpu: 90 }]]))
  assert.equal(checkChaosResults(summary), [])
  assert.is(summary['complete'], true)
  assert.is(summary['commit'], 'abc123')
  assert.is(summary['seed'], null)
  const totals = summary['totals'] as Record<string, unknown>
  const promisedCount = (key: string): number => Object.values(chaosPromises).flat().filter(p => p.figures.includes(key)).length
  // Every other suite reported 1 for each figure it promises; the 3-controller kill reported its own.
  assert.is(totals['trials'], promisedCount('trials') - 1 + 2)
  assert.is(totals['acknowledged'], promisedCount('acknowledged') - 1 + 120)
  assert.is(totals['lost'], promisedCount('lost') - 1 + promisedCount('lostDiskFull') + promisedCount('lostIoError'))
  assert.is(totals['appliedTwice'], promisedCount('duplicates') - 1)
  assert.ok((totals['fuzzInputs'] as number) >= 19, 'every fuzzed decoder counted')
  assert.is((totals['seeds'] as Record<string, number>)['controller-kill 3 controllers'], 650_990)
  assert.equal((totals['latenciesMs'] as Record<string, Record<string, number>>)['controller-kill 3 controllers']!['electionP99Ms'], 1_400)
  assert.equal(totals['suitesFailed'], [])
  assert.equal(totals['suitesWithoutFigures'], [])
  assert.equal((summary['files'] as Record<string, unknown>)['chaos/controller-kill.test.ts'], { outcome: 'passed', wallSeconds: 300, cpuSeconds: 90 })
})

test('a crashed or failed suite is recorded as missing with the reason, never as zero', () => {
  const records = completeRecords().filter(r => !r.file!.includes('controller-kill') && r.suite !== 'controller-partition unit')
  const partition = records.find(r => r.suite === 'controller-partition')!
  delete partition.figures['convergeMaxMs']
  const multiHost = records.findIndex(r => r.suite === 'multi-host')
  records[multiHost] = { ...records[multiHost]!, figures: {}, skipped: 'needs root for network namespaces (running as uid 1000)' }
  const verdicts = allPassed()
  verdicts.set('chaos/controller-kill.test.ts', { outcome: 'failed', reason: 'its uvu process failed with no test marked failed (a crash or a timeout)' })
  verdicts.set('chaos/controller-partition.test.ts', { outcome: 'failed', reason: 'FAIL  partition  "converge"' })
  records.push({ ...records[0]!, figures: { ...records[0]!.figures } })
  const summary = chaosSummary(facts, allFiles, records, verdicts)
  assert.equal(checkChaosResults(summary), [])
  const suites = summary['suites'] as Record<string, Record<string, unknown>>
  for (const name of ['controller-kill 3 controllers', 'controller-kill 5 controllers', 'controller-kill all at once']) {
    assert.is(suites[name]!['figures'], null, name)
    assert.is(suites[name]!['passed'], false)
    assert.match(suites[name]!['reason'] as string, 'failed: its uvu process failed with no test marked failed')
  }
  assert.equal(suites['controller-partition']!['missing'], ['convergeMaxMs'])
  assert.is(suites['controller-partition']!['passed'], false)
  assert.is(suites['controller-partition unit']!['figures'], null)
  assert.is(suites['multi-host']!['skipped'], 'needs root for network namespaces (running as uid 1000)')
  assert.is(suites['multi-host']!['passed'], true)
  assert.is(suites['multi-host']!['missing'], undefined, 'a skipped suite is not missing figures')
  assert.ok(suites[`${records[0]!.suite} #2`], 'a second report of one suite is kept beside the first')
  const totals = summary['totals'] as Record<string, string[]>
  assert.equal(totals['suitesWithoutFigures'], ['controller-kill 3 controllers', 'controller-kill 5 controllers', 'controller-kill all at once', 'controller-partition unit'])
  assert.equal(totals['suitesSkipped'], ['multi-host'])
  assert.ok(totals['suitesFailed']!.includes('controller-partition'))
  // A promised suite that a passing file never reported is named as such.
  const silent = chaosSummary(facts, ['chaos/uniter-kill.test.ts'], [], new Map([['chaos/uniter-kill.test.ts', { outcome: 'passed' }]]))
  assert.is((silent['suites'] as Record<string, Record<string, unknown>>)['uniter-kill']!['reason'], 'the file passed but never reported these figures')
  assert.is(silent['complete'], false)
})

test('checkChaosResults names each missing or malformed key', () => {
  assert.ok(checkChaosResults(undefined).includes('chaos results: expected commit, got nothing'))
  const summary = chaosSummary(facts, allFiles, completeRecords(), allPassed())
  ;(summary['load'] as Record<string, unknown>)['end'] = [1]
  summary['fraction'] = 0
  const suites = summary['suites'] as Record<string, Record<string, unknown>>
  delete suites['fuzz-wire']
  suites['uniter-kill'] = { file: 'chaos/uniter-kill.test.ts', passed: false, figures: null }
  assert.equal(checkChaosResults(summary), [
    'chaos results: expected load.end to be three load averages, got [1]',
    'chaos results: expected fraction in (0, 1], got 0',
    'chaos results: expected suite "fuzz-wire" (chaos/fuzz-wire.test.ts), got nothing',
    'chaos results: expected suites["uniter-kill"] without figures to say why, got no reason',
    'chaos results: expected failed suite "uniter-kill" to say why, got no reason'
  ])
})

test('every chaos file is promised, and every suite name its source reports is among the promises', () => {
  const chaosDir = join(root, 'test', 'chaos')
  const files = readdirSync(chaosDir).filter(f => f.endsWith('.test.ts')).map(f => `chaos/${f}`).sort()
  assert.equal(Object.keys(chaosPromises).sort(), files)
  for (const file of files) {
    const source = readFileSync(join(root, 'test', file), 'utf8')
    const promised = chaosPromises[file]!.map(p => p.suite)
    const literal = [...source.matchAll(/report(?:Figures|Skipped)\('([^']+)'/g)].map(m => m[1]!)
    for (const name of literal) assert.ok(promised.includes(name), `${file} reports "${name}", which chaosPromises does not list`)
    // Names built in a template (controller-kill's per group size) are checked by their fixed start.
    const templates = [...source.matchAll(/report(?:Figures|Skipped)\(`([^`$]+)\$/g)].map(m => m[1]!)
    for (const start of templates) assert.ok(promised.some(p => p.startsWith(start)), `${file} reports "${start}…", which chaosPromises does not list`)
    assert.ok(literal.length + templates.length > 0, `${file} reports no figures`)
  }
})

test('every committed chaos results file holds the keys', () => {
  const dir = join(root, 'bench', 'results')
  const files = readdirSync(dir).filter(f => f.endsWith('-chaos.json'))
  assert.ok(files.length > 0, 'the README cites a recorded chaos run')
  for (const file of files) assert.equal(checkChaosResults(JSON.parse(readFileSync(join(dir, file), 'utf8'))), [], file)
})

test.run()
