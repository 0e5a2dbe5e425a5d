/** SystemClock beyond the Clock contract: delays past Node's 2^31 - 1 ms timer limit. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { SystemClock } from '../agent/system-clock.ts'

const test = suite('system clock')

test('now() is close to the Unix epoch time', () => {
  assert.ok(Math.abs(new SystemClock().now() - Date.now()) < 1000)
})

test('a delay beyond 2^31 - 1 ms does not fire at once, and can be cleared', async () => {
  const clock = new SystemClock({ unrefTimers: true })
  let fired = false
  const handle = clock.setTimeout(() => { fired = true }, 2 ** 31 + 5)
  await new Promise(resolve => setTimeout(resolve, 20))
  assert.is(fired, false)
  clock.clearTimeout(handle)
})

test('unrefTimers lets the process exit with timers pending', async () => {
  const { spawnSync } = await import('node:child_process')
  const script = "import { SystemClock } from './agent/system-clock.ts'; new SystemClock({ unrefTimers: true }).setTimeout(() => process.exit(3), 60_000)"
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), timeout: 20_000 })
  assert.is(result.status, 0, result.stderr.toString())
})

test.run()
