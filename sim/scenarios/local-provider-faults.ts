/**
 * The local provider's own code (providers/local-provider.ts) under faults, one seed at a
 * time, on simulated processes (SimProcessRunner's process table), files (SimFileSystem)
 * and time (SimClock): nothing is spawned and no disk is touched.
 *
 * Workload: six machines are started, started again (same token, and now and then a new
 * one), stopped and listed, with operations overlapping on one machine, while the
 * watchdog runs. Faults: an agent that cannot be run at all (a failed command), one that
 * exits at once (a failed start), bad bootstrap data, an agent that crashes later or is
 * killed from outside (found dead by `allInstances()`, restarted by the watchdog), and
 * one that ignores SIGTERM (a stop must SIGKILL it).
 *
 * Safety, after every step: never two live agents for one machine; no live agent without
 * its instance directory; what `allInstances()` shows agrees with the process table
 * (running ⇔ a live agent); a start that failed leaves no directory and no process; a
 * crashed agent is listed `failed` at once. Liveness, with faults off: every instance
 * left comes back `running` within a budget, and stopping them all leaves no process and
 * an empty home.
 */
import type { Logger } from '../../runtime/logger.ts'
import { ProviderError, type InstanceInfo } from '../../providers/provider-contract.ts'
import type { DetachedProcessSpec } from '../../runtime/process-runner.ts'
import type { Random } from '../../runtime/random.ts'
import { LocalProvider } from '../../providers/local-provider.ts'
import { SimFileSystem } from '../sim-file-system.ts'
import { SimProcessRunner, type SimProcessOutcome } from '../sim-process-runner.ts'
import { Simulation } from '../simulation.ts'

export interface LocalProviderScenarioOptions {
  seed: number
  /** Workload steps before the faults stop. */
  steps?: number
  keepTrace?: boolean
}

export interface LocalProviderScenarioResult {
  seed: number
  hash: string
  failure: string | undefined
  simulatedMs: number
  started: number
  /** Starts refused because the agent could not run, exited at once or had bad bootstrap data. */
  failedStarts: number
  spawnFailures: number
  /** Agents that died after their start check (their own crash or an outside kill). */
  crashes: number
  /** Crashed agents seen `failed` by `allInstances()` before anything restarted them. */
  foundDead: number
  restarts: number
  stops: number
  /** Stops that had to SIGKILL an agent ignoring SIGTERM. */
  stubbornKills: number
  invalidStarts: number
}

const home = '/var/lib/cantrip/machines'
const machineIds = ['0', '1', '2', '3', '4', '5/lxd/0']
const tickMsMax = 700
const livenessBudgetMs = 60_000
const timings = { watchIntervalMs: 1_000, restartDelayMs: 1_000, restartDelayMsMax: 8_000, healthyAfterMs: 20_000, startCheckMs: 1_000, stopGraceMs: 3_000 }

/** Lets every promise callback queued so far run (and what they queue) before time moves. */
const flush = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

class Failure extends Error {}

export async function runLocalProviderFaults (options: LocalProviderScenarioOptions): Promise<LocalProviderScenarioResult> {
  const sim = new Simulation({ seed: options.seed, keepTrace: options.keepTrace ?? false, replay: `CANTRIP_SEED=${options.seed} node --import tsx test/sim-local-provider.test.ts` })
  const world = new LocalProviderWorld(sim)
  const steps = options.steps ?? 120
  let failure: string | undefined
  try {
    for (let step = 0; step < steps; step++) await world.step()
    await world.converge()
  } catch (error) {
    if (!(error instanceof Failure)) throw error
    failure = error.message
  } finally {
    await world.provider.stop()
  }
  return { seed: sim.seed, hash: sim.traceHash(), failure, simulatedMs: sim.clock.now(), ...world.stats }
}

class LocalProviderWorld {
  readonly provider: LocalProvider
  readonly stats = { started: 0, failedStarts: 0, spawnFailures: 0, crashes: 0, foundDead: 0, restarts: 0, stops: 0, stubbornKills: 0, invalidStarts: 0 }
  readonly #sim: Simulation
  readonly #files = new SimFileSystem()
  readonly #processes: SimProcessRunner
  readonly #workload: Random
  readonly #faults: Random
  #faultsOn = true
  /** Each machine's current start token generation. */
  readonly #generation = new Map<string, number>(machineIds.map(id => [id, 0]))
  /** Operations in flight per machine: checks that need a quiet machine skip busy ones. */
  readonly #busy = new Map<string, number>()
  readonly #pending = new Set<Promise<void>>()

  constructor (sim: Simulation) {
    this.#sim = sim
    this.#workload = sim.random('workload')
    this.#faults = sim.random('faults')
    this.#processes = new SimProcessRunner(sim.clock, () => { throw new Failure('the local provider ran a plain process') }, {
      files: this.#files,
      detachedScript: spec => this.#agentOutcome(spec)
    })
    const logger = traceLogger(sim, message => {
      if (message === 'agent process died; restarted') this.stats.restarts++
      if (message === 'agent ignored SIGTERM; killing') this.stats.stubbornKills++
    })
    this.provider = new LocalProvider({
      home,
      logger,
      command: { file: '/usr/bin/node', args: (bootstrapFile, dataDir) => ['/opt/cantrip/agent/cantripd.ts', '--bootstrap', bootstrapFile, '--data-dir', dataDir] },
      processes: this.#processes,
      files: this.#files,
      clock: sim.clock,
      ...timings
    })
    this.provider.start()
  }

  /** One workload step: maybe an operation or a fault, then some time passes. */
  async step (): Promise<void> {
    const roll = this.#workload.next()
    const machineId = machineIds[this.#workload.int(0, machineIds.length - 1)]!
    if (roll < 0.35) this.#start(machineId)
    else if (roll < 0.5) this.#stop(machineId)
    else if (roll < 0.62) this.#crash()
    else if (roll < 0.75) await this.#check()
    await this.#advance(this.#workload.int(1, tickMsMax))
  }

  /** Faults off: every instance left must come back running, then all are stopped cleanly. */
  async converge (): Promise<void> {
    this.#faultsOn = false
    this.#sim.trace('faults off')
    const deadline = this.#sim.clock.now() + livenessBudgetMs
    for (;;) {
      await this.#settlePending(deadline)
      const listed = await this.provider.allInstances()
      if (listed.every(instance => instance.status === 'running')) break
      if (this.#sim.clock.now() >= deadline) {
        this.#fail('liveness', `instances not running ${livenessBudgetMs} ms after the faults stopped: ${describe(listed)}`)
      }
      await this.#advance(250)
    }
    await this.#check()
    const listed = await this.provider.allInstances()
    const stopping = this.provider.stopInstances(listed.map(instance => instance.instanceId))
    await this.#settle(stopping, deadline + livenessBudgetMs)
    const left = this.#processes.detachedPids()
    if (left.length > 0) this.#fail('liveness', `agent processes left after stopping every instance: ${left.join(', ')}`)
    const files = this.#files.paths(home)
    if (files.length > 0) this.#fail('liveness', `files left under the home after stopping every instance: ${files.join(', ')}`)
    this.#sim.trace(`converged: ${listed.length} instances stopped`)
  }

  // ---- operations ----

  #start (machineId: string): void {
    let generation = this.#generation.get(machineId)!
    // Now and then a new attempt with another token: refused while the old agent runs.
    if (this.#workload.next() < 0.1) this.#generation.set(machineId, ++generation)
    const token = `t-${machineId}-${generation}`
    const bad = this.#faultsOn && this.#faults.next() < 0.08
    const bootstrap = new TextEncoder().encode(bad ? `bad bootstrap for ${machineId}` : `ok ${machineId}`)
    this.#sim.trace(`start ${machineId} token=${token}${bad ? ' (bad bootstrap)' : ''}`)
    // Only a fresh instance is released when its start fails; a repeated start that cannot
    // bring an existing instance's agent back leaves it (and its data) for the watchdog.
    const fresh = (this.#busy.get(machineId) ?? 0) === 0 && !this.#files.exists(this.provider.instanceDir(machineId))
    this.#run(machineId, async () => {
      try {
        const started = await this.provider.startInstance({ machineId, token, bootstrap, constraints: {} })
        this.stats.started++
        this.#sim.trace(`start ${machineId} → ${started.instanceId}`)
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error
        this.#sim.trace(`start ${machineId} refused: ${error.failure}: ${error.message}`)
        if (error.failure === 'invalid') { this.stats.invalidStarts++; return }
        if (error.failure !== 'deployment-failed') this.#fail('safety', `start of machine ${machineId} failed as ${error.failure}: ${error.message}`)
        this.stats.failedStarts++
        if (error.message.includes('cannot run')) this.stats.spawnFailures++
        if (fresh && (this.#busy.get(machineId) ?? 0) === 1 && this.#files.exists(this.provider.instanceDir(machineId))) {
          this.#fail('safety', `a failed start of machine ${machineId} left its directory behind`)
        }
      }
    })
  }

  #stop (machineId: string): void {
    const instanceId = `local:${this.provider.instanceDir(machineId).slice(home.length + 1)}`
    this.#sim.trace(`stop ${machineId}`)
    this.#run(machineId, async () => {
      await this.provider.stopInstances([instanceId])
      this.stats.stops++
      this.#generation.set(machineId, this.#generation.get(machineId)! + 1)
      this.#sim.trace(`stopped ${machineId}`)
      if ((this.#busy.get(machineId) ?? 0) === 1 && this.#agentsOf(machineId).length > 0) {
        this.#fail('safety', `machine ${machineId} still has an agent after its stop`)
      }
    })
  }

  /** Kills a live agent from outside; the provider must list it failed straight away. */
  #crash (): void {
    const pids = this.#processes.detachedPids()
    if (pids.length === 0) return
    const pid = pids[this.#faults.int(0, pids.length - 1)]!
    const machineId = machineIds.find(id => this.#agentsOf(id).includes(pid))
    this.#processes.crash(pid, this.#faults.next() < 0.5 ? 'SIGKILL' : 'SIGSEGV')
    this.stats.crashes++
    this.#sim.trace(`crash agent ${pid} of machine ${machineId ?? '?'}`)
    if (machineId === undefined || (this.#busy.get(machineId) ?? 0) > 0) return
    const watched = this.provider.allInstances().then(listed => {
      const instance = listed.find(i => i.machineId === machineId)
      if (instance?.status !== 'failed') this.#fail('safety', `the crashed agent of machine ${machineId} is listed ${instance?.status ?? 'not at all'}, not failed`)
      this.stats.foundDead++
    })
    this.#track(watched)
  }

  #run (machineId: string, operation: () => Promise<void>): void {
    this.#busy.set(machineId, (this.#busy.get(machineId) ?? 0) + 1)
    this.#track(operation().finally(() => { this.#busy.set(machineId, this.#busy.get(machineId)! - 1) }))
  }

  #track (promise: Promise<void>): void {
    // An operation that throws what the contract does not allow fails the run with its seed.
    const tracked = promise.catch(error => {
      this.#failure ??= error instanceof Failure ? error : new Failure(this.#sim.failure('crash', `an operation threw: ${String(error)}`))
    })
    this.#pending.add(tracked)
    void tracked.finally(() => this.#pending.delete(tracked))
  }

  #failure: Failure | undefined

  // ---- checks ----

  /** What the provider lists agrees with the process table and the disk. */
  async #check (): Promise<void> {
    const listed = await this.provider.allInstances()
    this.#sim.trace(`list ${describe(listed)}`)
    for (const machineId of machineIds) {
      const agents = this.#agentsOf(machineId)
      if (agents.length > 1) this.#fail('safety', `machine ${machineId} has ${agents.length} live agents: ${agents.join(', ')}`)
      const instance = listed.find(i => i.machineId === machineId)
      if (agents.length > 0 && !this.#files.exists(this.provider.instanceDir(machineId))) {
        this.#fail('safety', `agent ${agents[0]!} of machine ${machineId} runs without its instance directory`)
      }
      if (instance === undefined || (this.#busy.get(machineId) ?? 0) > 0) continue
      if (instance.status === 'running' && agents.length === 0) this.#fail('safety', `machine ${machineId} is listed running with no live agent`)
      if (instance.status === 'failed' && agents.length > 0) this.#fail('safety', `machine ${machineId} is listed failed while agent ${agents[0]!} runs`)
    }
  }

  #agentsOf (machineId: string): number[] {
    return this.#processes.findByArgument(`${this.provider.instanceDir(machineId)}/`)
  }

  // ---- the simulated agent ----

  /** What a launched agent does: read from its bootstrap file and, while faults are on, the faults stream. */
  #agentOutcome (spec: DetachedProcessSpec): SimProcessOutcome {
    const bootstrapFile = spec.args[spec.args.indexOf('--bootstrap') + 1] ?? ''
    const bootstrap = new TextDecoder().decode(this.#files.readFile(bootstrapFile))
    let outcome: SimProcessOutcome = { durationMs: 0, hang: true, output: ['cantripd: up'] }
    if (bootstrap.startsWith('bad')) {
      outcome = { durationMs: 20, exitCode: 1, output: ['cantripd: reading bootstrap'], stderr: ['cantripd: bad bootstrap data', '    at decode (runtime/bootstrap-data.ts:1:1)'] }
    } else if (this.#faultsOn) {
      const roll = this.#faults.next()
      if (roll < 0.05) outcome = { durationMs: 0, spawnFailure: `spawn ${spec.command} EACCES`, missing: false }
      else if (roll < 0.15) outcome = { durationMs: this.#faults.int(1, timings.startCheckMs - 1), exitCode: 1, stderr: ['cantripd: cannot listen: address in use'] }
      else if (roll < 0.3) outcome = { durationMs: this.#faults.int(timings.startCheckMs + 1, 30_000), signal: 'SIGSEGV', stderr: ['Segmentation fault'] }
      else if (roll < 0.4) outcome = { durationMs: 0, hang: true, ignoresSigterm: true, output: ['cantripd: up (ignores SIGTERM)'] }
    }
    this.#sim.trace(`agent launch ${spec.args.slice(1).join(' ')} → ${outcomeName(outcome)}`)
    return outcome
  }

  // ---- time ----

  async #advance (ms: number): Promise<void> {
    const until = this.#sim.clock.now() + ms
    await flush()
    while (this.#sim.clock.now() < until) {
      this.#sim.clock.advance(Math.min(50, until - this.#sim.clock.now()))
      await flush()
      if (this.#failure !== undefined) throw this.#failure
    }
  }

  async #settle (promise: Promise<void>, deadline: number): Promise<void> {
    let done = false
    void promise.then(() => { done = true }, () => { done = true })
    while (!done) {
      if (this.#sim.clock.now() >= deadline) this.#fail('liveness', 'an operation did not finish within its budget')
      await this.#advance(50)
    }
    await promise
  }

  async #settlePending (deadline: number): Promise<void> {
    await this.#settle(Promise.all([...this.#pending]).then(() => {}), deadline)
    if (this.#failure !== undefined) throw this.#failure
  }

  #fail (kind: 'safety' | 'liveness', what: string): never {
    const failure = new Failure(this.#sim.failure(kind, what))
    this.#failure ??= failure
    throw failure
  }
}

function traceLogger (sim: Simulation, onMessage: (message: string) => void, module = 'local-provider'): Logger {
  return {
    module,
    log: (level, message, fields) => {
      onMessage(message)
      sim.trace(`log ${level} ${message} ${JSON.stringify(fields ?? {})}`)
    },
    child: name => traceLogger(sim, onMessage, `${module}.${name}`)
  }
}

function describe (listed: readonly InstanceInfo[]): string {
  return listed.map(i => `${i.machineId}:${i.status}`).sort().join(' ') || '(none)'
}

function outcomeName (outcome: SimProcessOutcome): string {
  if (outcome.spawnFailure !== undefined) return `cannot run (${outcome.spawnFailure})`
  if (outcome.hang === true) return outcome.ignoresSigterm === true ? 'runs, ignoring SIGTERM' : 'runs'
  return `${outcome.signal ?? `exit ${outcome.exitCode ?? 0}`} after ${outcome.durationMs} ms`
}
