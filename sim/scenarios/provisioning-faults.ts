/**
 * Provisioning under a faulty cloud, one seed at a time: three controllers run the
 * provisioner as their singular worker against one SimProvider (a MAAS-like cloud with a
 * finite pool), while the admin deploys and scales an application.
 *
 * Faults: every cloud step (allocate, deploy, release) fails at 10%; the quota starts
 * below what the units need (quota exhaustion) and is raised later, as an operator's
 * ticket would; the controller leader crashes while starts are in flight (the cloud
 * finishes them on its own), and comes back later; some seeds crash a second leader.
 *
 * Safety, checked after every step: never two live instances for one machine (the
 * cloud's own record of allocations, `SimProvider.violations()`). After the fault phase
 * (failures off, quota raised, everyone up), liveness within a budget: every unit's
 * machine has exactly one deployed instance, recorded in the model as its instance, and
 * the cloud holds no instance that no machine of the model owns.
 */
import { Provisioner } from '../../actors/provisioner/provisioner.ts'
import type { ModelReplica } from '../../actors/controller/model-replica.ts'
import { silentLogger } from '../../runtime/logger.ts'
import type { Entity, ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { tableValues } from '../../runtime/model/table.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'
import type { Random } from '../../runtime/random.ts'
import { SimControllerGroup } from '../sim-controller-group.ts'
import { SimProvider } from '../../providers/sim-provider.ts'
import { Simulation } from '../simulation.ts'

export interface ProvisioningScenarioOptions {
  seed: number
  /** Units deployed at first, and added later. */
  units?: number
  faultPhaseMs?: number
  livenessBudgetMs?: number
  keepTrace?: boolean
}

export interface ProvisioningScenarioResult {
  seed: number
  hash: string
  failure: string | undefined
  kind: 'safety' | 'liveness' | 'crash' | undefined
  simulatedMs: number
  /** Machines the model ended with, and units. */
  machines: number
  units: number
  /** Cloud facts: failed deployments, quota refusals, instances stopped as unknown. */
  deploymentsFailed: number
  quotaRefusals: number
  unknownStopped: number
  adopted: number
  leaderCrashes: number
  /** Starts in flight when a leader crashed (summed). */
  startsInFlightAtCrash: number
}

const admin: Entity = { kind: 'user', name: 'admin' }
const failureRate = 0.1

export async function runProvisioningFaults (options: ProvisioningScenarioOptions): Promise<ProvisioningScenarioResult> {
  const sim = new Simulation({ seed: options.seed, keepTrace: options.keepTrace ?? false })
  const faults = sim.random('faults')
  const units = options.units ?? faults.int(4, 8)
  const pool = units * 2 + 4
  const cloud = new SimProvider({
    clock: sim.clock,
    random: sim.random('cloud'),
    nodes: pool,
    // Quota exhaustion: fewer than the first deployment needs.
    quota: Math.max(1, units - faults.int(1, 3)),
    latencyMs: { allocate: 200, deploy: 2_000, release: 500 },
    failureRates: { allocate: failureRate, deploy: failureRate, release: failureRate },
    onTransition: t => { sim.trace(`cloud ${t.node.instanceId} ${t.from}→${t.node.state} ${t.node.machineId ?? ''}`) }
  })
  const stats = { unknownStopped: 0, adopted: 0, leaderCrashes: 0, startsInFlightAtCrash: 0 }
  const provisioners = new Map<NodeId, Provisioner>()
  const listeners = new Map<NodeId, Set<() => void>>()
  let group: SimControllerGroup | undefined
  let safety: string | undefined
  const tokens = sim.random('tokens')
  const hex = (random: Random, digits: number): string => Array.from({ length: digits }, () => random.int(0, 15).toString(16)).join('')

  const nodeOf = (id: NodeId): ModelReplica | undefined => group?.nodes().find(node => node.id === id)
  try {
    group = await SimControllerGroup.create(sim, {
      size: 3,
      // The agent's own Raft timing (agent/roles/hosted-model.ts): cloud steps take
      // hundreds of milliseconds to seconds, so nothing here needs faster elections.
      tickMs: 100,
      electionTicks: 6,
      heartbeatTicks: 1,
      hostOptions: id => ({ onApplied: () => { for (const listener of [...listeners.get(id) ?? []]) listener() } }),
      singularWorkers: controller => {
        const node = nodeOf(controller)
        if (node === undefined) return { stop: () => {} }
        const provisioner = new Provisioner({
          controllerId: controller,
          incarnation: `${node.host.term}`,
          clock: node.clock,
          logger: silentLogger,
          providerFor: () => cloud,
          providers: [cloud],
          model: () => node.host.state(),
          onModelChange: listener => {
            const set = listeners.get(controller) ?? new Set()
            listeners.set(controller, set)
            set.add(listener)
            return () => { set.delete(listener) }
          },
          submit: async command => await node.submit(command),
          newToken: () => hex(tokens, 16),
          newSecret: () => hex(tokens, 32),
          bootstrapFor: machine => new TextEncoder().encode(`machine ${machine.id}`),
          policy: { retryDelayMsMin: 200, retryDelayMsMax: 2_000, provisioningAttemptsMax: 3, stopAttemptsMax: 5 },
          reconcileIntervalMs: 1_000,
          retryRoundMs: 3_000
        })
        provisioners.set(controller, provisioner)
        sim.trace(`provisioner starts on ${controller}`)
        provisioner.start()
        return {
          stop: () => {
            sim.trace(`provisioner stops on ${controller}`)
            const counters = provisioner.counters
            stats.unknownStopped += counters.unknownStopped
            stats.adopted += counters.adopted
            provisioner.stop()
            provisioners.delete(controller)
          }
        }
      },
      onStep: () => {
        if (safety === undefined && cloud.violations().length > 0) safety = cloud.violations()[0]
      }
    })
    const g = group
    await g.runUntil(() => g.leaderNode() !== undefined, 20_000)
    await submit(g, { type: 'add-charm', requestId: 'charm', proposer: admin, url: 'local:kv-0', hash: 'ab'.repeat(8), metadata: { name: 'kv' } })
    await submit(g, { type: 'deploy', requestId: 'deploy', proposer: admin, application: 'kv', charm: 'local:kv-0', config: {}, constraints: {}, numUnits: units })

    // Fault phase: crash the leader while starts are in flight, bring it back, scale up.
    // Twenty seconds: a crashed leader's singular lease (15 s) runs out and the next
    // leader provisions under failures and quota for the rest of it.
    const faultPhaseMs = options.faultPhaseMs ?? 20_000
    const crashes = faults.int(1, 2)
    for (let c = 0; c < crashes; c++) {
      await g.runUntil(() => startsInFlight(cloud) > 0, 10_000)
      await g.runFor(faults.int(0, 1_500))
      const leader = g.leaderNode()
      if (leader !== undefined) {
        const i = g.indexOf(leader.id)
        stats.startsInFlightAtCrash += startsInFlight(cloud)
        stats.leaderCrashes++
        sim.trace(`crash leader ${leader.id} with ${startsInFlight(cloud)} starts in flight`)
        g.crash(i)
        await g.runFor(faults.int(2_000, 6_000))
        await g.restart(i)
      }
    }
    await submit(g, { type: 'add-unit', requestId: 'scale', proposer: admin, application: 'kv', numUnits: faults.int(1, 3) })
    await g.runFor(faultPhaseMs)
    if (safety !== undefined) return await finish('safety', safety)

    // Heal: the cloud behaves, the quota is raised; everything must converge.
    cloud.setFailureRates({ allocate: 0, deploy: 0, release: 0 })
    cloud.setQuota(undefined)
    const converged = await g.runUntil(() => safety !== undefined || converged_(g, cloud) === undefined, options.livenessBudgetMs ?? 120_000, 100)
    if (safety !== undefined) return await finish('safety', safety)
    if (!converged) return await finish('liveness', `not converged: ${converged_(g, cloud) ?? ''}`)
    return await finish(undefined, undefined)
  } catch (error) {
    return await finish('crash', error instanceof Error ? error.stack ?? error.message : String(error))
  }

  async function finish (kind: ProvisioningScenarioResult['kind'], failure: string | undefined): Promise<ProvisioningScenarioResult> {
    for (const provisioner of provisioners.values()) {
      stats.unknownStopped += provisioner.counters.unknownStopped
      stats.adopted += provisioner.counters.adopted
    }
    const model = group?.leaderNode()?.host.state()
    const result: ProvisioningScenarioResult = {
      seed: options.seed,
      hash: sim.traceHash(),
      failure: failure === undefined ? undefined : `seed ${options.seed}: ${failure}\n${options.keepTrace === true ? sim.lines.slice(-60).join('\n') : ''}`,
      kind,
      simulatedMs: sim.clock.now(),
      machines: model === undefined ? 0 : tableValues(model.machines).length,
      units: model === undefined ? 0 : tableValues(model.units).length,
      deploymentsFailed: cloud.counters.failures['deployment-failed'] ?? 0,
      quotaRefusals: cloud.counters.failures.quota ?? 0,
      ...stats
    }
    await group?.stop()
    return result
  }
}

async function submit (group: SimControllerGroup, command: ModelCommand): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const node = group.leaderNode() ?? group.nodes()[0]
    if (node !== undefined) {
      // One driver of the clock at a time: the submit settles while the group runs.
      let outcome: { result: Awaited<ReturnType<ModelReplica['submit']>> } | { error: unknown } | undefined
      node.submit(command).then(result => { outcome = { result } }, (error: unknown) => { outcome = { error } })
      await group.runUntil(() => outcome !== undefined, 10_000)
      if (outcome !== undefined && 'result' in outcome) {
        if (!outcome.result.ok) throw new Error(`admin command ${command.type} refused: ${outcome.result.error}`)
        return
      }
    }
    await group.runFor(500)
  }
  throw new Error(`admin command ${command.type} never committed`)
}

function startsInFlight (cloud: SimProvider): number {
  return cloud.nodes().filter(node => node.state === 'ALLOCATED' || node.state === 'DEPLOYING').length
}

/** What still keeps the run from converged, or undefined when every unit's machine has exactly its one instance. */
function converged_ (group: SimControllerGroup, cloud: SimProvider): string | undefined {
  const leader = group.leaderNode()
  if (leader === undefined) return 'no leader'
  const model: ModelContext = leader.host.state()
  const live = cloud.nodes().filter(node => node.state === 'DEPLOYED' || node.state === 'ALLOCATED' || node.state === 'DEPLOYING')
  for (const unit of tableValues(model.units)) {
    const machine = tableValues(model.machines).find(m => m.id === unit.machine)
    if (machine === undefined) return `unit ${unit.name} has no machine`
    const instances = live.filter(node => node.machineId === machine.id)
    if (instances.length !== 1 || instances[0]!.state !== 'DEPLOYED') return `machine ${machine.id} has ${instances.map(n => `${n.instanceId}:${n.state}`).join(',') || 'no instance'}`
    if (machine.instanceId !== instances[0]!.instanceId) return `machine ${machine.id} records ${machine.instanceId ?? 'nothing'}, the cloud has ${instances[0]!.instanceId}`
  }
  const owned = new Set(tableValues(model.machines).map(m => m.provisioning?.token))
  const stray = live.filter(node => !owned.has(node.token))
  if (stray.length > 0) return `stray instances ${stray.map(n => `${n.instanceId}(${n.machineId ?? ''})`).join(',')}`
  return undefined
}
