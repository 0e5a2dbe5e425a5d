/**
 * `cantrip sim`: the program's lines, files and exit codes, with the runner replaced by
 * the stand-in of test/support/sim-engine-double.ts (a system that breaks safety when a
 * schedule holds a leader crash and a full disk, and does not converge when a hook
 * hangs) — one seed, a swarm over worker threads, shrinking to a scenario file that is
 * checked to reproduce, and usage errors; then the real `cantrip` binary refusing a bad
 * scenario with one line and exit 64.
 */
import '../runtime/polyfill.ts'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { simMain, type SimMainDeps } from '../sim/cli/sim-main.ts'
import { parseScenario } from '../sim/scenario/parse-scenario.ts'
import { calls, drawnFaults, engine, outcomeOf } from './support/sim-engine-double.ts'
import { cantrip } from './support/cli-process.ts'

const test = suite('sim cli')
const engineModule = new URL('./support/sim-engine-double.ts', import.meta.url).href
let dir = ''

interface Ran { code: number, out: string[], err: string[] }

async function sim (...argv: string[]): Promise<Ran> {
  const out: string[] = []
  const err: string[] = []
  const deps: Partial<SimMainDeps> = { engine, engineModule, out: line => out.push(line), err: line => err.push(line), tty: false, cwd: dir }
  const code = await simMain(argv, deps)
  return { code, out, err }
}

function scenarioFile (name: string, body: string): string {
  writeFileSync(join(dir, `${name}.yaml`), `name: ${name}\ncharms: { kv: { provides: { db: kv } } }\napplications: { kv: { units: 2 } }\n${body}`)
  return `${name}.yaml`
}

test.before.each(() => { dir = mkdtempSync(join(tmpdir(), 'cantrip-sim-cli-')) })
test.after.each(() => { rmSync(dir, { recursive: true, force: true }) })

const resultLine = /^scenario (\S+) seed (\d+): (pass|safety|liveness|crash) in \d+\.\ds simulated, \d+\.\d\ds wall, trace ([0-9a-f]{16}|none)$/

test('a passing seed: one line with the trace hash, exit 0; the same seed gives the same hash', async () => {
  const path = scenarioFile('calm', 'faults: [{ at: 2s, kind: loss, probability: 0.1, for: 1s }]\n')
  const first = await sim(path, '--seed', '5')
  assert.is(first.code, 0, first.err.join('\n'))
  assert.is(first.out.length, 1)
  const match = resultLine.exec(first.out[0]!)
  assert.ok(match, first.out[0])
  assert.is(match![1], 'calm')
  assert.is(match![2], '5')
  assert.is(match![3], 'pass')
  assert.is((await sim(path, '--seed', '5')).out[0], first.out[0])
  const byDefault = await sim(path)
  assert.ok(byDefault.out[0]!.startsWith('scenario calm seed 1: pass'), 'the scenario\'s seed when none is given')
})

test('a safety failure: the failure, then the replay command last, exit 1', async () => {
  const path = scenarioFile('broken', 'faults: [{ at: 2s, kind: crash, target: leader }, { at: 3s, kind: disk-full, target: controller/1, for: 2s }]\n')
  const ran = await sim(path, '--seed', '9')
  assert.is(ran.code, 1)
  assert.match(ran.out[0]!, resultLine)
  assert.ok(ran.out[0]!.includes(': safety in '))
  assert.is(ran.out[1], 'safety failure: raft-safety at 3500ms: two leaders committed different entries at index 7')
  assert.is(ran.out.at(-1), 'replay: cantrip sim broken.yaml --seed 9   (add --report DIR for a timeline)')
})

test('liveness exits 2, a runner that throws exits 3 with its first line, --json prints the result', async () => {
  const hang = scenarioFile('stuck', 'faults: [{ at: 2s, kind: hook-hang, unit: kv/0, hook: install }]\n')
  const ran = await sim(hang, '--json')
  assert.is(ran.code, 2)
  assert.is(ran.out.length, 1)
  const json = JSON.parse(ran.out[0]!) as { outcome: string, replay: string, seed: number }
  assert.is(json.outcome, 'liveness')
  assert.is(json.replay, 'cantrip sim stuck.yaml --seed 1')
  const throws = scenarioFile('throws', '')
  const crashed = await sim(throws, '--seed', '2')
  assert.is(crashed.code, 3)
  assert.ok(crashed.out[0]!.includes(': crash in '), crashed.out[0])
  assert.is(crashed.out[1]!.split(' (at ')[0], 'crash failure: the runner threw: runner exploded')
  assert.is(crashed.out.at(-1), 'replay: cantrip sim throws.yaml --seed 2   (add --report DIR for a timeline)')
})

test('--report writes the report and names it', async () => {
  const path = scenarioFile('calm', '')
  const ran = await sim(path, '--report', 'out')
  assert.is(ran.code, 0)
  assert.is(ran.out[1], `report: ${join(dir, 'out', 'calm-1.html')} (summary ${join(dir, 'out', 'calm-1.json')})`)
  assert.ok(readFileSync(join(dir, 'out', 'calm-1.html'), 'utf8').includes('1 events'), 'events recorded for a report')
})

test('bad usage and bad scenarios: one line on stderr, exit 64, nothing run', async () => {
  const path = scenarioFile('calm', '')
  const bad = scenarioFile('bad', 'faults: [{ at: soon, kind: heal }]\n')
  const before = calls.runs
  const cases: Array<[string[], string]> = [
    [[bad], 'sim: scenario bad.yaml: faults[0].at: expected a duration like 5s or 500ms, got "soon"'],
    [['missing.yaml'], 'sim: scenario missing.yaml: expected a readable file, got ENOENT'],
    [[path, '--seed', 'x'], 'sim: --seed: expected a whole number from 0 to 4294967295, got "x"'],
    [[path, '--seeds', '9..2'], 'sim: --seeds: expected A..B with A <= B, got "9..2"'],
    [[path, '--seeds', '1-5'], 'sim: --seeds: expected a range like 1..2000, got "1-5"'],
    [[path, '--seed', '1', '--seeds', '1..2'], 'sim: expected --seed or --seeds, got both'],
    [[path, '--jobs', '2'], 'sim: --jobs: expected with --seeds A..B, got it alone'],
    [[path, '--frobnicate'], 'sim: unknown option \'--frobnicate\''],
    [[], 'sim: missing required argument \'scenario\'']
  ]
  for (const [argv, line] of cases) {
    const ran = await sim(...argv)
    assert.is(ran.code, 64, argv.join(' '))
    assert.equal(ran.err, [line])
    assert.equal(ran.out, [])
  }
  assert.is(calls.runs, before, 'no run started')
})

test('a swarm over two worker threads: summary, failing seeds kept with outcome and hash, exit code the worst', async () => {
  const path = scenarioFile('swarm', 'random-faults: { events: 12, from: 1s, until: 30s }\n')
  const scenario = parseScenario(readFileSync(join(dir, path), 'utf8'), path)
  // What the stand-in fails on, seed by seed, computed here without the CLI.
  const expected = Array.from({ length: 40 }, (_, i) => i + 1).filter(seed => outcomeOf(drawnFaults(scenario, seed)).outcome !== 'pass')
  assert.ok(expected.length > 0 && expected.length < 40, `some seeds fail: ${expected.join(',')}`)
  const ran = await sim(path, '--seeds', '1..40', '--jobs', '2', '--report', 'r')
  assert.is(ran.code, 1, ran.err.join('\n'))
  assert.ok(ran.err.length >= 1 && ran.err.every(line => /^swarm swarm: \d+\/40 seeds, \d+ failing, [\d.]+ seeds\/s$/.test(line)), ran.err.join('\n'))
  assert.ok(ran.err.at(-1)!.startsWith(`swarm swarm: 40/40 seeds, ${expected.length} failing`))
  assert.equal(ran.out.slice(0, 3), ['OUTCOME  SEEDS  FIRST SEEDS', `pass     ${String(40 - expected.length).padStart(5)}`, `safety   ${String(expected.length).padStart(5)}  ${expected.slice(0, 5).join(', ')}${expected.length > 5 ? ', …' : ''}`])
  assert.ok(ran.out.some(line => /^swarm swarm seeds 1\.\.40: 40 runs on 2 jobs in [\d.]+s wall \([\d.]+ seeds\/s\), \d+ failing$/.test(line)), ran.out.join('\n'))
  const file = join(dir, 'r', 'swarm-failing-seeds.json')
  assert.ok(ran.out.includes(`failing seeds: ${file}`))
  assert.ok(ran.out.includes(`report of seed ${expected[0]}: ${join(dir, 'r', `swarm-${expected[0]}.html`)} (summary ${join(dir, 'r', `swarm-${expected[0]}.json`)})`), ran.out.join('\n'))
  assert.ok(readFileSync(join(dir, 'r', `swarm-${expected[0]}.html`), 'utf8').includes('1 events'), 'the report\'s run recorded its events')
  const kept = JSON.parse(readFileSync(file, 'utf8')) as { failing: Array<{ seed: number, outcome: string, hash: string, failure: string, replay: string }> }
  assert.equal(kept.failing.map(f => f.seed), expected)
  for (const f of kept.failing) {
    assert.is(f.outcome, 'safety')
    assert.match(f.hash, /^[0-9a-f]{16}$/)
    assert.is(f.replay, `cantrip sim swarm.yaml --seed ${f.seed}`)
    // The kept hash is the one a single replay of that seed prints.
    const replay = await sim(path, '--seed', String(f.seed))
    assert.ok(replay.out[0]!.endsWith(`trace ${f.hash}`))
  }
  const oneJob = await sim(path, '--seeds', '1..40', '--jobs', '1', '--quiet', '--json')
  const summary = JSON.parse(oneJob.out[0]!) as { failing: Array<{ seed: number, hash: string }>, worst: string }
  assert.equal(summary.failing, kept.failing.map(f => ({ seed: f.seed, outcome: f.outcome, hash: f.hash, failure: f.failure })), 'same result with one job')
  assert.is(summary.worst, 'safety')
  assert.equal(oneJob.err, [], '--quiet: no progress')
})

test('a swarm that passes exits 0 and writes no failing-seeds file', async () => {
  const path = scenarioFile('calm', 'faults: [{ at: 2s, kind: pause, target: machine/0, for: 1s }]\n')
  const ran = await sim(path, '--seeds', '3..6', '--jobs', '2')
  assert.is(ran.code, 0)
  assert.equal(ran.out.slice(0, 2), ['OUTCOME  SEEDS  FIRST SEEDS', 'pass         4'])
  assert.not.ok(existsSync(join(dir, 'calm-failing-seeds.json')))
})

test('--shrink: the failing schedule is reduced, printed before and after, and written as a scenario that reproduces it', async () => {
  const path = scenarioFile('shrinkme', `faults:
  - { at: 1s, kind: loss, probability: 0.2, for: 2s }
  - { at: 2s, kind: pause, target: machine/0, for: 3s }
  - { at: 3s, kind: crash, target: leader }
  - { at: 4s, kind: restart, target: controller/0 }
  - { at: 5s, kind: disk-full, target: controller/1, for: 6400ms }
  - { at: 6s, kind: duplicate, probability: 0.1, for: 1s }
random-faults: { events: 10, from: 1s, until: 20s }
`)
  const ran = await sim(path, '--seed', '4', '--shrink')
  assert.is(ran.code, 1, ran.out.join('\n'))
  const beforeCount = 6 + 10
  assert.ok(ran.out.includes(`shrink: seed 4 failed (safety) with ${beforeCount} fault events:`), ran.out.join('\n'))
  const after = ran.out.findIndex(line => /^shrink: 16 → 2 fault events in \d+ runs:$/.test(line))
  assert.ok(after > 0, ran.out.join('\n'))
  assert.equal(ran.out.slice(after + 1, after + 3), ['  { at: 3s, kind: crash, target: leader }', '  { at: 5s, kind: disk-full, target: controller/1, for: 100ms }'])
  const file = join(dir, 'shrinkme-shrunk-4.yaml')
  assert.ok(ran.out.includes(`shrunk scenario: ${file} (reproduces safety with seed 4): cantrip sim ${file} --seed 4`), ran.out.join('\n'))
  assert.is(ran.out.at(-1), 'replay: cantrip sim shrinkme.yaml --seed 4   (add --report DIR for a timeline)')
  const shrunk = parseScenario(readFileSync(file, 'utf8'), file)
  assert.is(shrunk.randomFaults, undefined)
  assert.is(shrunk.faults.length, 2)
  const replay = await sim(file, '--seed', '4')
  assert.is(replay.code, 1, 'the written scenario fails the same way')
})

test('--shrink on a swarm shrinks the first failing seed', async () => {
  const path = scenarioFile('swarm', 'random-faults: { events: 12, from: 1s, until: 30s }\n')
  const scenario = parseScenario(readFileSync(join(dir, path), 'utf8'), path)
  const first = Array.from({ length: 40 }, (_, i) => i + 1).find(seed => outcomeOf(drawnFaults(scenario, seed)).outcome !== 'pass')!
  const ran = await sim(path, '--seeds', '1..40', '--jobs', '1', '--shrink', '--quiet')
  assert.is(ran.code, 1)
  assert.ok(existsSync(join(dir, `swarm-shrunk-${first}.yaml`)), ran.out.join('\n'))
  assert.equal(parseScenario(readFileSync(join(dir, `swarm-shrunk-${first}.yaml`), 'utf8'), 'x.yaml').faults.map(e => e.kind).sort(), ['crash', 'disk-full'])
})

test('the real cantrip binary: a bad scenario is one line and exit 64; its flags reach the simulator', () => {
  writeFileSync(join(dir, 'bad.yaml'), 'name: bad\ncontrollers: 4\ncharms: {}\n')
  const home = join(dir, 'home')
  const ran = cantrip(home, ['sim', join(dir, 'bad.yaml'), '--seed', '3'])
  assert.is(ran.status, 64, ran.stderr)
  assert.is(ran.stderr, `sim: scenario ${join(dir, 'bad.yaml')}: controllers: expected 1, 3 or 5, got 4\n`)
  assert.is(ran.stdout, '')
  const usage = cantrip(home, ['sim', join(dir, 'bad.yaml'), '--seeds', 'lots'])
  assert.is(usage.status, 64)
  assert.is(usage.stderr, 'sim: --seeds: expected a range like 1..2000, got "lots"\n')
})

test.run()
