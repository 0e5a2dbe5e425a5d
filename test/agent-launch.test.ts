/**
 * An agent's launch record (`<data dir>/launch.json`): written atomically and read back
 * the same; a record that is not one is refused in one line naming the file; the starter's
 * CANTRIP_* settings are kept and nothing else of its environment. A controller started
 * before controllers ran through the agent launcher gets its record moved onto it (for
 * upgrade-controller), its own flags kept.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { keptEnvironment, launchThroughLauncher, readAgentLaunch, writeAgentLaunch, type AgentLaunch } from '../agent/agent-launch.ts'

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

test('a direct start is moved onto the launcher, flags kept; a launcher start is kept as it is', () => {
  const direct: AgentLaunch = { ...launch, args: ['--import', 'file:///x/tsx/loader.mjs', '/opt/cantrip/agent/cantripd.ts', '--role', 'controller', '--data-dir', '/d/c1'] }
  const moved = launchThroughLauncher(direct, '/d/c1/tools/0.1.1/dist/cantripd-stub.mjs')
  assert.equal(moved.args, ['/d/c1/tools/0.1.1/dist/cantripd-stub.mjs', '--role', 'controller', '--data-dir', '/d/c1'])
  assert.is(moved.command, process.execPath)
  const through: AgentLaunch = { ...launch, args: ['/opt/cantrip/dist/cantripd-stub.mjs', '--role', 'controller'] }
  assert.is(launchThroughLauncher(through, '/elsewhere/cantripd-stub.mjs'), through)
  assert.throws(() => launchThroughLauncher({ ...launch, args: ['/opt/cantrip/dist/cantripd.mjs'] }, '/s/cantripd-stub.mjs'), (error: Error) => error.message === 'agent launch: expected a launch record of a controller (its arguments with --role), got "/opt/cantrip/dist/cantripd.mjs"')
})

test.after(() => { rmSync(dir, { recursive: true, force: true }) })
test.run()
