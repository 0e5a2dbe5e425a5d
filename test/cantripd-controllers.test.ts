/**
 * Three cantripd controller processes on loopback: Raft over the libp2p mesh (private
 * network key, each agent's own identity), LevelDB in each data dir. A client in this
 * process keeps submitting commands; kill -9 of the Raft leader loses none that were
 * acknowledged, another controller leads and serves soon after, and when the killed one
 * comes back from its directory every controller holds every acknowledged command.
 */
import '../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CantripdCluster, waitFor } from './support/cantripd-cluster.ts'

test('three controllers in real processes: kill -9 of the leader loses no acknowledged command', async () => {
  const cluster = new CantripdCluster()
  try {
    await cluster.prepare(3, 0)
    for (const c of cluster.controllers) cluster.start(c)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)

    /** The machine ids acknowledged commands created. */
    const acknowledged: string[] = []
    let running = true
    let n = 0
    const load = (async () => {
      while (running) {
        const result = await cluster.submit({ type: 'add-machine' }, `m${n++}`)
        if (result?.ok === true && result.machines?.[0] !== undefined) acknowledged.push(result.machines[0])
      }
    })()
    await waitFor('10 acknowledged commands', () => acknowledged.length >= 10)

    const old = cluster.leader()!
    old.process!.kill('SIGKILL')
    const killedAt = performance.now()
    const ackedBefore = acknowledged.length
    old.process = undefined
    await waitFor('a new leader', () => cluster.leader() !== undefined && cluster.leader() !== old)
    const electedMs = performance.now() - killedAt
    await waitFor('a command acknowledged by the new leader', () => acknowledged.length > ackedBefore + 1)
    const servingMs = performance.now() - killedAt
    process.stdout.write(`  new leader elected ${Math.round(electedMs)} ms and serving ${Math.round(servingMs)} ms after kill -9\n`)
    assert.ok(servingMs < 5_000, `serving again after ${Math.round(servingMs)} ms`)
    await waitFor('more commands', () => acknowledged.length >= ackedBefore + 10)
    running = false
    await load

    // The killed controller comes back from its directory; every one holds every acknowledged command.
    cluster.start(old)
    for (const c of cluster.controllers) {
      await waitFor(`${c.id.slice(-6)} to hold every acknowledged command`, async () => {
        const summary = await cluster.summary(c)
        return summary?.ok === true && acknowledged.every(id => summary.machines.includes(id))
      })
    }
  } finally {
    await cluster.close()
  }
})

test.run()
