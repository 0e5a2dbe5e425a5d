/**
 * kill -9 of a machine agent process in the middle of a hook, then a restart, as
 * juju-semantics §2.11 says: the hook was left pending, so on restart it counts as a
 * failed hook — the unit shows `hook failed: "install"` — and the automatic retry runs it
 * again, after which the unit carries on (here: it starts and is active). While the
 * machine agent is down, presence shows the unit's agent as lost.
 */
import '../runtime/polyfill.ts'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { CharmReply } from '../actors/controller/controller-api.ts'
import { packCharm } from '../agent/charm/charm-archive.ts'
import { loadCharmDir } from '../agent/charm/load-charm.ts'
import { CantripdCluster, waitFor } from './support/cantripd-cluster.ts'
import { processAlive } from './support/processes.ts'

test('kill -9 of a machine agent mid-hook: on restart the hook is a failed hook, retried, and the unit carries on', async () => {
  const cluster = new CantripdCluster()
  // Presence: heartbeat 200 ms, suspect after 1 s, failed 1 s later.
  cluster.extraArgs = ['--presence-ms', '200,1000,1000']
  const marks = join(cluster.root, 'marks')
  mkdirSync(marks)
  const charmDir = join(cluster.root, 'charm-src')
  mkdirSync(join(charmDir, 'hooks'), { recursive: true })
  writeFileSync(join(charmDir, 'metadata.yaml'), 'name: slow\nsummary: slow\ndescription: an install that hangs the first time\n')
  // The first install records its pid and hangs; the retry finds the mark and completes.
  const hook = (body: string): string => `#!/bin/bash\nset -eu\n${body}\n`
  writeFileSync(join(charmDir, 'hooks', 'install'), hook(
    `if [ ! -f ${marks}/first ]; then echo $$ > ${marks}/first; sleep 600; fi\necho done > ${marks}/installed`))
  writeFileSync(join(charmDir, 'hooks', 'start'), hook('status-set active started'))
  for (const name of ['install', 'start']) chmodSync(join(charmDir, 'hooks', name), 0o755)
  try {
    await cluster.prepare(1, 1)
    cluster.start(cluster.controllers[0]!)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    const packed = await packCharm(charmDir)
    let put: CharmReply | undefined
    await waitFor('the charm in the controller\'s store', async () => {
      put = await cluster.api<CharmReply>(cluster.controllers[0]!, { op: 'put-charm', bytes: packed.bytes })
      return put?.ok === true
    }, () => JSON.stringify(put))
    assert.ok((await cluster.submit({ type: 'add-charm', url: 'local:slow-0', hash: packed.hash, metadata: (await loadCharmDir(charmDir)).summary }))?.ok)
    assert.ok((await cluster.submit({ type: 'add-machine' }))?.ok)
    assert.ok((await cluster.submit({ type: 'deploy', application: 'slow', charm: 'local:slow-0', config: {}, constraints: {}, numUnits: 1, placement: ['0'] }))?.ok)
    const machine = cluster.machines[0]!
    cluster.start(machine)
    await waitFor('the first install to be running', () => existsSync(join(marks, 'first')))

    machine.process!.kill('SIGKILL')
    await new Promise(resolve => machine.process!.once('exit', resolve))
    machine.process = undefined
    // The hook was not killed with the agent (it leads its own process group, as in Juju);
    // end it here, group and all (its `sleep` too).
    const orphan = Number(readFileSync(join(marks, 'first'), 'utf8'))
    process.kill(-orphan, 'SIGKILL')
    await waitFor('the orphaned hook to be gone', () => !processAlive(orphan))
    // Not heard from any more: its unit's agent shows lost.
    await waitFor('the unit agent to show lost', async () => {
      const summary = await cluster.summary(cluster.controllers[0]!)
      return summary?.ok === true && summary.units['slow/0']?.agent === 'lost'
    })

    cluster.start(machine)
    const seen: string[] = []
    await waitFor('the unit to be active after the retry', async () => {
      const summary = await cluster.summary(cluster.controllers[0]!)
      const unit = summary?.ok === true ? summary.units['slow/0'] : undefined
      if (unit !== undefined) seen.push(`${unit.agent}: ${unit.workload} ${unit.message}`)
      return unit?.workload === 'active' && unit.agent === 'idle'
    }, () => seen.slice(-5).join(' | '))
    assert.ok(seen.some(s => s.startsWith('error')), `the crashed hook showed as failed: ${[...new Set(seen)].join(' | ')}`)
    assert.ok(existsSync(join(marks, 'installed')), 'the retried install completed')
  } finally {
    await cluster.close()
  }
})

test.run()
