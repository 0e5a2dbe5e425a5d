/**
 * An agent's launch record (`<data dir>/launch.json`): written atomically and read back
 * the same; a record that is not one is refused in one line naming the file; the starter's
 * CANTRIP_* settings are kept and nothing else of its environment.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { keptEnvironment, readAgentLaunch, writeAgentLaunch, type AgentLaunch } from '../agent/agent-launch.ts'

const dir = mkdtempSync(join(tmpdir(), 'cantrip-launch-'))
const launch: AgentLaunch = { name: 'cantripd-local-c0', description: 'd', command: '/usr/bin/node', args: ['a', 'b c'], cwd: '/', logFile: '/tmp/x.log', env: { CANTRIP_LOG_LEVEL: 'debug' } }

test('written and read back', () => {
  assert.is(readAgentLaunch(dir), undefined, 'none yet')
  writeAgentLaunch(dir, launch)
  assert.equal(readAgentLaunch(dir), launch)
})

test('a record that is not one is refused in one line', () => {
  writeFileSync(join(dir, 'launch.json'), '{"name": "x"}')
  assert.throws(() => readAgentLaunch(dir), (error: Error) => error.message === `agent launch: expected ${join(dir, 'launch.json')} with name, description, command, args, cwd, logFile and env, got "{\\"name\\": \\"x\\"}"`)
})

test('only CANTRIP_* settings are kept', () => {
  assert.equal(keptEnvironment({ CANTRIP_LOG_LEVEL: 'debug', PATH: '/bin', HOME: '/root', CANTRIP_X: undefined }), { CANTRIP_LOG_LEVEL: 'debug' })
})

test.after(() => { rmSync(dir, { recursive: true, force: true }) })
test.run()
