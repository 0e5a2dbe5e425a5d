import type { Subscription } from 'xstate'
import { assert } from '../runtime/assert.ts'
import { HookLock } from '../runtime/hook-lock.ts'
import { unitTag, type MachineId, type UnitName } from '../runtime/ids.ts'
import { hashString32 } from '../runtime/random.ts'
import { describeHook, hookName, type HookInfo } from '../actors/unit/hook-info.ts'
import type { LocalState } from '../actors/unit/local-state.ts'
import type { ActionOutcome, DeployOutcome, HookOutcome } from '../actors/unit/operation.ts'
import { createUnitActor, type UnitActorRef, type UnitInput } from '../actors/unit/unit-machine.ts'
import type { UnitPorts } from '../actors/unit/unit-ports.ts'
import type { UnitEmitted } from '../actors/unit/unit-effects.ts'
import { createUnitStateStore, type UnitStateStore } from '../actors/unit/unit-state-store.ts'
import { AgentClock } from './agent-clock.ts'
import { ModelFixture } from './model-fixture.ts'
import { SimProcessRunner, type SimProcessOutcome } from './sim-process-runner.ts'
import { runHookProcess } from '../actors/unit/hook-process.ts'
import type { ProcessSpec } from '../runtime/process-runner.ts'
import { Simulation } from './simulation.ts'
import { SimStorage } from './sim-storage.ts'

/**
 * A deterministic world for unit actors: the real model behind a fixture (`model`), one
 * hook lock per machine, local state kept in memory as the durable copy, hooks whose outcomes are
 * scripted, and XState's simulated clock. `settle()` lets every actor run until nothing
 * moves. Crashes stop an actor without any further persistence; restarts rebuild it from
 * its durable local state, as the agent does after kill -9.
 */

export type HookRule = (unit: UnitName, hook: HookInfo, attempt: number) => HookOutcome | 'hold' | undefined

export interface HookRun {
  unit: UnitName
  /** `describeHook` form: `db-relation-joined mysql/0`. */
  hook: string
  info: HookInfo
  outcome?: HookOutcome['kind']
}

interface HeldHook {
  unit: UnitName
  hook: HookInfo
  resolve: (outcome: HookOutcome) => void
}

interface UnitSlot {
  actor: UnitActorRef
  subscription: Subscription
  generation: number
  machine: MachineId
}

export interface UnitWorldOptions {
  seed?: number
  /** The run this world belongs to (clock, PRNG streams, trace); one is made from `seed` if absent. */
  simulation?: Simulation
  updateStatusIntervalMs?: number
  automaticallyRetryHooks?: boolean
  /** Simulated duration of each hook run; 0 (the default) completes hooks at once. */
  hookDurationMs?: (unit: UnitName, hook: HookInfo) => number
  /** Clock drift of each machine agent (rate error, e.g. 0.001 = 0.1 % fast). */
  clockDrift?: (machine: MachineId) => number
}

/** Hook timeout in the simulated world (Juju has none by default; cantrip's runner has one). */
const hookTimeoutMs = 3_600_000

/** The simulated process that produces a scripted hook outcome after `durationMs`. */
function simulatedProcess (outcome: HookOutcome, durationMs: number): SimProcessOutcome {
  switch (outcome.kind) {
    case 'succeeded': return { durationMs, exitCode: 0 }
    case 'failed': return { durationMs, exitCode: outcome.exitCode ?? 1 }
    case 'missing': return { durationMs: 0, spawnFailure: 'no such hook', missing: true }
    case 'terminated': return { durationMs, signal: outcome.signal }
    case 'reboot-now': return { durationMs, signal: 'SIGKILL' }
  }
}

/** Microtask rounds a single settle may take before we call it a livelock. */
const settleRoundsMax = 100_000

export class UnitWorld {
  /** The real model; the test scripts it through the fixture's commands. */
  readonly model: ModelFixture
  readonly sim: Simulation
  readonly #agentClocks = new Map<MachineId, AgentClock>()
  readonly runs: HookRun[] = []
  /** `juju exec` commands run, in order. */
  readonly commands: Array<{ unit: UnitName, commands: string }> = []
  readonly emitted: Array<{ unit: UnitName, event: UnitEmitted }> = []
  /** A mirror of what each unit last saved durably, for synchronous inspection by tests. */
  readonly durable = new Map<UnitName, LocalState>()
  /** Each machine agent's storage; unit state goes through the real store code path. */
  readonly #storages = new Map<MachineId, { storage: SimStorage, store: UnitStateStore }>()
  readonly #slots = new Map<UnitName, UnitSlot>()
  readonly #generation = new Map<UnitName, number>()
  readonly #machines = new Map<UnitName, MachineId>()
  readonly #lastDelivered = new Map<UnitName, string>()
  readonly #pids = new Map<MachineId, number>()
  /** Paused machine agents: what reaches them waits here until they resume. */
  readonly #paused = new Map<MachineId, Array<() => void>>()
  readonly #lastDeliveredGeneration = new Map<UnitName, number>()
  readonly #locks = new Map<MachineId, HookLock>()
  readonly #held: HeldHook[] = []
  readonly #hookRules: HookRule[] = []
  readonly #attempts = new Map<string, number>()
  /** Units whose next charm deploys fail (a charm no controller could send), and how many more. */
  readonly #deployFailures = new Map<UnitName, number>()
  readonly #errors: unknown[] = []
  readonly #options: Required<Omit<UnitWorldOptions, 'simulation'>>
  #progress = 0
  #persistCount = 0
  readonly #persistCounts = new Map<UnitName | undefined, number>()
  #crashAtPersist: { count: number, write: boolean, unit: UnitName | undefined } | undefined
  #pendingCrash: UnitName | undefined
  /** Called after every simulated step (each batch of timers due at one instant, settled). */
  onStep: (() => void) | undefined
  /** Units whose agent the world starts automatically when the model adds them. */
  autoStart = true
  /** How many hooks ran concurrently on one machine at most (must stay 1). */
  maxConcurrentHooksPerMachine = 0
  /** Units with a hook running now, and their machine. */
  readonly #running = new Map<UnitName, { machine: MachineId, hook: HookInfo }>()

  constructor (options: UnitWorldOptions = {}) {
    this.sim = options.simulation ?? new Simulation({ seed: options.seed ?? 1 })
    this.#options = {
      seed: this.sim.seed,
      updateStatusIntervalMs: options.updateStatusIntervalMs ?? 300_000,
      automaticallyRetryHooks: options.automaticallyRetryHooks ?? false,
      hookDurationMs: options.hookDurationMs ?? (() => 0),
      clockDrift: options.clockDrift ?? (() => 0)
    }
    this.model = new ModelFixture({ clock: this.sim.clock, trace: line => { this.sim.trace(line) } })
    this.model.onChange(units => {
      for (const unit of units) this.#deliver(unit)
    })
  }

  // --- scripting -----------------------------------------------------------------

  /** Add a rule deciding hook outcomes; the first rule that answers wins, default success. */
  rule (rule: HookRule): this {
    this.#hookRules.push(rule)
    return this
  }

  /** Make `unit`'s hook named `name` fail `times` times (then succeed). */
  failHook (unit: UnitName, name: string, times = 1): this {
    let failures = 0
    return this.rule((u, hook) => {
      if (u !== unit || hookName(hook) !== name || failures >= times) return undefined
      failures++
      return { kind: 'failed', exitCode: 1, reason: `exit status 1` }
    })
  }

  /** Make `unit`'s next `times` charm deploys fail, as a fetch from controllers that lack the archive does. */
  failDeploy (unit: UnitName, times = 1): this {
    this.#deployFailures.set(unit, times)
    return this
  }

  /** Hold `unit`'s next hook named `name` until `releaseHook` is called. */
  holdHook (unit: UnitName, name: string): this {
    let held = false
    return this.rule((u, hook) => {
      if (held || u !== unit || hookName(hook) !== name) return undefined
      held = true
      return 'hold'
    })
  }

  heldHooks (): Array<{ unit: UnitName, hook: string }> {
    return this.#held.map(h => ({ unit: h.unit, hook: describeHook(h.hook) }))
  }

  releaseHook (unit: UnitName, outcome: HookOutcome = { kind: 'succeeded' }): void {
    const index = this.#held.findIndex(h => h.unit === unit)
    assert(index >= 0, `world: no held hook for "${unit}"`)
    const [held] = this.#held.splice(index, 1)
    this.#finishHook(held!.unit, held!.hook, outcome)
    held!.resolve(outcome)
  }

  /** Crash the unit actor at the `count`-th persist from now, before or after the write lands. */
  /** Crash at the `count`-th persist from now of `unit` (of any unit when omitted), before or after the write. */
  crashAtPersist (count: number, write: boolean, unit?: UnitName): void {
    this.#crashAtPersist = { count: this.persistCountOf(unit) + count, write, unit }
  }

  get persistCount (): number { return this.#persistCount }

  /** Persists made by `unit` so far (by every unit when omitted). */
  persistCountOf (unit?: UnitName): number {
    return unit === undefined ? this.#persistCount : this.#persistCounts.get(unit) ?? 0
  }

  // --- agents ----------------------------------------------------------------------

  start (unit: UnitName, options: { rebooted?: boolean } = {}): UnitActorRef {
    assert(!this.#slots.has(unit), `world: unit "${unit}" already running`)
    const generation = (this.#generation.get(unit) ?? 0) + 1
    this.#generation.set(unit, generation)
    const machine = this.model.machineOf(unit)
    this.#machines.set(unit, machine)
    const lock = this.#lockFor(machine)
    const world = this
    const ports: UnitPorts = {
      loadLocalState: async unit => await world.#storeFor(machine).load(unit),
      persistLocalState: async ({ unit, local }) => { await world.#persist(unit, local, machine) },
      acquireHookLock: (unit, acquired) => lock.acquire(unit, acquired),
      runHook: async ({ unit, hook }, signal) => await world.#runHook(unit, hook, machine, signal),
      deployCharm: async ({ unit }): Promise<DeployOutcome> => {
        const failures = world.#deployFailures.get(unit) ?? 0
        if (failures === 0) return { kind: 'deployed' }
        world.#deployFailures.set(unit, failures - 1)
        return { kind: 'failed', reason: `charm fetch: archive not in the controller's store` }
      },
      runAction: async ({ action }): Promise<ActionOutcome> => ({ status: 'completed', results: { name: action.name } }),
      runCommand: async ({ unit, command }) => {
        world.commands.push({ unit, commands: command.commands })
        return { exitCode: 0, stdout: '', stderr: '' }
      }
    }
    const input: UnitInput = {
      unit,
      remote: this.model.remoteState(unit, this.#agentClock(machine).now()),
      seed: hashString32(unit, this.#options.seed),
      updateStatusIntervalMs: this.#options.updateStatusIntervalMs,
      automaticallyRetryHooks: this.#options.automaticallyRetryHooks
    }
    if (options.rebooted === true) input.rebooted = true
    const actor = createUnitActor(ports, { input, clock: this.#agentClock(machine) })
    this.sim.trace(`start ${unit} generation ${generation}${options.rebooted === true ? ' rebooted' : ''}`)
    actor.on('*', event => this.#onEmitted(unit, generation, event))
    const subscription = actor.subscribe({
      next: () => { this.#progress++ },
      error: error => { this.#errors.push(error) }
    })
    this.#slots.set(unit, { actor, subscription, generation, machine })
    actor.start()
    return actor
  }

  /** kill -9: the actor stops where it is; nothing more is persisted. */
  crash (unit: UnitName): void {
    const slot = this.#slots.get(unit)
    assert(slot !== undefined, `world: unit "${unit}" not running`)
    this.sim.trace(`crash ${unit}`)
    this.#slots.delete(unit)
    slot.subscription.unsubscribe()
    slot.actor.stop()
    for (let i = this.#held.length - 1; i >= 0; i--) {
      if (this.#held[i]!.unit === unit) this.#held.splice(i, 1)
    }
    this.#running.delete(unit)
  }

  /** SIGTERM: the unit stops gracefully; a running hook is killed and re-queued. */
  async stop (unit: UnitName): Promise<void> {
    const slot = this.#slots.get(unit)
    assert(slot !== undefined, `world: unit "${unit}" not running`)
    this.sim.trace(`stop ${unit}`)
    slot.actor.send({ type: 'agent.stop' })
    // The agent kills the hook's process group on the way out.
    this.#running.delete(unit)
    // A held hook stands for a process: the runner reports it killed.
    for (const held of this.#held.filter(h => h.unit === unit)) this.releaseHook(unit, { kind: 'terminated', signal: 'SIGTERM' })
    await this.settle()
    assert(slot.actor.getSnapshot().status === 'done', `world: unit "${unit}" did not stop (state ${JSON.stringify(slot.actor.getSnapshot().value)})`)
    this.#slots.delete(unit)
    slot.subscription.unsubscribe()
  }

  restart (unit: UnitName, options: { rebooted?: boolean } = {}): UnitActorRef {
    if (this.#slots.has(unit)) this.crash(unit)
    return this.start(unit, options)
  }

  actor (unit: UnitName): UnitActorRef {
    const slot = this.#slots.get(unit)
    assert(slot !== undefined, `world: unit "${unit}" not running`)
    return slot.actor
  }

  running (unit: UnitName): boolean {
    return this.#slots.has(unit)
  }

  /** The uniter region's state: `idle`, `hookError`, `waiting`, `executing`… or the final state. */
  stateOf (unit: UnitName): string {
    const value = this.actor(unit).getSnapshot().value
    if (typeof value === 'string') return value
    const uniter = (value as { running?: { uniter?: unknown } }).running?.uniter
    return typeof uniter === 'string' ? uniter : Object.keys(uniter as object)[0] ?? 'unknown'
  }

  // --- observation -----------------------------------------------------------------

  /** Hooks `unit` started, in order (each run of a retried hook counts). */
  hooks (unit: UnitName): string[] {
    return this.runs.filter(run => run.unit === unit).map(run => run.hook)
  }

  /** Hooks started since the last call to `mark()`. */
  hooksSince (unit: UnitName, mark: number): string[] {
    return this.runs.slice(mark).filter(run => run.unit === unit).map(run => run.hook)
  }

  mark (): number {
    return this.runs.length
  }

  errors (): unknown[] {
    return [...this.#errors]
  }

  // --- running -----------------------------------------------------------------------

  /** Let everything run until no actor moves; throws on a livelock or an actor error. */
  async settle (): Promise<void> {
    let quietRounds = 0
    for (let round = 0; round < settleRoundsMax; round++) {
      const before = this.#progress
      await Promise.resolve()
      if (this.#pendingCrash !== undefined) {
        const unit = this.#pendingCrash
        this.#pendingCrash = undefined
        if (this.#slots.has(unit)) this.crash(unit)
      }
      if (this.#errors.length > 0) throw this.#errors[0]
      quietRounds = this.#progress === before ? quietRounds + 1 : 0
      if (quietRounds >= 8) return
    }
    throw new Error(`world: no quiescence after ${settleRoundsMax} rounds (seed ${this.#options.seed})`)
  }

  /** Advance simulated time by `ms`, firing each timer at its time and settling after it. */
  async advance (ms: number, _stepMs?: number): Promise<void> {
    const target = this.sim.clock.now() + ms
    await this.settle()
    for (;;) {
      const next = this.sim.clock.nextDueAt()
      if (next === undefined || next > target) break
      this.sim.clock.advanceTo(next)
      await this.settle()
      this.onStep?.()
    }
    this.sim.clock.advanceTo(target)
    await this.settle()
  }

  #agentClock (machine: MachineId): AgentClock {
    let clock = this.#agentClocks.get(machine)
    if (clock === undefined) {
      clock = new AgentClock(this.sim.clock, { drift: this.#options.clockDrift(machine) })
      this.#agentClocks.set(machine, clock)
    }
    return clock
  }

  // --- internals -----------------------------------------------------------------------

  #lockFor (machine: MachineId): HookLock {
    let lock = this.#locks.get(machine)
    if (lock === undefined) {
      lock = new HookLock(`machine-${machine}`)
      this.#locks.set(machine, lock)
    }
    return lock
  }

  #deliver (unit: UnitName): void {
    const machine = this.#machines.get(unit)
    const waiting = machine === undefined ? undefined : this.#paused.get(machine)
    if (waiting !== undefined) {
      waiting.push(() => this.#deliver(unit))
      return
    }
    const slot = this.#slots.get(unit)
    if (slot === undefined) {
      if (this.autoStart && !this.#generation.has(unit)) this.start(unit)
      return
    }
    if (slot.actor.getSnapshot().status !== 'active') return
    // Like the real watcher, only announce a remote state that actually changed.
    const remote = this.model.remoteStateIfPresent(unit, this.#agentClock(slot.machine).now())
    if (remote === undefined) return
    const key = JSON.stringify(remote)
    if (this.#lastDelivered.get(unit) === key && slot.generation === this.#lastDeliveredGeneration.get(unit)) return
    this.#lastDelivered.set(unit, key)
    this.#lastDeliveredGeneration.set(unit, slot.generation)
    slot.actor.send({ type: 'remote.changed', remote })
  }

  #onEmitted (unit: UnitName, generation: number, event: UnitEmitted): void {
    if (this.#slots.get(unit)?.generation !== generation) return
    this.#progress++
    this.emitted.push({ unit, event })
    this.sim.trace(`${unit} ${event.type}${'hook' in event ? ' ' + describeHook(event.hook) : ''}`)
    // The request the real unit agent sends for this event, proposed as the unit.
    const machine = this.#machines.get(unit)
    this.model.applyEmitted(unit, event, machine === undefined ? this.sim.clock.now() : this.#agentClock(machine).now())
  }

  #storeFor (machine: MachineId): UnitStateStore {
    let entry = this.#storages.get(machine)
    if (entry === undefined) {
      const storage = new SimStorage()
      entry = { storage, store: createUnitStateStore(storage) }
      this.#storages.set(machine, entry)
    }
    return entry.store
  }

  /** The simulated disk of a machine agent, for fault injection. */
  storageOf (machine: MachineId): SimStorage {
    this.#storeFor(machine)
    return this.#storages.get(machine)!.storage
  }

  async #persist (unit: UnitName, local: LocalState, machine: MachineId): Promise<void> {
    this.#persistCount++
    this.#persistCounts.set(unit, (this.#persistCounts.get(unit) ?? 0) + 1)
    this.#progress++
    const crash = this.#crashAtPersist
    const store = this.#storeFor(machine)
    if (crash !== undefined && (crash.unit === undefined || crash.unit === unit) && this.persistCountOf(crash.unit) >= crash.count) {
      this.#crashAtPersist = undefined
      // SimStorage applies a write when called, so the crash lands after (or before) it exactly.
      if (crash.write) {
        void store.save(unit, local)
        this.durable.set(unit, structuredClone(local))
      }
      this.#pendingCrash = unit
      return new Promise(() => {})
    }
    const saved = store.save(unit, local)
    this.durable.set(unit, structuredClone(local))
    return saved
  }

  #runHook (unit: UnitName, hook: HookInfo, machine: MachineId, signal: AbortSignal): Promise<HookOutcome> {
    this.#progress++
    assert(!this.#running.has(unit), `world: unit "${unit}" started a hook while another of its hooks runs`)
    this.#running.set(unit, { machine, hook })
    const running = [...this.#running.values()].filter(r => r.machine === machine).length
    this.maxConcurrentHooksPerMachine = Math.max(this.maxConcurrentHooksPerMachine, running)
    const key = `${unit}:${describeHook(hook)}`
    const attempt = (this.#attempts.get(key) ?? 0) + 1
    this.#attempts.set(key, attempt)
    this.runs.push({ unit, hook: describeHook(hook), info: hook })
    this.sim.trace(`${unit} run ${describeHook(hook)} attempt ${attempt}`)
    let decided: HookOutcome | 'hold' | undefined
    for (const rule of this.#hookRules) {
      decided = rule(unit, hook, attempt)
      if (decided !== undefined) break
    }
    if (decided === 'hold') {
      return new Promise(resolve => this.#held.push({ unit, hook, resolve }))
    }
    const outcome: HookOutcome = decided ?? { kind: 'succeeded' }
    const durationMs = this.#options.hookDurationMs(unit, hook)
    if (durationMs <= 0) {
      this.#finishHook(unit, hook, outcome)
      return Promise.resolve(outcome)
    }
    // The hook takes simulated time as a simulated process: the same mapping from process
    // exit to hook outcome as the real runner, and a stopping agent kills it.
    const spec: ProcessSpec = {
      command: `/var/lib/cantrip/agents/${unitTag(unit)}/charm/hooks/${hookName(hook)}`,
      args: [],
      env: { JUJU_UNIT_NAME: unit, JUJU_HOOK_NAME: hookName(hook) },
      cwd: `/var/lib/cantrip/agents/${unitTag(unit)}/charm`,
      timeoutMs: hookTimeoutMs,
      outputBytesMax: 65_536
    }
    const scripted = simulatedProcess(outcome, durationMs)
    const runner = this.#processRunnerFor(machine, () => scripted)
    return runHookProcess(runner, spec, hookName(hook), signal).then(result => this.#whenRunning(machine, () => {
      this.#finishHook(unit, hook, result)
      return result
    }))
  }

  /** Run `fn` now, or when the machine agent resumes if it is paused. */
  #whenRunning<T> (machine: MachineId, fn: () => T): Promise<T> {
    const waiting = this.#paused.get(machine)
    if (waiting === undefined) return Promise.resolve(fn())
    return new Promise(resolve => waiting.push(() => resolve(fn())))
  }

  /** SIGSTOP of a machine agent: its timers, deliveries and hook completions wait. */
  pause (machine: MachineId): void {
    if (this.#paused.has(machine)) return
    this.sim.trace(`pause machine ${machine}`)
    this.#paused.set(machine, [])
    this.#agentClock(machine).pause()
  }

  /** SIGCONT: everything that waited happens now, in order. */
  resume (machine: MachineId): void {
    const waiting = this.#paused.get(machine)
    if (waiting === undefined) return
    this.sim.trace(`resume machine ${machine}`)
    this.#paused.delete(machine)
    this.#agentClock(machine).resume()
    for (const run of waiting) run()
  }

  isPaused (machine: MachineId): boolean {
    return this.#paused.has(machine)
  }

  #processRunnerFor (machine: MachineId, script: () => SimProcessOutcome): SimProcessRunner {
    // One runner per hook start keeps the script per process; pids stay unique per machine.
    const firstPid = (this.#pids.get(machine) ?? 1000) + 1
    this.#pids.set(machine, firstPid)
    return new SimProcessRunner(this.sim.clock, script, { firstPid })
  }

  #finishHook (unit: UnitName, hook: HookInfo, outcome: HookOutcome): void {
    // A hook orphaned by a crash may finish after the restarted unit started another.
    if (this.#running.get(unit)?.hook === hook) this.#running.delete(unit)
    for (let i = this.runs.length - 1; i >= 0; i--) {
      const run = this.runs[i]!
      if (run.unit === unit && run.outcome === undefined && run.info === hook) { run.outcome = outcome.kind; break }
    }
  }
}
