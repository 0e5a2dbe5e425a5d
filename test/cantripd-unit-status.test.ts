/**
 * What a Juju user sees of a unit, end to end in real processes (issue 23): a cantripd
 * controller on the local provider deploys a charm that never calls `status-set`.
 * - While its install hook runs (it waits for a file this test creates) the unit shows
 *   `maintenance` "installing charm software", and after start `unknown` with no message,
 *   as Juju's uniter sets them (juju/juju internal/worker/uniter/operation/runhook.go,
 *   beforeHook/afterHook).
 * - A healthy deployment never reads "not heard from", down or lost: for ~15 s here, three
 *   times the shortened down timeout (`--agent-down-ms`), and for 5 minutes under
 *   CANTRIP_LONG=1 (`npm run test:long`).
 * - SIGSTOP of the machine agent: the unit shows `unknown` / `lost` / "agent lost, see
 *   'cantrip show-status-log silent/0'" and the machine `down` (Juju's
 *   apiserver/common/unitstatus.go), the lost and down period is in the status history
 *   `cantrip show-status-log` prints, and after SIGCONT status is what the agent reports
 *   again and the history shows the period's end.
 * Status and the log are read through the CLI's own code (statusDocument, statusLogRows)
 * from the `model` op's answer, the API `cantrip status` and `show-status-log` call.
 */
import '../runtime/polyfill.ts'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { FullModelReply } from '../actors/controller/controller-api.ts'
import { statusLogRows } from '../agent/cli/commands/show-status-log.ts'
import type { FullModel } from '../agent/cli/connection.ts'
import { statusDocument, type StatusDocument, type UnitStatus } from '../agent/cli/status-document.ts'
import { CantripdCluster, waitFor } from './support/cantripd-cluster.ts'
import { killUnitWorkloads } from './support/processes.ts'

/** The machine actors' down timeout (`cantripd --agent-down-ms`), instead of a minute. */
const agentDownAfterMs = 4_000
/** How long a healthy deployment is watched: ~15 s in `npm test`, 5 minutes in test:long. */
const healthyWatchMs = process.env['CANTRIP_LONG'] === '1' ? 5 * 60_000 : 15_000

function agentPid (machinesDir: string, machine: string): number | undefined {
  const file = join(machinesDir, `machine-${machine}`, 'agent.pid')
  if (!existsSync(file)) return undefined
  const pid = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0])
  return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined
}

/** A charm with only an install hook, which waits for `gate` to exist: it never sets its status. */
function silentCharm (dir: string, gate: string): void {
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), 'name: silent\nsummary: a charm that never calls status-set\ndescription: test charm\n')
  writeFileSync(join(dir, 'hooks', 'install'), `#!/bin/sh\nwhile [ ! -e '${gate}' ]; do sleep 0.2; done\n`)
  chmodSync(join(dir, 'hooks', 'install'), 0o755)
}

test('a silent charm: installing, then unknown; a healthy deployment is never down; a stopped agent is lost, logged, and recovers', async () => {
  const cluster = new CantripdCluster()
  const machinesDir = join(cluster.root, 'machines')
  const gate = join(cluster.root, 'install-may-finish')
  const charmDir = join(cluster.root, 'silent-charm')
  silentCharm(charmDir, gate)
  cluster.extraArgs = ['--provider', 'local', '--machines-dir', machinesDir, '--presence-ms', '300,1500,1500', '--agent-down-ms', String(agentDownAfterMs)]
  let stopped: number | undefined
  try {
    await cluster.prepare(1, 0)
    const controller = cluster.controllers[0]!
    cluster.start(controller)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    const charm = await cluster.addCharm(controller, charmDir, 'local:silent-0')
    assert.ok(charm.added?.ok, JSON.stringify(charm.added))
    assert.ok((await cluster.submit({ type: 'deploy', application: 'silent', charm: 'local:silent-0', config: {}, constraints: {}, numUnits: 1 }))?.ok)

    let full: FullModel | undefined
    let doc: StatusDocument | undefined
    const read = async (): Promise<StatusDocument | undefined> => {
      const reply = await cluster.api<FullModelReply>(controller, { op: 'model' })
      if (reply?.ok !== true) return undefined
      full = reply
      doc = statusDocument(reply, 'local', Date.now())
      return doc
    }
    const unit = (): UnitStatus | undefined => doc?.applications['silent']?.units?.['silent/0']
    const shown = (): string => {
      const u = unit()
      return u === undefined ? 'no unit' : `${u['workload-status'].current} "${u['workload-status'].message ?? ''}" / ${u['juju-status'].current} "${u['juju-status'].message ?? ''}"`
    }
    const describe = (): string => `${shown()}\nmachine: ${JSON.stringify(doc?.machines['0'])}\n${controller.output.slice(-3000)}`

    // Install runs (held on the gate): Juju's uniter status, not "waiting for machine".
    await waitFor('silent/0 running its install hook', async () => {
      await read()
      return unit()?.['juju-status'].message === 'running install hook'
    }, describe)
    assert.is(shown(), 'maintenance "installing charm software" / executing "running install hook"')
    writeFileSync(gate, '')
    await waitFor('silent/0 started and idle', async () => {
      await read()
      return unit()?.['juju-status'].current === 'idle' && unit()?.['workload-status'].current === 'unknown'
    }, describe)
    assert.is(shown(), 'unknown "" / idle ""', 'a start in which the charm never set its status leaves it unknown')
    assert.is(doc!.machines['0']!['juju-status'].current, 'started')

    // Healthy: nothing may read down, lost or "not heard from", however long it runs.
    const watchUntil = Date.now() + healthyWatchMs
    while (Date.now() < watchUntil) {
      assert.ok(await read() !== undefined, describe())
      const machine = doc!.machines['0']!
      assert.is(machine['juju-status'].current, 'started', describe())
      assert.not.match(machine['machine-status'].message ?? '', /not heard from/, describe())
      assert.is(shown(), 'unknown "" / idle ""', describe())
      await new Promise(resolve => setTimeout(resolve, 500))
    }

    // SIGSTOP of the machine agent: lost as Juju shows it, and the period in the history.
    stopped = agentPid(machinesDir, '0')
    assert.ok(stopped !== undefined, 'machine 0 has an agent')
    process.kill(stopped, 'SIGSTOP')
    await waitFor('silent/0 shown lost and machine 0 down', async () => {
      await read()
      return unit()?.['juju-status'].current === 'lost' && doc?.machines['0']?.['juju-status'].current === 'down'
    }, describe)
    assert.is(shown(), 'unknown "agent lost, see \'cantrip show-status-log silent/0\'" / lost "agent is not communicating with the server"')
    assert.is(doc!.applications['silent']!['application-status'].current, 'unknown')
    await waitFor('the lost period in show-status-log', async () => {
      await read()
      const rows = full === undefined ? [] : statusLogRows(full.model, 'silent/0', {})
      return rows.some(r => r.type === 'juju-unit' && r.status === 'lost')
    }, describe)
    const lostLog = statusLogRows(full!.model, 'silent/0', {}).map(r => `${r.type} ${r.status} ${r.message}`.trimEnd())
    assert.equal(lostLog.slice(-2), ['juju-unit lost agent is not communicating with the server', 'workload unknown agent lost, see \'cantrip show-status-log silent/0\''], lostLog.join('\n'))
    assert.ok(lostLog.includes('workload maintenance installing charm software'), lostLog.join('\n'))
    assert.equal(statusLogRows(full!.model, '0', { type: 'juju-machine' }).at(-1)?.status, 'down')

    // SIGCONT: status is the agent's again, and the history ends the period.
    process.kill(stopped, 'SIGCONT')
    stopped = undefined
    await waitFor('silent/0 idle again and machine 0 started', async () => {
      await read()
      return unit()?.['juju-status'].current === 'idle' && doc?.machines['0']?.['juju-status'].current === 'started'
    }, describe)
    assert.is(shown(), 'unknown "" / idle ""')
    await waitFor('the end of the lost period in show-status-log', async () => {
      await read()
      return full !== undefined && statusLogRows(full.model, 'silent/0', {}).at(-1)?.type !== undefined &&
        statusLogRows(full.model, '0', { type: 'juju-machine' }).at(-1)?.status === 'started'
    }, describe)
    const backLog = statusLogRows(full!.model, 'silent/0', {}).map(r => `${r.type} ${r.status} ${r.message}`.trimEnd())
    const lostAt = backLog.lastIndexOf('juju-unit lost agent is not communicating with the server')
    assert.ok(lostAt >= 0, backLog.join('\n'))
    assert.ok(backLog.slice(lostAt).includes('juju-unit idle'), backLog.join('\n'))
    assert.ok(backLog.slice(lostAt).includes('workload unknown'), backLog.join('\n'))
  } finally {
    if (stopped !== undefined) try { process.kill(stopped, 'SIGCONT') } catch { /* gone */ }
    // The provisioned agent is detached from the test: the controller (and its watchdog)
    // goes first, then the agent's process group and its workloads, by pid.
    const controller = cluster.controllers[0]?.process
    if (controller !== undefined && controller.exitCode === null && controller.signalCode === null) {
      const exited = new Promise(resolve => { controller.once('exit', resolve) })
      controller.kill('SIGKILL')
      await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 10_000))])
    }
    const pid = agentPid(machinesDir, '0')
    if (pid !== undefined) try { process.kill(-pid, 'SIGKILL') } catch { /* gone */ }
    killUnitWorkloads(join(machinesDir, 'machine-0', 'agent'))
    await cluster.close()
  }
})

test.run()
