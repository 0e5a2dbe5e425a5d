import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { ModelReplica } from '../actors/controller/model-replica.ts'
import type { UnitEmitted } from '../actors/unit/unit-effects.ts'
import type { Entity, MachineRecord, ModelCommand, ModelContext } from '../runtime/model/model-types.ts'
import { tableValues } from '../runtime/model/table.ts'
import { decode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { parsePresenceMessage, presenceTopic } from '../runtime/presence/presence-agent.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { HookOrderChecker, formatViolations } from '../sim/invariants/hook-order-checker.ts'
import type { ScenarioCharm } from '../sim/scenario/scenario-types.ts'
import { Simulation } from '../sim/simulation.ts'
import { HookFaultBookImpl } from '../sim/system/hook-fault-book.ts'
import type { HookRunRecord } from '../sim/system/machine-agent-types.ts'
import { SimMachineAgent, simIdentifyPeer } from '../sim/system/sim-machine-agent.ts'
import { systemConvergenceProblems } from '../sim/system/system-convergence.ts'

/**
 * Simulated machine agents (sim/system/sim-machine-agent.ts) against three real
 * controllers on the simulator: the shipped machine agent (ControllerClient, presence,
 * Machiner, deployer and unit hosts), hooks scripted per charm. Units of a peer application and a provides/requires pair
 * converge (active/idle, relation members, one leader per application) — also when an
 * agent is killed mid-deploy, and when install fails twice — and a seed replays to the
 * same trace hash.
 */

const admin: Entity = { kind: 'user', name: 'admin' }
const controllers = ['c0', 'c1', 'c2']

function charm (name: string, endpoints: Partial<Pick<ScenarioCharm, 'provides' | 'requires' | 'peers'>>, hooks: ScenarioCharm['hooks']): ScenarioCharm {
  return { name, provides: {}, requires: {}, peers: {}, subordinate: false, ...endpoints, hooks }
}

const charms: Record<string, ScenarioCharm> = {
  kv: charm('kv', { provides: { db: 'kv' }, peers: { cluster: 'kv-peer' } }, {
    '*': { durationMs: [50, 400] },
    start: { durationMs: 100, status: { status: 'active', message: 'replicating' } },
    'leader-elected': { leaderSet: { primary: '{unit}' } },
    'db-relation-joined': { relationSet: { host: '{unit}' } },
    'cluster-relation-joined': { relationSet: { peer: '{unit}' } }
  }),
  web: charm('web', { requires: { backend: 'kv' } }, {
    '*': { durationMs: [20, 200] },
    start: { status: { status: 'active', message: '' } },
    'backend-relation-changed': { relationSet: { client: '{unit}' } }
  }),
  logger: { ...charm('logger', { requires: { info: 'juju-info' } }, { '*': { durationMs: [10, 50] }, start: { status: { status: 'active', message: 'logging' } } }), subordinate: true },
  solo: charm('solo', {}, {
    '*': { durationMs: [10, 100] },
    start: { status: { status: 'active', message: '' } }
  })
}

interface World {
  sim: Simulation
  group: SimControllerGroup
  agents: SimMachineAgent[]
  book: HookFaultBookImpl
  hooks: HookRunRecord[]
  /** Units whose actor was killed or failed and started again. */
  restarts: string[]
  checker: HookOrderChecker
  model: () => ModelContext
}

/** `beforeAgents` runs once the machines are added and before any agent starts; `controllerMachines` have agents that are controllers' too (role both). */
async function makeWorld (seed: number, machines: number, beforeAgents?: (group: SimControllerGroup) => Promise<void>, controllerMachines: readonly string[] = []): Promise<World> {
  const sim = new Simulation({ seed })
  const group = await SimControllerGroup.create(sim, { size: 3, hostOptions: () => ({ agents: { modelUuid: 'default', identify: simIdentifyPeer(controllers) } }) })
  assert.ok(await group.runUntil(() => group.leaderNode() !== undefined, 20_000), 'a controller leads')
  const book = new HookFaultBookImpl()
  const hooks: HookRunRecord[] = []
  const restarts: string[] = []
  const checker = new HookOrderChecker()
  const model = (): ModelContext => (group.leaderNode() ?? group.nodes()[0]!).host.state()
  const onUnitEvent = (unit: string, event: UnitEmitted): void => {
    const record = tableValues(model().units).find(u => u.name === unit)
    checker.event(unit, event, record?.life ?? 'dead')
  }
  const agents = Array.from({ length: machines }, (_, i) => new SimMachineAgent({
    sim, network: group.network, machineId: String(i), model: 'default', controllers, charms, hookFaults: book,
    drift: (i % 3 - 1) * 0.0005, hostsController: controllerMachines.includes(String(i)), onHook: run => { hooks.push(run) }, onUnitEvent, onUnitRestart: (unit, durable) => { restarts.push(unit); checker.crash(unit, durable) }
  }))
  for (let i = 0; i < machines; i++) await submit(group, { type: 'add-machine', requestId: `machine-${i}`, proposer: admin })
  await beforeAgents?.(group)
  for (const agent of agents) await agent.start()
  return { sim, group, agents, book, hooks, restarts, checker, model }
}

async function addCharm (group: SimControllerGroup, name: string): Promise<void> {
  const c = charms[name]!
  const endpoints = (map: Record<string, string>): Record<string, string> => ({ ...map })
  await submit(group, {
    type: 'add-charm', requestId: `charm-${name}`, proposer: admin, url: `local:${name}-0`, hash: 'ab'.repeat(8),
    metadata: {
      name, subordinate: c.subordinate, provides: endpoints(c.provides), peers: endpoints(c.peers),
      // A subordinate's requirers are container-scoped, as its metadata.yaml would say.
      requires: c.subordinate ? Object.fromEntries(Object.entries(c.requires).map(([ep, iface]) => [ep, { interface: iface, scope: 'container' }])) : endpoints(c.requires)
    }
  } as unknown as ModelCommand)
}

async function deploy (group: SimControllerGroup, application: string, placement: string[]): Promise<void> {
  await submit(group, { type: 'deploy', requestId: `deploy-${application}`, proposer: admin, application, charm: `local:${application}-0`, config: {}, constraints: {}, numUnits: placement.length, placement })
}

async function submit (group: SimControllerGroup, command: ModelCommand): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const node: ModelReplica | undefined = group.leaderNode() ?? group.nodes()[0]
    if (node !== undefined) {
      let outcome: { ok: boolean, error?: string } | { thrown: unknown } | undefined
      node.submit(command).then(result => { outcome = result.ok ? { ok: true } : { ok: false, error: result.error } }, (error: unknown) => { outcome = { thrown: error } })
      await group.runUntil(() => outcome !== undefined, 10_000)
      if (outcome !== undefined && 'ok' in outcome) {
        if (!outcome.ok) throw new Error(`admin command ${command.type} refused: ${outcome.error ?? ''}`)
        return
      }
    }
    await group.runFor(500)
  }
  throw new Error(`admin command ${command.type} never committed`)
}

/** Deploys kv (3 units, peers) and web (2 units) related web:backend — kv:db over the first three machines. */
async function deployPair (w: World): Promise<void> {
  await addCharm(w.group, 'kv')
  await addCharm(w.group, 'web')
  await deploy(w.group, 'kv', ['0', '1', '2'])
  await deploy(w.group, 'web', ['0', '1'])
  await submit(w.group, { type: 'integrate', requestId: 'relate', proposer: admin, a: 'web:backend', b: 'kv:db' })
}

async function converge (w: World, budgetMs: number): Promise<string[]> {
  let problems: string[] = ['not checked']
  await w.group.runUntil(() => {
    problems = systemConvergenceProblems(w.model(), w.agents, charms)
    return problems.length === 0
  }, budgetMs, 500)
  return problems
}

function invariants (w: World): void {
  assert.equal(w.checker.violations, [], formatViolations(w.checker.violations))
  for (const agent of w.agents) {
    assert.ok(agent.maxConcurrentHooks <= 1, `machine ${agent.machineId} ran ${agent.maxConcurrentHooks} hooks at once`)
    assert.equal(agent.errors(), [], `machine ${agent.machineId} actor errors`)
  }
}

async function finish (w: World): Promise<void> {
  for (const agent of w.agents) await agent.stop()
  await w.group.stop()
}

test('hook fault book: a unit\'s own faults first, then its application\'s; each use consumed; the heal releases hung hooks', () => {
  const book = new HookFaultBookImpl()
  book.fail('web', 'install', 2)
  book.fail('web/1', 'install', 1)
  book.hang('web/0', 'start', 5_000)
  assert.equal(book.take('web/1', 'install'), { kind: 'fail' })
  assert.equal(book.take('web/1', 'install'), { kind: 'fail' })
  assert.equal(book.take('web/0', 'install'), { kind: 'fail' })
  assert.is(book.take('web/0', 'install'), undefined)
  assert.is(book.take('kv/0', 'start'), undefined)
  assert.equal(book.take('web/0', 'start'), { kind: 'hang', untilMs: 5_000 })
  assert.is(book.take('web/0', 'start'), undefined)
  const released: string[] = []
  book.onRelease(() => { released.push('a') })
  const unregister = book.onRelease(() => { released.push('b') })
  unregister()
  book.fail('kv', 'start', 3)
  book.releaseAll()
  assert.equal(released, ['a'])
  assert.is(book.take('kv/0', 'start'), undefined)
  assert.is(book.pending, 0)
  assert.throws(() => { book.fail('kv/0', 'start', 0) }, /positive whole number/)
})

test('two related applications on three agents converge: active/idle, relation members, one leader each', async () => {
  const w = await makeWorld(7, 3)
  await deployPair(w)
  const problems = await converge(w, 300_000)
  assert.equal(problems, [], problems.join('\n'))
  invariants(w)
  const model = w.model()
  const units = tableValues(model.units)
  assert.is(units.length, 5)
  for (const unit of units) {
    assert.is(unit.agent.status, 'idle', unit.name)
    assert.is(unit.workload.status, 'active', unit.name)
  }
  assert.is(units.find(u => u.name === 'kv/0')!.workload.message, 'replicating')
  // The leader's leader-set and the relation-set of -joined hooks reached the model.
  const kvLeader = model.leases ? tableValues(model.leases).find(l => l.application === 'kv')!.holder : ''
  assert.is(tableValues(model.applications).find(a => a.name === 'kv')!.leaderSettings.primary, kvLeader)
  const hookNames = new Set(w.hooks.map(h => h.hook.split(' ')[0]))
  for (const name of ['install', 'leader-elected', 'config-changed', 'start', 'db-relation-joined', 'backend-relation-changed', 'cluster-relation-joined']) {
    assert.ok(hookNames.has(name), `hook ${name} ran`)
  }
  assert.ok(w.hooks.every(h => h.outcome === 'succeeded'), 'no hook failed')
  // Without faults each application elects its leader once.
  const elected = w.hooks.filter(h => h.hook === 'leader-elected').map(h => h.unit.split('/')[0]).sort()
  assert.equal(elected, ['kv', 'web'])
  const settings = tableValues(model.settings).map(s => s.values)
  assert.ok(settings.some(v => v.host === 'kv/1'), 'kv/1 wrote host on db')
  assert.ok(settings.some(v => v.client === 'web/0'), 'web/0 wrote client on backend')
  await finish(w)
})

test('an agent killed mid-deploy and restarted resumes from its disk and converges', async () => {
  const w = await makeWorld(11, 3)
  await deployPair(w)
  const victim = w.agents[1]!
  assert.ok(await w.group.runUntil(() => w.hooks.some(h => h.machine === '1' && h.hook.startsWith('install')), 60_000), 'machine 1 ran an install hook')
  await w.group.runFor(150)
  const before = victim.storage.crashCount
  const running = victim.units()
  assert.ok(running.length > 0, 'machine 1 runs units')
  victim.crash()
  assert.equal(w.restarts.sort(), running.sort(), 'the checker heard of every unit killed')
  assert.is(victim.state, 'down')
  assert.is(victim.units().length, 0)
  assert.is(victim.storage.crashCount, before + 1)
  await w.group.runFor(5_000)
  await victim.start()
  const problems = await converge(w, 300_000)
  assert.equal(problems, [], problems.join('\n'))
  invariants(w)
  // The agent's units installed once each as far as the model can tell: they are started and idle.
  assert.equal(victim.units().sort(), ['kv/1', 'web/1'])
  await finish(w)
})

test('leadership as Juju\'s tracker: followers claim nothing while the leader holds; once its lease runs out one takes over', async () => {
  const w = await makeWorld(13, 3)
  await addCharm(w.group, 'solo')
  await deploy(w.group, 'solo', ['0', '1', '2'])
  const problems = await converge(w, 300_000)
  assert.equal(problems, [], problems.join('\n'))
  const claims = (): Map<string, number> => new Map(w.agents.flatMap(agent => agent.units().map(unit => [unit, agent.unitState(unit)!.leadershipClaims] as const)))
  const holder = (): string | undefined => tableValues(w.model().leases).find(l => l.application === 'solo')?.holder
  const leader = holder()!
  const before = claims()
  // Five minutes: ten half-lease extensions by the leader (the lease is the default minute).
  await w.group.runFor(300_000)
  const after = claims()
  const sent = [...after].map(([unit, n]) => [unit, n - (before.get(unit) ?? 0)] as const)
  for (const [unit, n] of sent) {
    if (unit === leader) assert.ok(n >= 9 && n <= 11, `the leader ${unit} extended every half lease: ${n} claims`)
    else assert.is(n, 0, `follower ${unit} claimed while ${leader} held the lease`)
  }
  assert.is(holder(), leader)
  // The leader's agent dies: its lease runs out and a follower, woken by the expiry, claims it.
  const expiry = tableValues(w.model().leases).find(l => l.application === 'solo')!.expiry
  w.agents.find(agent => agent.units().includes(leader))!.crash()
  const took = await w.group.runUntil(() => holder() !== undefined && holder() !== leader, 120_000, 100)
  assert.ok(took, 'a follower took the lease over')
  const takenBy = holder()!
  const granted = tableValues(w.model().leases).find(l => l.application === 'solo')!
  // Within a few view refreshes of the expiry: before, a follower claimed only on its half-lease timer (up to 30 s late).
  assert.ok(granted.start - expiry < limits.leadershipReleasedRecheckMs + 2_000, `${takenBy} claimed ${granted.start - expiry} ms after the lease ran out`)
  invariants(w)
  await finish(w)
})

test('each simulated agent heartbeats its presence with the shipped PresenceAgent; a crash silences it, a restart comes back higher', async () => {
  const w = await makeWorld(5, 2)
  const heard: Array<{ sender: string, role: string, incarnation: number, atMs: number }> = []
  const observer = w.group.network.transport('observer')
  observer.subscribe(presenceTopic('default'), message => {
    const parsed = parsePresenceMessage(decode(message.data, 'presence'))
    if (parsed?.kind === 'heartbeat') heard.push({ sender: parsed.sender, role: parsed.role, incarnation: parsed.incarnation, atMs: w.sim.clock.now() })
  })
  // Three heartbeat intervals hold three heartbeats of each agent, whenever its first fell.
  const windowMs = 3 * limits.presenceHeartbeatIntervalMsDefault + 1_000
  await w.group.runFor(windowMs)
  for (const agent of w.agents) {
    const beats = heard.filter(h => h.sender === agent.peerId)
    assert.ok(beats.length >= 3, `${agent.peerId} heartbeat ${beats.length} times in ${windowMs} ms`)
    assert.ok(beats.every(h => h.role === 'machine'), `${agent.peerId} heartbeats as a machine`)
  }
  const victim = w.agents[0]!
  const before = Math.max(...heard.filter(h => h.sender === victim.peerId).map(h => h.incarnation))
  victim.crash()
  const crashedAt = w.sim.clock.now()
  await w.group.runFor(5_000)
  assert.equal(heard.filter(h => h.sender === victim.peerId && h.atMs > crashedAt + 1_000), [], 'a crashed agent is silent')
  await victim.start()
  await w.group.runFor(3_000)
  const after = heard.filter(h => h.sender === victim.peerId && h.atMs > crashedAt + 5_000)
  assert.ok(after.length > 0 && after.every(h => h.incarnation > before), `the restarted agent heartbeats above incarnation ${before}: ${JSON.stringify(after.slice(0, 3))}`)
  await finish(w)
})

test('disk write errors fail a unit agent, which is started again and converges', async () => {
  const w = await makeWorld(13, 2)
  await addCharm(w.group, 'solo')
  await deploy(w.group, 'solo', ['0', '0', '1'])
  assert.ok(await w.group.runUntil(() => w.hooks.some(h => h.machine === '0'), 60_000), 'machine 0 ran a hook')
  w.agents[0]!.storage.failNextWrites(2)
  const problems = await converge(w, 120_000)
  assert.equal(problems, [], problems.join('\n'))
  assert.ok(w.restarts.length > 0 && w.restarts.every(unit => unit === 'solo/0' || unit === 'solo/1'), `unit agents of machine 0 restarted: ${w.restarts.join(', ')}`)
  invariants(w)
  await finish(w)
})

test('a machine removed with its units: the units stop and leave, the agents forget them, the machiner marks the machine dead', async () => {
  const w = await makeWorld(17, 2)
  await addCharm(w.group, 'solo')
  await deploy(w.group, 'solo', ['0', '1', '1'])
  const problems = await converge(w, 120_000)
  assert.equal(problems, [], problems.join('\n'))
  const leaving = w.agents[1]!
  assert.equal(leaving.units().sort(), ['solo/1', 'solo/2'])
  await submit(w.group, { type: 'remove-machine', requestId: 'remove-1', proposer: admin, machine: '1', force: true })
  assert.ok(await w.group.runUntil(() => leaving.finished, 120_000), 'the agent of machine 1 finished')
  assert.is(leaving.state, 'down')
  assert.is(tableValues(w.model().machines).some(m => m.id === '1'), false, 'machine 1 left the model')
  assert.equal(tableValues(w.model().units).map(u => u.name), ['solo/0'])
  for (const unit of ['solo/1', 'solo/2']) {
    const ran = w.hooks.filter(h => h.unit === unit).map(h => h.hook)
    assert.equal(ran.slice(-2), ['stop', 'remove'], `${unit} ran ${ran.join(', ')}`)
  }
  const after = await converge(w, 60_000)
  assert.equal(after, [], after.join('\n'))
  invariants(w)
  await finish(w)
})

test('remove-application takes the machines it empties (as Juju), not one shared with another application\'s unit, nor a controller\'s', async () => {
  const w = await makeWorld(23, 3, undefined, ['2'])
  await addCharm(w.group, 'solo')
  await deploy(w.group, 'solo', ['0', '1', '2'])
  await submit(w.group, { type: 'deploy', requestId: 'deploy-other', proposer: admin, application: 'other', charm: 'local:solo-0', config: {}, constraints: {}, numUnits: 1, placement: ['1'] })
  const problems = await converge(w, 120_000)
  assert.equal(problems, [], problems.join('\n'))
  assert.equal(tableValues(w.model().machines).map(m => [m.id, m.controller === true]).sort(), [['0', false], ['1', false], ['2', true]], 'machine 2\'s agent said it is a controller\'s')
  await submit(w.group, { type: 'remove-application', requestId: 'remove-solo', proposer: admin, application: 'solo' })
  const [emptied, shared, controller] = w.agents as [SimMachineAgent, SimMachineAgent, SimMachineAgent]
  assert.ok(await w.group.runUntil(() => emptied.finished && w.model().applications.size === 1, 120_000), 'solo gone and the agent of machine 0 finished')
  assert.equal(tableValues(w.model().machines).map(m => [m.id, m.life, m.units]).sort(), [['1', 'alive', ['other/0']], ['2', 'alive', []]])
  for (const unit of ['solo/0', 'solo/1', 'solo/2']) {
    const ran = w.hooks.filter(h => h.unit === unit).map(h => h.hook)
    assert.equal(ran.slice(-2), ['stop', 'remove'], `${unit} ran ${ran.join(', ')}`)
  }
  const after = await converge(w, 60_000)
  assert.equal(after, [], after.join('\n'))
  assert.ok(!shared.finished && !controller.finished && shared.state === 'up' && controller.state === 'up', 'the agents of the machines that stay carry on')
  invariants(w)
  await finish(w)
})

test('subordinates: the agent starts one per principal on its machine, and they converge', async () => {
  const w = await makeWorld(19, 2)
  await addCharm(w.group, 'solo')
  await addCharm(w.group, 'logger')
  await deploy(w.group, 'solo', ['0', '1', '1'])
  await deploy(w.group, 'logger', [])
  await submit(w.group, { type: 'integrate', requestId: 'relate-logger', proposer: admin, a: 'logger:info', b: 'solo:juju-info' })
  const problems = await converge(w, 300_000)
  assert.equal(problems, [], problems.join('\n'))
  invariants(w)
  const loggers = tableValues(w.model().units).filter(u => u.application === 'logger')
  assert.is(loggers.length, 3)
  assert.equal(w.agents[1]!.units().filter(u => u.startsWith('logger/')).length, 2)
  for (const unit of loggers) assert.is(unit.workload.message, 'logging', unit.name)
  await finish(w)
})

test('install failing twice is retried by the uniter until the unit is active', async () => {
  const w = await makeWorld(3, 3)
  w.book.fail('kv/2', 'install', 2)
  await deployPair(w)
  const problems = await converge(w, 300_000)
  assert.equal(problems, [], problems.join('\n'))
  invariants(w)
  const installs = w.hooks.filter(h => h.unit === 'kv/2' && h.hook === 'install').map(h => h.outcome)
  assert.equal(installs, ['failed', 'failed', 'succeeded'])
  assert.is(w.book.pending, 0)
  await finish(w)
})

test('a hook hung by the schedule holds its machine until the book releases it', async () => {
  const w = await makeWorld(5, 2)
  w.book.hang('solo/0', 'install', undefined)
  await addCharm(w.group, 'solo')
  await deploy(w.group, 'solo', ['0', '0', '1'])
  await w.group.runFor(60_000)
  const stuck = systemConvergenceProblems(w.model(), w.agents, charms)
  assert.ok(stuck.some(p => p.startsWith('solo/0')), stuck.join('\n'))
  assert.ok(stuck.some(p => p.startsWith('solo/1')), 'solo/1 waits for the machine hook lock')
  w.book.releaseAll()
  const problems = await converge(w, 120_000)
  assert.equal(problems, [], problems.join('\n'))
  invariants(w)
  await finish(w)
})

test('a paused agent (SIGSTOP) runs no hook and sends nothing until resumed, then converges', async () => {
  const w = await makeWorld(9, 2)
  await addCharm(w.group, 'solo')
  await deploy(w.group, 'solo', ['0', '1', '1'])
  assert.ok(await w.group.runUntil(() => w.hooks.some(h => h.machine === '1'), 60_000), 'machine 1 ran a hook')
  const paused = w.agents[1]!
  paused.pause()
  assert.is(paused.state, 'paused')
  const pausedAt = w.sim.clock.now()
  const sent = paused.controllerCounters.submitRequests
  await w.group.runFor(30_000)
  assert.equal(w.hooks.filter(h => h.machine === '1' && h.endMs > pausedAt), [], 'no hook of machine 1 ended while it was paused')
  assert.is(paused.controllerCounters.submitRequests, sent, 'no request left machine 1 while paused')
  const problems = systemConvergenceProblems(w.model(), w.agents, charms)
  assert.ok(problems.some(p => p.includes('machine 1 is paused')), problems.join('\n'))
  paused.resume()
  assert.is(paused.state, 'up')
  const after = await converge(w, 120_000)
  assert.equal(after, [], after.join('\n'))
  invariants(w)
  await finish(w)
})

test('the same seed gives the same trace hash (with a hook failure and an agent crash)', async () => {
  const hashes: string[] = []
  for (let run = 0; run < 2; run++) {
    const w = await makeWorld(21, 3)
    w.book.fail('web', 'install', 1)
    await deployPair(w)
    await w.group.runFor(1_500)
    w.agents[2]!.crash()
    await w.group.runFor(2_000)
    await w.agents[2]!.start()
    const problems = await converge(w, 300_000)
    assert.equal(problems, [], problems.join('\n'))
    hashes.push(w.sim.traceHash())
    await finish(w)
  }
  assert.is(hashes[0], hashes[1])
})

test('an agent whose machine a provisioner is starting runs nothing until the instance is recorded (Juju: not provisioned), then converges', async () => {
  const provisioner: Entity = { kind: 'controller', id: '0' }
  const w = await makeWorld(17, 1, async group => {
    await submit(group, { type: 'set-machine-provisioning', requestId: 'provisioning-0', proposer: provisioner, machine: '0', token: 'ab'.repeat(8), secret: 'cd'.repeat(16) })
  })
  await addCharm(w.group, 'solo')
  await deploy(w.group, 'solo', ['0'])
  await w.group.runFor(10_000)
  const machine = (): MachineRecord => tableValues(w.model().machines).find(m => m.id === '0')!
  // No unit ran and the agent did not say it started: status shows the machine pending, as its instance is.
  assert.equal([machine().agent.status, machine().instance.status, w.hooks.length, w.agents[0]!.units()], ['pending', 'pending', 0, []])
  await submit(w.group, { type: 'set-machine-instance', requestId: 'instance-0', proposer: provisioner, machine: '0', instanceId: 'i-0', addresses: ['10.0.0.1'] })
  assert.equal(await converge(w, 60_000), [])
  assert.is(machine().agent.status, 'started')
  assert.ok(w.hooks.some(run => run.hook === 'install'), 'the unit installed once the machine was provisioned')
  invariants(w)
  await finish(w)
})

test('20 agents × 5 units: deploy converges; wall time measured', async () => {
  const started = performance.now()
  const w = await makeWorld(1, 20)
  await addCharm(w.group, 'solo')
  await deploy(w.group, 'solo', Array.from({ length: 100 }, (_, i) => String(i % 20)))
  const deployedAt = w.sim.clock.now()
  const problems = await converge(w, 600_000)
  assert.equal(problems, [], problems.slice(0, 5).join('\n'))
  invariants(w)
  const wallMs = performance.now() - started
  const simulatedMs = w.sim.clock.now() - deployedAt
  const links = w.agents.map(a => a.controllerCounters)
  const sum = (key: keyof typeof links[number]): number => links.reduce((total, c) => total + c[key], 0)
  console.log(`  20 agents × 5 units: converged in ${simulatedMs} ms simulated, ${Math.round(wallMs)} ms wall (${w.hooks.length} hooks, ${sum('fetches')} view fetches, ${sum('watchAnswers')} watch answers, ${sum('submitRequests')} submit requests for ${sum('commandsSubmitted')} commands)`)
  assert.ok(sum('submitRequests') < sum('commandsSubmitted'), 'unit commands are batched per machine')
  // The simulator runs the shipping view watch: changes reach the agents through it.
  assert.ok(sum('watchAnswers') > 0, 'views are pushed to the agents\' watches')
  await finish(w)
})

test.run()
