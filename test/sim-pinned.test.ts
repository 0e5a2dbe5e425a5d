/**
 * Bugs the simulator found, pinned: each scenario in test/sim-scenarios/ failed at its
 * seed before the fix it names and must pass now, with the same trace hash twice.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parseScenario } from '../sim/scenario/parse-scenario.ts'
import { runScenario } from '../sim/scenario/run-scenario.ts'

const dir = new URL('./sim-scenarios/', import.meta.url).pathname

for (const file of readdirSync(dir).filter(name => name.endsWith('.yaml')).sort()) {
  test(`pinned sim scenario ${file} passes at its seed, deterministically`, async () => {
    const path = join(dir, file)
    const scenario = parseScenario(readFileSync(path, 'utf8'), path)
    const first = await runScenario(scenario, { seed: scenario.seed, scenarioPath: path })
    assert.is(first.result.outcome, 'pass', first.result.failure)
    const second = await runScenario(scenario, { seed: scenario.seed, scenarioPath: path })
    assert.is(second.result.hash, first.result.hash)
  })
}

test.run()
