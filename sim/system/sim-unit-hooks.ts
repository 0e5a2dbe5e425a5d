/**
 * Hooks of scripted charms, as a simulated machine agent runs them. A hook's behaviour
 * comes from its unit's ScenarioCharm (matched by hook name over `*`) and from the fault
 * schedule (the HookFaultBook): it fails, hangs, or takes its duration of simulated time
 * on the agent's clock (so a paused agent's hooks do not finish), and when it succeeds
 * its hook-tool calls take effect the way a real hook's do (agent/uniter/
 * unit-hook-context.ts): `status-set` and `leader-set` at once, `relation-set` buffered
 * and committed with the rest in ONE `commit-hook-changes` command; a refusal fails the
 * hook, as a failed flush does in Juju.
 */
import { describeHook, hookName, type HookInfo } from '../../actors/unit/hook-info.ts'
import type { LocalState } from '../../actors/unit/local-state.ts'
import type { HookOutcome } from '../../actors/unit/operation.ts'
import { hookOutcomeOf } from '../../actors/unit/hook-process.ts'
import type { Clock } from '../../runtime/clock.ts'
import { applicationOf } from '../../runtime/ids.ts'
import { CommandProposer, type ModelCommandBody } from '../../runtime/model/command-proposer.ts'
import { believesLeader } from '../../runtime/model/leases.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { CommandResult, ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import type { HookBehaviour, ScenarioCharm } from '../scenario/scenario-types.ts'
import type { Simulation } from '../simulation.ts'
import type { HookFaultBook, HookRunRecord } from './machine-agent-types.ts'

/** What the hooks of one agent need of its controller link (the ControllerClient). */
export interface HookController {
  model (): ModelContext
  submit (command: ModelCommand): Promise<CommandResult>
  now (): number
}

export interface SimUnitHooksOptions {
  sim: Simulation
  machineId: string
  charms: Readonly<Record<string, ScenarioCharm>>
  hookFaults: HookFaultBook
  /** The agent's clock of its current run (timers of a crashed run never fire). */
  clock: () => Clock
  /** The current run's controller link; undefined while the agent is down. */
  controller: () => HookController | undefined
  /** Runs `fn` now, or when the agent resumes if it is paused (SIGSTOP). */
  whenRunning: (fn: () => void) => void
  onHook?: (run: HookRunRecord) => void
}

/** The charm name a URL names: `local:kv-3` → `kv`, `ch:amd64/kv-12` → `kv`. */
export function charmNameOf (url: string): string {
  const path = url.slice(url.indexOf(':') + 1)
  const base = path.slice(path.lastIndexOf('/') + 1)
  return base.replace(/-\d+$/, '')
}

/** The behaviour of hook `name`: the charm's `*` entry overlaid with the hook's own. */
export function behaviourOf (charm: ScenarioCharm | undefined, name: string): HookBehaviour {
  if (charm === undefined) return {}
  return { ...charm.hooks['*'], ...charm.hooks[name] }
}

/** Workload statuses the charm's hooks may set; empty when none sets one. */
export function charmStatuses (charm: ScenarioCharm): Array<{ status: string, message: string }> {
  const out = new Map<string, { status: string, message: string }>()
  for (const name of Object.keys(charm.hooks)) {
    const status = behaviourOf(charm, name).status
    if (status !== undefined) out.set(`${status.status} ${status.message ?? ''}`, { status: status.status, message: status.message ?? '' })
  }
  return [...out.values()]
}

/** A hook's fate, decided as it starts. */
type Plan = { kind: 'run', name: string, fail: boolean, durationMs: number } | { kind: 'hang', untilMs: number | undefined }

export class SimUnitHooks {
  readonly #o: SimUnitHooksOptions
  readonly #durations
  readonly #failures
  /** `<unit> <hook>` → runs so far, for `failTimes` (survives crashes: it is the charm's script). */
  readonly #runs = new Map<string, number>()
  /** Units with a hook running now, in the current run of the agent. */
  readonly #running = new Set<string>()
  #generation = 0
  #contexts = 0
  maxConcurrent = 0

  constructor (options: SimUnitHooksOptions) {
    this.#o = options
    this.#durations = options.sim.random('clock')
    // Not "faults": hook outcomes drawn as hooks run must not shift the world's fault targets.
    this.#failures = options.sim.random('hook-faults')
  }

  /** kill -9: the running hooks died with the agent; their ends are never reported. */
  reset (): void {
    this.#generation++
    this.#running.clear()
  }

  async run (unit: string, hook: HookInfo, local: LocalState, signal: AbortSignal): Promise<HookOutcome> {
    const name = hookName(hook)
    const charm = local.charm === undefined ? undefined : this.#o.charms[charmNameOf(local.charm.url)]
    const behaviour = behaviourOf(charm, name)
    const generation = this.#generation
    const startMs = this.#o.sim.clock.now()
    this.#running.add(unit)
    this.maxConcurrent = Math.max(this.maxConcurrent, this.#running.size)
    const plan = this.#plan(unit, name, behaviour)
    this.#o.sim.trace(`machine-${this.#o.machineId} ${unit} hook ${describeHook(hook)} ${plan.kind === 'hang' ? 'hangs' : `${plan.durationMs} ms${plan.fail ? ' fails' : ''}`}`)
    const controller = this.#o.controller()
    let outcome = await this.#wait(plan, signal)
    // A hook of a run that crashed died with it: no effects, nothing reported.
    if (generation !== this.#generation || controller === undefined) return { kind: 'terminated', signal: 'SIGKILL' }
    if (outcome.kind === 'succeeded') outcome = await this.#applyEffects(controller, unit, hook, name, local, behaviour)
    if (generation === this.#generation) {
      this.#running.delete(unit)
      this.#o.sim.trace(`machine-${this.#o.machineId} ${unit} hook ${describeHook(hook)} ${outcome.kind}`)
      this.#o.onHook?.({ unit, machine: this.#o.machineId, hook: describeHook(hook), startMs, endMs: this.#o.sim.clock.now(), outcome: outcome.kind === 'reboot-now' ? 'terminated' : outcome.kind })
    }
    return outcome
  }

  #plan (unit: string, name: string, behaviour: HookBehaviour): Plan {
    const key = `${unit} ${name}`
    const runs = (this.#runs.get(key) ?? 0) + 1
    this.#runs.set(key, runs)
    const injected = this.#o.hookFaults.take(unit, name)
    if (injected?.kind === 'hang') return { kind: 'hang', untilMs: injected.untilMs }
    let fail = injected?.kind === 'fail' || runs <= (behaviour.failTimes ?? 0)
    // Drawn only when the charm asks, so other charms do not shift the stream.
    if (!fail && behaviour.failProbability !== undefined && behaviour.failProbability > 0) fail = this.#failures.next() < behaviour.failProbability
    const duration = behaviour.durationMs
    const durationMs = duration === undefined ? 0 : typeof duration === 'number' ? duration : this.#durations.int(duration[0], duration[1])
    return { kind: 'run', name, fail, durationMs }
  }

  /** The hook's run time; a stopping agent (the actor's abort) kills it: `terminated`. */
  async #wait (plan: Plan, signal: AbortSignal): Promise<HookOutcome> {
    if (plan.kind === 'run' && plan.durationMs === 0) return plan.fail ? failed(plan.name) : { kind: 'succeeded' }
    const clock = this.#o.clock()
    return await new Promise<HookOutcome>(resolve => {
      let done = false
      let timer: ReturnType<Clock['setTimeout']> | undefined
      let unregister: (() => void) | undefined
      const finish = (outcome: HookOutcome): void => {
        if (done) return
        done = true
        if (timer !== undefined) clock.clearTimeout(timer)
        unregister?.()
        signal.removeEventListener('abort', abort)
        resolve(outcome)
      }
      const abort = (): void => { finish({ kind: 'terminated', signal: 'SIGTERM' }) }
      if (signal.aborted) { abort(); return }
      signal.addEventListener('abort', abort, { once: true })
      if (plan.kind === 'run') {
        timer = clock.setTimeout(() => { finish(plan.fail ? failed(plan.name) : { kind: 'succeeded' }) }, plan.durationMs)
        return
      }
      // A hung hook ends (exit 0) when its time comes or the heal phase releases it.
      unregister = this.#o.hookFaults.onRelease(() => { this.#o.whenRunning(() => { finish({ kind: 'succeeded' }) }) })
      if (plan.untilMs !== undefined) timer = clock.setTimeout(() => { finish({ kind: 'succeeded' }) }, Math.max(0, plan.untilMs - this.#o.sim.clock.now()))
    })
  }

  /** The hook exited 0: its tool calls, as a real hook's would take effect. */
  async #applyEffects (controller: HookController, unit: string, hook: HookInfo, name: string, local: LocalState, behaviour: HookBehaviour): Promise<HookOutcome> {
    const proposer = new CommandProposer({ proposer: { kind: 'unit', name: unit }, requestPrefix: `${unit}-${name}-${++this.#contexts}` })
    const submit = async (body: ModelCommandBody): Promise<string | undefined> => {
      try {
        const result = await proposer.submit(controller, body)
        return result.ok ? undefined : result.error
      } catch (error) {
        return error instanceof Error ? error.message : String(error)
      }
    }
    const application = applicationOf(unit)
    const problems: string[] = []
    if (behaviour.status !== undefined) {
      const problem = await submit({ type: 'set-unit-status', unit, status: behaviour.status.status, message: behaviour.status.message ?? '', now: Math.floor(controller.now()) })
      if (problem !== undefined) problems.push(`status-set: ${problem}`)
    }
    const model = controller.model()
    if (behaviour.leaderSet !== undefined && believesLeader(readerOf(model).lease(application), unit, controller.now())) {
      const problem = await submit({ type: 'leader-settings', application, unit, settings: expand(behaviour.leaderSet, unit) })
      if (problem !== undefined) problems.push(`leader-set: ${problem}`)
    }
    const relationId = hook.relationId
    const writesRelation = (hook.kind === 'relation-joined' || hook.kind === 'relation-changed') && relationId !== undefined &&
      behaviour.relationSet !== undefined && local.relations[String(relationId)] !== undefined
    if (writesRelation) {
      const problem = await submit({ type: 'commit-hook-changes', unit, relationSettings: [{ relationId, settings: expand(behaviour.relationSet!, unit) }] })
      if (problem !== undefined) problems.push(`cannot commit its changes: ${problem}`)
    }
    if (problems.length === 0) return behaviour.status === undefined ? { kind: 'succeeded' } : { kind: 'succeeded', statusSet: true }
    return { kind: 'failed', exitCode: 1, reason: `hook "${name}": ${problems.join('; ')}` }
  }
}

function failed (name: string): HookOutcome {
  return hookOutcomeOf({ kind: 'exited', exitCode: 1, outputBytes: 0, outputTruncated: false }, name)
}

/** `{unit}` in a scripted value is the unit's name. */
function expand (values: Readonly<Record<string, string>>, unit: string): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, value.replaceAll('{unit}', unit)]))
}
