/**
 * View watches between real processes (actors/controller/machine-watches.ts,
 * actors/machine/view-watch.ts): three `cantripd` controllers and two machine agents.
 * Each agent holds one watch at a controller (`controller-status` counts them), a commit
 * reaches both through it, and after kill -9 of a controller holding a watch its agent
 * watches at a survivor, resuming from the revision it holds: the next commit reaches
 * both again, and no agent's view ever went back in revision. This is a Juju agent's
 * API watcher re-established after its controller connection drops (juju/juju
 * apiserver/watcher.go, worker/uniter/remotestate/watcher.go: the watchers restart on
 * a new connection and the remote state resumes, never moving backwards).
 */
import '../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { ControllerStatusReply } from '../actors/controller/api-controller-status.ts'
import { CantripdCluster, waitFor, type Agent } from './support/cantripd-cluster.ts'

test('machine agents watch their views at the controllers, and move to a survivor after kill -9', async () => {
  const cluster = new CantripdCluster()
  const started = performance.now()
  const phase = (what: string): void => { console.log(`  ${what} after ${Math.round(performance.now() - started)} ms`) }
  try {
    await cluster.prepare(3, 2)
    for (const c of cluster.controllers) cluster.start(c)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    for (const m of cluster.machines) cluster.start(m)
    const describe = (): string => [...cluster.controllers, ...cluster.machines].map(a => a.output.slice(-1200)).join('\n---\n')
    await waitFor('a first view at both agents', () => cluster.machines.every(m => m.views.length > 0), describe)
    phase('first views')

    const held = async (controllers: Agent[]): Promise<Map<Agent, number>> => {
      const out = new Map<Agent, number>()
      for (const c of controllers) {
        const reply = await cluster.api<ControllerStatusReply>(c, { op: 'controller-status' })
        if (reply?.ok === true) out.set(c, reply.watches ?? 0)
      }
      return out
    }
    const total = (counts: Map<Agent, number>): number => [...counts.values()].reduce((a, b) => a + b, 0)
    let counts = new Map<Agent, number>()
    await waitFor('one watch per agent held at the controllers', async () => total(counts = await held(cluster.controllers)) === 2, () => JSON.stringify([...counts.values()]) + describe())

    // A model-config set reaches every agent's view (an added machine reaches none: views
    // carry no model counters, runtime/model/machine-view.ts).
    let interval = 5
    const reached = async (what: string): Promise<void> => {
      const result = await cluster.submit({ type: 'set-model-config', config: { 'update-status-hook-interval': `${++interval}m` } })
      if (result === undefined) throw new Error(`${what}: set-model-config not committed`)
      assert.ok(result.ok, JSON.stringify(result))
      const index = result.index
      await waitFor(`${what}: both agents at revision ${index}`, () => cluster.machines.every(m => m.views.some(v => v.revision >= index)), describe)
    }
    await reached('a commit')
    phase('watches held and a commit seen')

    const victim = [...counts.entries()].find(([, n]) => n > 0)![0]
    victim.process!.kill('SIGKILL')
    victim.process = undefined
    const survivors = cluster.controllers.filter(c => c !== victim)
    await waitFor('a leader among the survivors', () => cluster.leader() !== undefined)
    await waitFor('both watches held at the survivors', async () => total(counts = await held(survivors)) === 2, () => JSON.stringify([...counts.values()]) + describe())
    await reached('a commit after the kill')
    phase('watches moved and a commit seen after kill -9')

    for (const m of cluster.machines) {
      const revisions = m.views.map(v => v.revision)
      assert.equal(revisions, [...revisions].sort((a, b) => a - b), `machine ${m.machineId}: its view never went back in revision`)
    }
  } finally {
    await cluster.close()
  }
})

test.run()
