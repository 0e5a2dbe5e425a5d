/**
 * Authorisation (issue 12, item 7) on a simulated controller group serving the real API:
 * the policy table is pinned to the rules of DESIGN.md §10; random (entity, API call,
 * target) triples, sent over the network as that entity's peer, are answered exactly as
 * the table says; a denial is the table's one line and carries nothing of the model (the
 * model holds canary names and values that must never appear in one). The propose path
 * gets the same treatment: a caller proposes only as itself, a machine agent also for the
 * units the model puts on its machine, a controller for anyone.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import fc from 'fast-check'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { apiOps, apiPermits, apiPolicy, apiRefusal, type ApiOp } from '../../actors/controller/api-policy.ts'
import { controllerApiProtocol } from '../../actors/controller/controller-api.ts'
import { controllerProposeProtocol } from '../../actors/controller/model-replica.ts'
import type { Entity } from '../../runtime/model/model-types.ts'
import type { SimControllerGroup } from '../../sim/sim-controller-group.ts'
import { changeTopic } from '../../actors/controller/change-notices.ts'
import { presenceTopic } from '../../runtime/presence/presence-agent.ts'
import { CantripdCluster, freePortRun, waitFor } from '../support/cantripd-cluster.ts'
import { killUnitWorkloads } from '../support/processes.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { admin, canaries, canaryGroup, strangers, type CanaryGroup } from './support/hostile-model-group.ts'

const test = suite('authorisation: the policy table, denials and the propose path')
const figures: Record<string, number> = { triples: 0, permitted: 0, denied: 0, proposals: 0, proposalsDenied: 0 }
let group: SimControllerGroup
let peers: Map<string, Entity>
let ask: CanaryGroup['ask']
let keepLeader: CanaryGroup['keepLeader']

test.before(async () => {
  ({ group, peers, ask, keepLeader } = await canaryGroup())
})

test.after(async () => {
  await group.stop()
  reportFigures('authorisation', figures)
})

function assertNoModelData (text: string): void {
  for (const canary of canaries) assert.not.ok(text.includes(canary), `leaked ${canary}: ${text}`)
}

test('the table is DESIGN.md §10: who may make each call', () => {
  const spec: Record<ApiOp, string[]> = {
    'machine-model': ['controller', 'machine'],
    'machine-watch': ['controller', 'machine'],
    'application-status': ['controller', 'machine'],
    'goal-state': ['controller', 'machine'],
    'charm-manifest': ['user', 'controller', 'machine', 'unit'],
    'charm-chunk': ['user', 'controller', 'machine', 'unit'],
    'put-charm-begin': ['user', 'controller'],
    'put-charm-chunk': ['user', 'controller'],
    'put-charm-commit': ['user', 'controller'],
    'model-summary': ['user', 'controller'],
    register: ['user', 'controller', 'machine', 'unit', 'stranger'],
    model: ['user', 'controller'],
    'model-watch': ['user', 'controller'],
    'controller-status': ['user', 'controller'],
    members: ['user', 'controller'],
    'add-controller': ['user'],
    'remove-controller': ['user'],
    controllers: ['user', 'controller', 'machine', 'unit'],
    'debug-log': ['user', 'controller'],
    'ship-logs': ['controller', 'machine'],
    'secret-content': ['controller', 'machine'],
    'reveal-secret': ['user', 'controller']
  }
  assert.equal(Object.fromEntries(apiOps.map(op => [op, [...apiPolicy[op].allowed]])), spec)
  assert.ok(apiPolicy['machine-model'].ownMachineOnly, 'a machine agent reads only its own machine')
  assert.ok(apiPermits('machine-model', { kind: 'machine', id: '0' }, '0'))
  assert.not.ok(apiPermits('machine-model', { kind: 'machine', id: '0' }, '1'))
  assert.ok(apiPolicy['machine-watch'].ownMachineOnly, 'a machine agent watches only its own machine')
  assert.ok(apiPolicy['application-status'].leaderUnitOnly, 'a machine agent reads its application status only for a leader unit it hosts')
})

test('random (entity, call, target) triples are answered as the table says; denials leak nothing', async () => {
  const callers = [...peers.keys(), ...strangers]
  const triple = fc.record({
    from: fc.constantFrom(...callers),
    op: fc.constantFrom<ApiOp>(...apiOps),
    target: fc.constantFrom<unknown>('0', '1', '7', '', undefined, 3, 'canaryapp/0', 'canaryapp/1', 'canaryapp/9')
  })
  await fc.assert(fc.asyncProperty(triple, async ({ from, op, target }) => {
    figures['triples']!++
    const body: Record<string, unknown> = { op }
    if (op === 'machine-model' || op === 'machine-watch') body['machine'] = target
    if (op === 'application-status') {
      body['unit'] = target
      await keepLeader()
    }
    if (op === 'goal-state') body['unit'] = target
    // secret-get for a unit: a secret id the model does not hold (Juju's secretsmanager answers not found to a permitted caller).
    if (op === 'secret-content') Object.assign(body, { unit: target, id: 'a'.repeat(20) })
    if (op === 'reveal-secret') body['id'] = 'a'.repeat(20)
    if (op === 'charm-manifest' || op === 'charm-chunk' || op === 'put-charm-chunk' || op === 'put-charm-commit') Object.assign(body, { hash: 'ab'.repeat(32), index: 0 })
    if (op === 'put-charm-chunk') body['bytes'] = new Uint8Array(4)
    if (op === 'put-charm-begin') body['manifest'] = { hash: 'ab'.repeat(32), size: 4, chunkBytes: 4, chunks: ['cd'.repeat(32)] }
    if (op === 'register') Object.assign(body, { machine: '7', secret: 'wrong' })
    if (op === 'add-controller' || op === 'remove-controller') body['peer'] = '!'
    const reply = await ask(from, controllerApiProtocol, body)
    const caller = peers.get(from)
    const targeted = op === 'machine-model' || op === 'machine-watch' || op === 'application-status' || op === 'goal-state' || op === 'secret-content'
    // application-status: the model's say too; canaryapp/0 (on machine 0) holds the lease.
    const leads = op !== 'application-status' || (target === 'canaryapp/0' && (caller?.kind === 'controller' || (caller?.kind === 'machine' && caller.id === '0')))
    // goal-state: a unit that exists, asked for by a controller or by the agent of its machine.
    const hostMachine: Record<string, string> = { 'canaryapp/0': '0', 'canaryapp/1': '1' }
    const hosts = (op !== 'goal-state' && op !== 'secret-content') || (typeof target === 'string' && hostMachine[target] !== undefined &&
      (caller?.kind === 'controller' || (caller?.kind === 'machine' && caller.id === hostMachine[target])))
    const permitted = apiPermits(op, caller, targeted ? target : undefined) && !(targeted && typeof target !== 'string') && leads && hosts
    if (permitted) {
      figures['permitted']!++
      assert.not.ok(String(reply['error'] ?? '').includes('permission denied'), `${from} ${op}: ${JSON.stringify(reply)}`)
      if (op === 'application-status') {
        figures['applicationStatusAnswered'] = (figures['applicationStatusAnswered'] ?? 0) + 1
        assert.equal([reply['ok'], Object.keys(reply['units'] as object)], [true, ['canaryapp/0', 'canaryapp/1']], JSON.stringify(reply))
      }
      if (op === 'secret-content') assert.equal(reply, { ok: false, error: `secret "${'a'.repeat(20)}" not found` })
      if (op === 'goal-state') assert.equal([reply['ok'], Object.keys((reply['goalState'] as { units: object }).units).sort()], [true, ['canaryapp/0', 'canaryapp/1']], JSON.stringify(reply))
    } else {
      figures['denied']!++
      assert.equal(Object.keys(reply).sort(), ['error', 'ok'], `${from} ${op}: a denial carries only the error`)
      assert.is(reply['ok'], false)
      assert.is(reply['error'], apiRefusal('controller api', op, from, targeted ? target : undefined))
      // The caller's own target comes back; nothing else of the model does.
      assertNoModelData((reply['error'] as string).replace(JSON.stringify(target), ''))
    }
  }), { numRuns: chaosCount(20_000, 2_000), seed: 12, includeErrorInReport: true })
})

test('the propose path: callers propose only as themselves, machine agents also for their units', async () => {
  const proposers: Entity[] = [admin, { kind: 'machine', id: '0' }, { kind: 'machine', id: '1' }, { kind: 'unit', name: 'canaryapp/0' }, { kind: 'unit', name: 'canaryapp/1' }, { kind: 'controller', id: group.ids[0]! }]
  const unitMachine: Record<string, string> = { 'canaryapp/0': '0', 'canaryapp/1': '1' }
  let n = 0
  await fc.assert(fc.asyncProperty(fc.constantFrom(...peers.keys(), ...strangers), fc.constantFrom(...proposers), async (from, proposer) => {
    figures['proposals']!++
    const command = { type: 'set-unit-status', unit: proposer.kind === 'unit' ? proposer.name : 'canaryapp/0', status: 'active', message: 'fine', now: 1, requestId: `p-${++n}`, proposer }
    const reply = await ask(from, controllerProposeProtocol, command)
    const caller = peers.get(from)
    const permitted = caller !== undefined && (caller.kind === 'controller' || JSON.stringify(caller) === JSON.stringify(proposer) ||
      (caller.kind === 'machine' && proposer.kind === 'unit' && unitMachine[proposer.name] === caller.id))
    const denied = reply['ok'] === false && reply['name'] === 'PermissionDeniedError'
    assert.is(denied, !permitted, `${from} as ${JSON.stringify(proposer)}: ${JSON.stringify(reply)}`)
    if (denied) {
      figures['proposalsDenied']!++
      assert.match(String(reply['message']), /^controller "[^"]+": permission denied: peer "[^"]+" (is not known to this model|may not propose as \{.*\})$/)
      assertNoModelData(String(reply['message']).replace(/may not propose as .*$/, ''))
    }
  }), { numRuns: chaosCount(5_000, 500), seed: 12, includeErrorInReport: true })
})

/** Every file under `dir` (agent trees are small), as latin1 text so bytes compare as bytes. */
function filesUnder (dir: string): Array<{ path: string, text: string }> {
  const out: Array<{ path: string, text: string }> = []
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name)
      const stat = statSync(path, { throwIfNoEntry: false })
      if (stat?.isDirectory() === true) walk(path)
      else if (stat?.isFile() === true && stat.size < 20_000_000) out.push({ path, text: readFileSync(path).toString('latin1') })
    }
  }
  if (existsSync(dir)) walk(dir)
  return out
}

test('a credential canary in the provider config never leaves the controller: not in agent directories, logs, gossip or what machine agents receive', async () => {
  const canary = `CANARY-${randomBytes(12).toString('hex')}`
  const cluster = new CantripdCluster()
  const machinesDir = join(cluster.root, 'machines')
  const wireDir = join(cluster.root, 'wire')
  const config = join(cluster.root, 'provider.json')
  writeFileSync(config, JSON.stringify({ credentials: { token: canary }, retryDelayMs: [1_000, 3_000] }))
  cluster.extraArgs = ['--provider', 'local', '--machines-dir', machinesDir, '--provider-config', config, '--presence-ms', '300,1500,1500']
  const gossip: Uint8Array[] = []
  // Inherited by the controller and by the machine agents its local provider starts.
  const previous = process.env['CANTRIP_WIRE_CAPTURE_DIR']
  process.env['CANTRIP_WIRE_CAPTURE_DIR'] = wireDir
  try {
    await cluster.prepare(1, 0)
    const controller = cluster.controllers[0]!
    cluster.start(controller)
    const client = await cluster.connectClient()
    client.subscribe(changeTopic('default'), message => { gossip.push(message.data) })
    client.subscribe(presenceTopic('default'), message => { gossip.push(message.data) })
    await waitFor('a leader', () => cluster.leader() !== undefined)
    const charm = await cluster.addCharm(controller, resolve('examples/charms/kv'), 'local:kv-0')
    assert.ok(charm.added?.ok, JSON.stringify(charm.added))
    assert.ok((await cluster.submit({ type: 'deploy', application: 'kv', charm: 'local:kv-0', config: { 'port-base': await freePortRun(1) }, constraints: {}, numUnits: 1 }))?.ok)
    await waitFor('kv/0 active and idle on a provisioned machine', async () => {
      const summary = await cluster.summary(controller)
      return summary?.ok === true && summary.units['kv/0']?.workload === 'active' && summary.units['kv/0']?.agent === 'idle'
    }, () => controller.output.slice(-2000))
    const captures = filesUnder(wireDir).filter(file => /\/machine-\d+\.wire$/.test(file.path))
    assert.ok(captures.length > 0 && captures.every(file => file.text.length > 0), `the machine agent's wire was captured: ${readdirSync(wireDir).join(', ')}`)
    assert.ok(readFileSync(config, 'latin1').includes(canary), 'the canary is where it belongs')
    const leaks = [...filesUnder(machinesDir), ...captures].filter(file => file.text.includes(canary)).map(file => file.path)
    assert.equal(leaks, [], 'no agent directory, bootstrap file, agent log or machine wire capture holds the credential')
    assert.ok(gossip.length > 0, 'gossip was captured')
    assert.not.ok(gossip.some(data => Buffer.from(data).toString('latin1').includes(canary)), 'no gossip message holds the credential')
    figures['canaryWireBytes'] = captures.reduce((n, file) => n + file.text.length, 0)
    figures['canaryFilesChecked'] = filesUnder(machinesDir).length + captures.length
  } finally {
    if (previous === undefined) delete process.env['CANTRIP_WIRE_CAPTURE_DIR']
    else process.env['CANTRIP_WIRE_CAPTURE_DIR'] = previous
    // Provisioned agents are detached: the controller (and its watchdog) first, then each agent's process group and its workloads, by pid.
    const child = cluster.controllers[0]?.process
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise(resolve => { child.once('exit', resolve) })
      child.kill('SIGKILL')
      await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 10_000))])
    }
    for (const machine of existsSync(machinesDir) ? readdirSync(machinesDir) : []) {
      const pidFile = join(machinesDir, machine, 'agent.pid')
      const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim().split(/\s+/)[0]) : NaN
      if (Number.isSafeInteger(pid) && pid > 1) try { process.kill(-pid, 'SIGKILL') } catch { /* gone */ }
      killUnitWorkloads(join(machinesDir, machine, 'agent'))
    }
    await cluster.close()
  }
})

test.run()
