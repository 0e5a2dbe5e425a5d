/**
 * SIGTERM to a real machine agent process while a hook runs: the hook's process group is
 * killed, the hook is re-queued in the persisted uniter state (not marked failed), the
 * agent exits 0, and when the agent starts again the same hook runs again at once.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { bundledChild } from './support/bundled-child.ts'
import { processAlive } from './support/processes.ts'
import { createUnitStateStore } from '../actors/unit/unit-state-store.ts'
import { LevelStorage } from '../agent/level-storage.ts'

// Generous: the agent is a fresh process (test/support/bundled-child.ts), slow to start while the other test lanes load the machine.
const waitMsMax = 60_000

async function waitFor (what: string, condition: () => boolean): Promise<void> {
  const until = performance.now() + waitMsMax
  while (!condition()) {
    if (performance.now() > until) throw new Error(`unit agent sigterm test: timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 25))
  }
}

function startAgent (dataDir: string, charmDir: string): { child: ChildProcess, exited: Promise<number | null>, output: () => string } {
  const child = spawn(process.execPath, [bundledChild('test/fixtures/unit-agent-process.ts'), dataDir, charmDir], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', chunk => { output += String(chunk) })
  child.stderr!.on('data', chunk => { output += String(chunk) })
  const exited = new Promise<number | null>(resolve => { child.once('exit', code => { resolve(code) }) })
  return { child, exited, output: () => output }
}


test('SIGTERM during a hook kills it, re-queues it, and it runs again when the agent restarts', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-sigterm-'))
  const charmDir = join(root, 'charm-src')
  const runs = join(root, 'install-runs')
  mkdirSync(join(charmDir, 'hooks'), { recursive: true })
  writeFileSync(join(charmDir, 'metadata.yaml'), 'name: slow\nsummary: slow\ndescription: an install that hangs the first time\n')
  // The first install hangs (until killed); the second completes. The hook marks which run
  // it is before it reports its pid: the test sends SIGTERM as soon as the pid is there,
  // and a SIGTERM landing between the report and the mark made the second run hang too.
  const second = JSON.stringify(join(root, 'second'))
  writeFileSync(join(charmDir, 'hooks', 'install'), [
    '#!/bin/bash',
    `if [ -f ${second} ]; then first=no; else touch ${second}; first=yes; fi`,
    `echo "$$" >> ${JSON.stringify(runs)}`,
    'if [ "$first" = yes ]; then sleep 600; fi',
    ''
  ].join('\n'))
  chmodSync(join(charmDir, 'hooks', 'install'), 0o755)
  // start runs only after install has committed: it marks that point.
  writeFileSync(join(charmDir, 'hooks', 'start'), `#!/bin/bash\ntouch ${JSON.stringify(join(root, 'started'))}\n`)
  chmodSync(join(charmDir, 'hooks', 'start'), 0o755)
  const children: ChildProcess[] = []
  const lines = (): string[] => existsSync(runs) ? readFileSync(runs, 'utf8').trim().split('\n').filter(Boolean) : []
  try {
    const first = startAgent(root, charmDir)
    children.push(first.child)
    await waitFor('the first install to start', () => lines().length === 1)
    const hookPid = Number(lines()[0])
    first.child.kill('SIGTERM')
    let timer: NodeJS.Timeout | undefined
    const code = await Promise.race([first.exited, new Promise<'hung'>(resolve => { timer = setTimeout(() => { resolve('hung') }, 20_000) })])
    clearTimeout(timer)
    assert.is(code, 0, `the agent exits 0 on SIGTERM: ${first.output().slice(-2000)}`)
    assert.not.ok(processAlive(hookPid), 'the hook process was killed')

    const storage = await LevelStorage.open(join(root, 'machine-0'))
    const local = await createUnitStateStore(storage).load('slow/0')
    await storage.close()
    assert.equal(local?.operation, { kind: 'run-hook', step: 'queued', hook: { kind: 'install' } }, 're-queued, not failed')
    assert.not.ok(local!.installed)

    const second = startAgent(root, charmDir)
    children.push(second.child)
    await waitFor('install to run again and start to follow', () => lines().length === 2 && existsSync(join(root, 'started')))
    second.child.kill('SIGTERM')
    assert.is(await second.exited, 0)
    const storageAgain = await LevelStorage.open(join(root, 'machine-0'))
    const after = await createUnitStateStore(storageAgain).load('slow/0')
    await storageAgain.close()
    assert.ok(after!.installed, 'the re-run install committed')
  } finally {
    for (const child of children) if (child.exitCode === null && child.pid !== undefined) child.kill('SIGKILL')
    // A hook leads its own process group and outlives an agent killed here: end it too.
    for (const pid of lines().map(Number)) {
      try { process.kill(-pid, 'SIGKILL') } catch { /* the group is gone */ }
    }
    rmSync(root, { recursive: true, force: true })
  }
})

test.run()
