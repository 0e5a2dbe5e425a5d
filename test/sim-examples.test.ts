/**
 * The scenarios users start from (examples/sim/): each runs, passes, and replays to the
 * same trace hash; one is run through `cantrip sim` itself, whose printed replay command
 * gives that hash again.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parseScenario } from '../sim/scenario/parse-scenario.ts'
import { runScenario } from '../sim/scenario/run-scenario.ts'
import { distProgram } from './support/dist.ts'

const root = new URL('..', import.meta.url).pathname
const dir = join(root, 'examples/sim')
const examples = readdirSync(dir).filter(name => name.endsWith('.yaml') && !name.includes('-shrunk-')).sort()

test('the five scenarios of the issue are there', () => {
  for (const name of ['leader-crash-during-deploy', 'minority-partition-during-scale-up', 'flapping-link', 'disk-full-on-controller', 'install-fails-twice']) {
    assert.ok(examples.includes(`${name}.yaml`), name)
  }
})

for (const file of examples) {
  test(`examples/sim/${file} passes at its seed and replays to the same trace hash`, async () => {
    const path = join(dir, file)
    const scenario = parseScenario(readFileSync(path, 'utf8'), path)
    const first = await runScenario(scenario, { seed: scenario.seed, scenarioPath: path })
    assert.is(first.result.outcome, 'pass', first.result.failure)
    assert.ok(first.result.convergedAtMs !== undefined || scenario.applications.length === 0, 'converged')
    const again = await runScenario(scenario, { seed: scenario.seed, scenarioPath: path })
    assert.is(again.result.hash, first.result.hash)
  })
}

test('cantrip sim prints the trace hash, and the same seed gives it again', () => {
  const cli = distProgram('cantrip')
  const run = (): { status: number | null, out: string } => {
    const result = spawnSync(process.execPath, [cli, 'sim', join(dir, 'install-fails-twice.yaml'), '--seed', '7'], { encoding: 'utf8', timeout: 120_000, cwd: root })
    return { status: result.status, out: result.stdout + result.stderr }
  }
  const first = run()
  assert.is(first.status, 0, first.out)
  const hash = /trace ([0-9a-f]{16})/.exec(first.out)?.[1]
  assert.ok(hash !== undefined, first.out)
  const second = run()
  assert.match(second.out, `trace ${hash}`)
})

test('the installed cantrip runs a swarm on worker threads (the bundle\'s own worker and engine files)', () => {
  const result = spawnSync(process.execPath, [distProgram('cantrip'), 'sim', join(dir, 'install-fails-twice.yaml'), '--seeds', '1..4', '--jobs', '2', '--quiet'], { encoding: 'utf8', timeout: 120_000, cwd: root })
  assert.is(result.status, 0, result.stdout + result.stderr)
  assert.match(result.stdout, /seeds 1\.\.4: 4 runs on 2 jobs in [\d.]+s wall \([\d.]+ seeds\/s\), 0 failing/)
})

test.run()
