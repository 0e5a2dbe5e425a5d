/**
 * The per-run report of `cantrip sim --report DIR` (sim/report/): one self-contained
 * HTML page with an SVG timeline, and a JSON summary, built from a hand-written but
 * realistic RunRecord (3 controllers, 2 machine agents, a leader crash, a partition, a
 * skipped fault, hooks that fail and are retried, a violation).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { FaultEvent, RunEvent, RunRecord } from '../sim/scenario/scenario-types.ts'
import { escapeXml } from '../sim/report/escape.ts'
import { reportHooksPerUnitMax, reportSpansPerLaneMax } from '../sim/report/report-model.ts'
import { tickStep } from '../sim/report/report-svg.ts'
import type { RunSummary } from '../sim/report/report-summary.ts'
import { writeReport } from '../sim/report/write-report.ts'

const dirs: string[] = []
function tempDir (): string {
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-sim-report-'))
  dirs.push(dir)
  return dir
}
test.after.each(() => { for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true }) })

const crash: FaultEvent = { at: 5_000, kind: 'crash', target: 'leader' }
const partition: FaultEvent = { at: 9_000, kind: 'partition', shape: 'majority-minority', minority: 1, forMs: 4_000 }
const pause: FaultEvent = { at: 10_000, kind: 'pause', target: 'machine/1', forMs: 2_000 }
const skippedHang: FaultEvent = { at: 11_000, kind: 'hook-hang', unit: 'web/9', hook: 'install' }

/** A run of `leader-crash-during-deploy`: 3 controllers, machines 0 and 1, kv/0 kv/1 web/0. */
function record (extra: RunEvent[] = [], outcome: 'pass' | 'safety' = 'safety'): RunRecord {
  const events: RunEvent[] = [
    { t: 0, kind: 'phase', phase: 'setup' },
    { t: 0, kind: 'agent', agent: 'c0', state: 'up' },
    { t: 0, kind: 'agent', agent: 'c1', state: 'up' },
    { t: 0, kind: 'agent', agent: 'c2', state: 'up' },
    { t: 150, kind: 'term', term: 2, leader: 'c0' },
    { t: 1_200, kind: 'agent', agent: 'machine-0', state: 'up' },
    { t: 1_500, kind: 'agent', agent: 'machine-1', state: 'up' },
    { t: 2_000, kind: 'phase', phase: 'faults' },
    { t: 2_100, kind: 'command', text: 'add-unit kv 1', ok: true },
    { t: 1_300, kind: 'hook', unit: 'kv/0', machine: 'machine-0', hook: 'install', start: 1_250, outcome: 'succeeded' },
    { t: 1_700, kind: 'hook', unit: 'kv/1', machine: 'machine-1', hook: 'install', start: 1_600, outcome: 'failed' },
    { t: 3_000, kind: 'hook', unit: 'kv/1', machine: 'machine-1', hook: 'install', start: 2_700, outcome: 'succeeded' },
    { t: 4_000, kind: 'hook', unit: 'web/0', machine: 'machine-0', hook: 'install', start: 3_500, outcome: 'terminated' },
    { t: 5_000, kind: 'fault', fault: crash, text: 'crash leader (c0)' },
    { t: 5_000, kind: 'agent', agent: 'c0', state: 'down' },
    { t: 5_000, kind: 'term', term: 2, leader: undefined },
    { t: 5_400, kind: 'term', term: 3, leader: 'c1' },
    { t: 9_000, kind: 'fault', fault: partition, text: 'partition majority-minority (minority: c2) for 4s' },
    { t: 10_000, kind: 'fault', fault: pause, text: 'pause machine/1 for 2s' },
    { t: 10_000, kind: 'agent', agent: 'machine-1', state: 'paused' },
    { t: 11_000, kind: 'fault', fault: skippedHang, text: 'hook-hang web/9 install', skipped: 'no unit web/9' },
    { t: 12_000, kind: 'agent', agent: 'machine-1', state: 'up' },
    { t: 12_500, kind: 'violation', check: 'raft safety', message: 'commit rule: c1 (term 3) committed 7 whose entry is of term 2 <&>' },
    { t: 15_000, kind: 'phase', phase: 'heal' },
    { t: 15_000, kind: 'agent', agent: 'c0', state: 'up' },
    { t: 15_100, kind: 'phase', phase: 'liveness' },
    { t: 16_000, kind: 'hook', unit: 'web/0', machine: 'machine-0', hook: 'start', start: 15_800, outcome: 'succeeded' },
    { t: 2_000, kind: 'units', active: 0, total: 3 },
    { t: 8_000, kind: 'units', active: 1, total: 3 },
    { t: 16_500, kind: 'units', active: 3, total: 3 },
    { t: 20_000, kind: 'phase', phase: 'done' },
    ...extra
  ]
  return {
    events,
    result: {
      scenario: 'leader-crash-during-deploy',
      seed: 7,
      hash: '9f86d081884c7d65',
      outcome,
      ...(outcome === 'safety' ? { failure: 'safety at 12.5 s: raft safety: commit rule broken' } : {}),
      simulatedMs: 20_000,
      wallMs: 812,
      faults: [crash, partition, pause, skippedHang],
      convergedAtMs: 16_500,
      counts: { controllers: 3, machines: 2, units: 3, hooks: 5, hookFailures: 1, leaderTerms: 2, commands: 1, invariantChecks: 420 },
      replay: 'cantrip sim examples/sim/leader-crash-during-deploy.yaml --seed 7 --report out/'
    }
  }
}

/** Balanced tags: every opened element is closed in order (void HTML elements and self-closing tags aside). */
function tagProblems (markup: string): string[] {
  const voids = new Set(['meta', 'br', 'hr', 'img', 'input', 'link'])
  const stack: string[] = []
  const problems: string[] = []
  const body = markup.replace(/<!DOCTYPE[^>]*>/i, '').replace(/<style>[\s\S]*?<\/style>/, '')
  for (const match of body.matchAll(/<(\/?)([a-zA-Z][\w-]*)([^<>]*?)(\/?)>/g)) {
    const [, closing, name, , selfClosing] = match
    if (selfClosing === '/' || voids.has(name!)) continue
    if (closing === '') stack.push(name!)
    else if (stack.pop() !== name) problems.push(`unbalanced </${name}> at ${match.index}`)
  }
  if (stack.length > 0) problems.push(`unclosed: ${stack.join(', ')}`)
  // A stray < or > outside tags means unescaped text.
  const text = body.replace(/<(\/?)([a-zA-Z][\w-]*)([^<>]*?)(\/?)>/g, '')
  if (/[<>]/.test(text)) problems.push(`unescaped markup in text: ${text.match(/.{0,30}[<>].{0,30}/)![0]}`)
  return problems
}

test('writeReport writes <scenario>-<seed>.html and .json into the directory, creating it', () => {
  const dir = join(tempDir(), 'out', 'nested')
  const paths = writeReport(record(), dir)
  assert.is(paths.html, join(dir, 'leader-crash-during-deploy-7.html'))
  assert.is(paths.json, join(dir, 'leader-crash-during-deploy-7.json'))
  assert.ok(readFileSync(paths.html, 'utf8').startsWith('<!DOCTYPE html>'))
  assert.ok(JSON.parse(readFileSync(paths.json, 'utf8')))
  const again = writeReport(record(), tempDir())
  assert.is(readFileSync(again.html, 'utf8'), readFileSync(paths.html, 'utf8'), 'the same record gives the same page (no wall-clock stamps)')
  assert.is(readFileSync(again.json, 'utf8'), readFileSync(paths.json, 'utf8'))
})

test('the HTML is self-contained, balanced and draws lanes, terms, faults, hooks, the curve and the violation', () => {
  const html = readFileSync(writeReport(record(), tempDir()).html, 'utf8')
  assert.equal(tagProblems(html), [])
  assert.not.match(html, /<script|<link|@import|url\(/i, 'no scripts, stylesheets or fonts from anywhere')
  assert.equal(html.match(/https?:\/\/[^\s"]+/g), ['http://www.w3.org/2000/svg'], 'the SVG namespace is the only address')
  const svg = html.slice(html.indexOf('<svg'), html.indexOf('</svg>') + 6)
  assert.equal(tagProblems(svg), [])
  for (const lane of ['c0', 'c1', 'c2', 'machine-0', 'machine-1']) assert.match(svg, `>${lane}</text>`, `lane ${lane}`)
  assert.ok(svg.indexOf('>c2</text>') < svg.indexOf('>machine-0</text>'), 'controllers above machines')
  assert.match(svg, '<title>c0 down: 5 s – 15 s</title>')
  assert.match(svg, '<title>machine-1 paused: 10 s – 12 s</title>')
  assert.match(svg, '<title>term 3, leader c1: 5.4 s – 20 s</title>')
  assert.match(svg, '<title>term 2, leader no leader: 5 s – 5.4 s</title>')
  assert.match(svg, '<title>9 s – 13 s: partition majority-minority (minority: c2) for 4s</title>')
  assert.match(svg, 'hook-hang web/9 install (skipped: no unit web/9)')
  assert.match(svg, '<title>kv/1 install failed: 1.6 s – 1.7 s</title>')
  assert.match(svg, '<title>web/0 install terminated: 3.5 s – 4 s</title>')
  assert.ok(svg.indexOf('>machine-0</text>') < svg.indexOf('  kv/0') && svg.indexOf('  kv/0') < svg.indexOf('  web/0'), 'units grouped under their machine')
  assert.match(svg, 'converged 16.5 s')
  assert.match(svg, /<polyline class="active"/)
  for (const phase of ['setup', 'faults', 'heal', 'liveness']) assert.match(svg, `<title>phase ${phase}:`)
  assert.match(svg, 'commit rule: c1 (term 3) committed 7 whose entry is of term 2 &lt;&amp;&gt;')
  assert.match(html, 'cantrip sim examples/sim/leader-crash-during-deploy.yaml --seed 7 --report out/')
  assert.match(html, '9f86d081884c7d65')
  assert.match(html, 'safety at 12.5 s: raft safety: commit rule broken')
})

test('every text is escaped: names, fault texts and messages cannot inject markup', () => {
  const evil = '"><script>alert(1)</script><b x=\''
  const extra: RunEvent[] = [
    { t: 13_000, kind: 'violation', check: evil, message: evil },
    { t: 13_000, kind: 'command', text: evil, ok: false },
    { t: 14_000, kind: 'fault', fault: { at: 14_000, kind: 'heal' }, text: evil }
  ]
  const run = record(extra)
  run.result.failure = evil
  const html = readFileSync(writeReport(run, tempDir()).html, 'utf8')
  assert.not.match(html, '<script')
  assert.equal(tagProblems(html), [])
  assert.match(html, escapeXml(evil))
  assert.is(escapeXml(`a<b>&"c'`), 'a&lt;b&gt;&amp;&quot;c&#39;')
  assert.throws(() => writeReport({ ...run, result: { ...run.result, scenario: '../x' } }, tempDir()), /expected a scenario name/)
})

test('the JSON summary is the RunResult with per-lane aggregates', () => {
  const summary = JSON.parse(readFileSync(writeReport(record(), tempDir()).json, 'utf8')) as RunSummary
  assert.is(summary.result.hash, '9f86d081884c7d65')
  assert.is(summary.result.outcome, 'safety')
  assert.equal(summary.agents.c0, { role: 'controller', downMs: 10_000, pausedMs: 0, upMs: 10_000, changes: 3 })
  assert.equal(summary.agents['machine-1'], { role: 'machine', downMs: 0, pausedMs: 2_000, upMs: 16_500, changes: 3 })
  assert.equal(summary.hooks['kv/1'], { machine: 'machine-1', succeeded: 1, failed: 1, missing: 0, terminated: 0 })
  assert.equal(summary.hooks['web/0'], { machine: 'machine-0', succeeded: 1, failed: 0, missing: 0, terminated: 1 })
  assert.equal(summary.terms.map(t => [t.term, t.leader]), [[2, 'c0'], [2, null], [3, 'c1']])
  assert.equal(summary.faults, { byKind: { crash: 1, partition: 1, pause: 1 }, skipped: 1, total: 4 })
  assert.is(summary.violations.length, 1)
  assert.equal(summary.units, { active: 3, total: 3 })
  assert.equal(summary.commands, { total: 1, failed: 0 })
  assert.equal(summary.phases.map(p => p.phase), ['setup', 'faults', 'heal', 'liveness'])
})

test('caps: hook bars per unit and spans per lane are bounded, and the report says how many were left out', () => {
  const extra: RunEvent[] = []
  const hooks = reportHooksPerUnitMax + 37
  for (let i = 0; i < hooks; i++) {
    extra.push({ t: 2_000 + i * 10 + 5, kind: 'hook', unit: 'kv/0', machine: 'machine-0', hook: 'update-status', start: 2_000 + i * 10, outcome: 'succeeded' })
  }
  const flaps = reportSpansPerLaneMax + 11
  for (let i = 0; i < flaps; i++) extra.push({ t: 2_000 + i * 5, kind: 'agent', agent: 'machine-9', state: i % 2 === 0 ? 'paused' : 'up' })
  const paths = writeReport(record(extra), tempDir())
  const html = readFileSync(paths.html, 'utf8')
  assert.is((html.match(/<title>kv\/0 update-status succeeded/g) ?? []).length, reportHooksPerUnitMax - 1, 'kv/0 install is one of the drawn bars')
  assert.match(html, '38 hook runs not drawn (limit reached)')
  assert.is((html.match(/<title>machine-9 (paused|up):/g) ?? []).length, reportSpansPerLaneMax)
  assert.match(html, '11 spans not drawn (limit reached)')
  const summary = JSON.parse(readFileSync(paths.json, 'utf8')) as RunSummary
  assert.is(summary.hooks['kv/0']!.succeeded, hooks + 1, 'the summary counts every run, drawn or not')
  assert.is(summary.agents['machine-9']!.changes, flaps)
})

test('founding controllers get lanes even when the run recorded no agent event for them, up from 0', () => {
  const run = record()
  run.events = run.events.filter(e => !(e.kind === 'agent' && e.agent.startsWith('c') && e.t === 0))
  const paths = writeReport(run, tempDir())
  const html = readFileSync(paths.html, 'utf8')
  assert.match(html, '<title>c2 up: 0 s – 20 s</title>')
  assert.match(html, '<title>c0 up: 0 s – 5 s</title>', 'c0 was up before its crash')
  const summary = JSON.parse(readFileSync(paths.json, 'utf8')) as RunSummary
  assert.equal(summary.agents.c0, { role: 'controller', downMs: 10_000, pausedMs: 0, upMs: 10_000, changes: 3 })
})

test('a passing run without violations or faults still renders, and the axis has round ticks', () => {
  const quiet: RunRecord = { events: [{ t: 0, kind: 'phase', phase: 'setup' }], result: { ...record([], 'pass').result, faults: [] } }
  delete quiet.result.convergedAtMs
  const html = readFileSync(writeReport(quiet, tempDir()).html, 'utf8')
  assert.equal(tagProblems(html), [])
  assert.match(html, 'No invariant violations.')
  assert.match(html, '<span class="pass">pass</span>')
  assert.is(tickStep(20_000), 2_000)
  assert.is(tickStep(1_000), 100)
  assert.is(tickStep(120_000), 10_000)
})

test.run()
