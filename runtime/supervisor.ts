/**
 * Juju/Erlang-style supervision of an agent's workers. A worker that fails restarts after
 * a delay that doubles per consecutive failure up to a cap, so a crash loop backs off
 * instead of spinning; more restarts than the intensity limit within its window give the
 * worker up and, unless it is transient, stop the supervisor with a one-line reason. A
 * worker failing with a `FatalError` stops the whole supervisor at once.
 *
 * Time comes only from the injected `Clock`, so the same code runs on a `SimClock`.
 */
import { assert } from './assert.ts'
import type { Clock, TimerHandle } from './clock.ts'
import { CantripError, InvalidInputError } from './errors.ts'
import { limits } from './limits.ts'
import type { Logger } from './logger.ts'

/** A running worker: `done` settles when it ends by itself (rejects when it failed). */
export interface Worker {
  readonly done: Promise<void>
  stop (): Promise<void>
}

export interface SupervisorChild {
  /** Unique within the supervisor; used in status, logs and error messages. */
  readonly name: string
  /** Starts one incarnation of the worker; a throw or a rejection counts as a failure. */
  start (): Worker | Promise<Worker>
  /**
   * `on-failure` (the default) restarts only a worker that failed; `always` also restarts
   * one whose `done` resolved.
   */
  readonly restart?: 'on-failure' | 'always'
  /**
   * An optional worker: when it exceeds the restart intensity it is marked `failed` and
   * the supervisor carries on without it instead of escalating.
   */
  readonly transient?: boolean
}

export type SupervisorChildState = 'starting' | 'running' | 'backing-off' | 'stopped' | 'failed'

export interface SupervisorChildStatus {
  readonly state: SupervisorChildState
  /** Restarts scheduled since the supervisor started (the first start is not one). */
  readonly restarts: number
  /** Message of the most recent failure, on one line. */
  readonly lastError: string | undefined
  /** When a backing-off worker starts again, on the supervisor's clock. */
  readonly nextStartAt: number | undefined
}

export type SupervisorState = 'idle' | 'running' | 'stopping' | 'stopped' | 'failed'

export interface SupervisorPolicy {
  restartDelayMs?: number
  restartDelayMsMax?: number
  restartFactor?: number
  /** A worker that ran this long before failing starts its back-off again from the first delay. */
  healthyAfterMs?: number
  /** More restarts than this within `restartIntensityWindowMs` give the worker up. */
  restartIntensityMax?: number
  restartIntensityWindowMs?: number
  /** Longest wait for one worker's start or stop while the supervisor stops. */
  stopTimeoutMs?: number
}

export interface SupervisorComponents {
  readonly clock: Clock
  readonly logger: Logger
}

export interface SupervisorInit extends SupervisorPolicy {
  /** Names the supervisor in logs and escalation messages (`machine-0`). */
  readonly name?: string
  readonly children: readonly SupervisorChild[]
}

/**
 * A failure no restart can cure (bad configuration, revoked credentials): a worker that
 * fails with it stops the whole supervisor, whose `done` rejects with this very error.
 * Recognised by `err.name === 'FatalError'`, so errors from other realms count too.
 */
export class FatalError extends CantripError {
  override name = 'FatalError'
}

/** A non-transient worker restarted too often; the supervisor stopped because of it. */
export class RestartIntensityExceededError extends CantripError {
  override name = 'RestartIntensityExceededError'
  constructor (
    readonly supervisor: string,
    readonly worker: string,
    readonly restartsMax: number,
    readonly windowMs: number,
    lastError: string,
    options?: { cause?: unknown }
  ) {
    super(`supervisor "${supervisor}": worker "${worker}" failed after more than ${restartsMax} restarts within ${windowMs} ms; last error: ${lastError}`, options)
  }
}

interface ChildRecord {
  readonly spec: SupervisorChild
  state: SupervisorChildState
  /** Bumped at every start attempt and at stop, so callbacks of older incarnations are ignored. */
  generation: number
  worker: Worker | undefined
  /** The start in flight while `starting`, settled to the worker or undefined. */
  pendingStart: Promise<Worker | undefined> | undefined
  startedAt: number | undefined
  consecutiveFailures: number
  restarts: number
  /** When recent restarts were scheduled, oldest first; never longer than the intensity max. */
  restartTimes: number[]
  lastError: string | undefined
  nextStartAt: number | undefined
  timer: TimerHandle | undefined
}

export class Supervisor {
  readonly name: string
  /** Resolves once `stop()` has stopped every worker; rejects on escalation or a fatal error. */
  readonly done: Promise<void>
  readonly #clock: Clock
  readonly #logger: Logger
  readonly #children: ChildRecord[]
  readonly #policy: Required<SupervisorPolicy>
  #state: SupervisorState = 'idle'
  #stopping: Promise<void> | undefined
  /** Why the supervisor escalated; `done` rejects with it once every worker has stopped. */
  #failure: { err: unknown } | undefined
  #resolveDone!: () => void
  #rejectDone!: (err: unknown) => void

  constructor (components: SupervisorComponents, init: SupervisorInit) {
    this.#clock = components.clock
    this.#logger = components.logger
    this.name = init.name ?? 'supervisor'
    this.#policy = {
      restartDelayMs: init.restartDelayMs ?? limits.supervisorRestartDelayMsMin,
      restartDelayMsMax: init.restartDelayMsMax ?? limits.supervisorRestartDelayMsMax,
      restartFactor: init.restartFactor ?? limits.supervisorRestartFactor,
      healthyAfterMs: init.healthyAfterMs ?? limits.supervisorHealthyAfterMs,
      restartIntensityMax: init.restartIntensityMax ?? limits.supervisorRestartIntensityMax,
      restartIntensityWindowMs: init.restartIntensityWindowMs ?? limits.supervisorRestartIntensityWindowMs,
      stopTimeoutMs: init.stopTimeoutMs ?? limits.supervisorStopTimeoutMs
    }
    const p = this.#policy
    const where = `supervisor "${this.name}"`
    assert(Number.isFinite(p.restartDelayMs) && p.restartDelayMs >= 0, `${where}: restartDelayMs must be finite and >= 0, got ${String(p.restartDelayMs)}`)
    assert(Number.isFinite(p.restartDelayMsMax) && p.restartDelayMsMax >= p.restartDelayMs, `${where}: restartDelayMsMax must be finite and >= restartDelayMs, got ${String(p.restartDelayMsMax)}`)
    assert(Number.isFinite(p.restartFactor) && p.restartFactor >= 1, `${where}: restartFactor must be finite and >= 1, got ${String(p.restartFactor)}`)
    assert(Number.isFinite(p.healthyAfterMs) && p.healthyAfterMs >= 0, `${where}: healthyAfterMs must be finite and >= 0, got ${String(p.healthyAfterMs)}`)
    assert(Number.isSafeInteger(p.restartIntensityMax) && p.restartIntensityMax >= 0, `${where}: restartIntensityMax must be an integer >= 0, got ${String(p.restartIntensityMax)}`)
    assert(Number.isFinite(p.restartIntensityWindowMs) && p.restartIntensityWindowMs > 0, `${where}: restartIntensityWindowMs must be finite and > 0, got ${String(p.restartIntensityWindowMs)}`)
    assert(Number.isFinite(p.stopTimeoutMs) && p.stopTimeoutMs > 0, `${where}: stopTimeoutMs must be finite and > 0, got ${String(p.stopTimeoutMs)}`)
    assert(init.children.length <= limits.supervisorChildrenMax,
      `${where}: ${init.children.length} workers exceed supervisorChildrenMax (${limits.supervisorChildrenMax})`)
    const names = new Set<string>()
    this.#children = init.children.map(spec => {
      assert(typeof spec.name === 'string' && spec.name !== '', `${where}: a worker needs a name`)
      assert(!names.has(spec.name), `${where}: worker "${spec.name}" is named twice`)
      assert(typeof spec.start === 'function', `${where}: worker "${spec.name}" has no start function`)
      names.add(spec.name)
      return {
        spec,
        state: 'stopped',
        generation: 0,
        worker: undefined,
        pendingStart: undefined,
        startedAt: undefined,
        consecutiveFailures: 0,
        restarts: 0,
        restartTimes: [],
        lastError: undefined,
        nextStartAt: undefined,
        timer: undefined
      }
    })
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolveDone = resolve
      this.#rejectDone = reject
    })
    // Whoever holds the supervisor decides whether to await `done`; an escalation nobody
    // awaits must not become an unhandled rejection that kills the agent process.
    this.done.catch(() => {})
  }

  get state (): SupervisorState {
    return this.#state
  }

  /** Starts every worker in the order given; a worker that fails to start backs off like any failure. */
  start (): void {
    assert(this.#state === 'idle', `supervisor "${this.name}": cannot start when ${this.#state}`)
    this.#state = 'running'
    for (const child of this.#children) {
      if (this.#state !== 'running') break // a fatal start stops the rest from starting
      this.#startChild(child)
    }
  }

  /**
   * Stops every worker, last declared first, after cancelling pending restarts. Idempotent:
   * every call returns the same promise, which resolves (never rejects) once all are stopped.
   */
  stop (): Promise<void> {
    if (this.#stopping === undefined) {
      this.#state = 'stopping'
      this.#stopping = this.#stopAll().then(() => {
        const failure = this.#failure
        this.#state = failure === undefined ? 'stopped' : 'failed'
        if (failure === undefined) this.#resolveDone()
        else this.#rejectDone(failure.err)
      })
    }
    return this.#stopping
  }

  status (): Record<string, SupervisorChildStatus> {
    const out: Record<string, SupervisorChildStatus> = {}
    for (const child of this.#children) {
      out[child.spec.name] = {
        state: child.state,
        restarts: child.restarts,
        lastError: child.lastError,
        nextStartAt: child.nextStartAt
      }
    }
    return out
  }

  #startChild (child: ChildRecord): void {
    const generation = ++child.generation
    child.state = 'starting'
    child.nextStartAt = undefined
    child.startedAt = undefined
    child.worker = undefined
    let started: Worker | Promise<Worker>
    try {
      started = child.spec.start()
    } catch (err) {
      child.pendingStart = undefined
      this.#childFailed(child, generation, err)
      return
    }
    if (isThenable(started)) {
      const pending = Promise.resolve(started)
      child.pendingStart = pending.then(worker => worker, () => undefined)
      pending.then(
        worker => this.#childStarted(child, generation, worker),
        err => this.#childFailed(child, generation, err)
      )
    } else {
      child.pendingStart = undefined
      this.#childStarted(child, generation, started)
    }
  }

  #childStarted (child: ChildRecord, generation: number, worker: unknown): void {
    // While stopping, `#stopChild` owns a worker that finishes starting late and stops it.
    if (generation !== child.generation || this.#state !== 'running') return
    if (!isWorker(worker)) {
      this.#childFailed(child, generation,
        new InvalidInputError(`worker "${child.spec.name}" start`, 'a worker with done and stop()', worker))
      return
    }
    child.pendingStart = undefined
    child.worker = worker
    child.state = 'running'
    child.startedAt = this.#clock.now()
    this.#logger.log('debug', `worker "${child.spec.name}" started`, { worker: child.spec.name, restarts: child.restarts })
    Promise.resolve(worker.done).then(
      () => this.#childCompleted(child, generation),
      err => this.#childFailed(child, generation, err)
    )
  }

  #childCompleted (child: ChildRecord, generation: number): void {
    if (generation !== child.generation || this.#state !== 'running') return
    child.worker = undefined
    if (child.spec.restart === 'always') {
      // A normal end is no failure, so the back-off starts over; the intensity limit still
      // catches a worker that keeps ending at once.
      child.consecutiveFailures = 0
      this.#logger.log('info', `worker "${child.spec.name}" completed; restarting`, { worker: child.spec.name })
      this.#scheduleRestart(child, this.#policy.restartDelayMs, undefined)
      return
    }
    child.state = 'stopped'
    this.#logger.log('info', `worker "${child.spec.name}" completed`, { worker: child.spec.name })
  }

  #childFailed (child: ChildRecord, generation: number, err: unknown): void {
    if (generation !== child.generation || this.#state !== 'running') return
    const now = this.#clock.now()
    child.worker = undefined
    child.pendingStart = undefined
    child.lastError = oneLine(err)
    if (isFatal(err)) {
      child.state = 'failed'
      this.#logger.log('error', `worker "${child.spec.name}" failed fatally: ${child.lastError}`, { worker: child.spec.name })
      this.#escalate(err)
      return
    }
    if (child.startedAt !== undefined && now - child.startedAt >= this.#policy.healthyAfterMs) child.consecutiveFailures = 0
    child.consecutiveFailures++
    const p = this.#policy
    const delay = Math.min(p.restartDelayMsMax, p.restartDelayMs * p.restartFactor ** (child.consecutiveFailures - 1))
    this.#logger.log('warning', `worker "${child.spec.name}" failed: ${child.lastError}`,
      { worker: child.spec.name, consecutiveFailures: child.consecutiveFailures })
    this.#scheduleRestart(child, delay, err)
  }

  #scheduleRestart (child: ChildRecord, delayMs: number, cause: unknown): void {
    const now = this.#clock.now()
    const p = this.#policy
    const times = child.restartTimes
    while (times.length > 0 && times[0]! <= now - p.restartIntensityWindowMs) times.shift()
    if (times.length >= p.restartIntensityMax) {
      child.state = 'failed'
      child.nextStartAt = undefined
      const err = new RestartIntensityExceededError(this.name, child.spec.name, p.restartIntensityMax,
        p.restartIntensityWindowMs, child.lastError ?? 'completed', { cause })
      if (child.spec.transient === true) {
        this.#logger.log('error', `${err.message}; transient, carrying on without it`, { worker: child.spec.name })
        return
      }
      this.#logger.log('error', err.message, { worker: child.spec.name })
      this.#escalate(err)
      return
    }
    times.push(now)
    assert(times.length <= p.restartIntensityMax, `supervisor "${this.name}": worker "${child.spec.name}" kept ${times.length} restart times`)
    child.restarts++
    child.state = 'backing-off'
    child.nextStartAt = now + delayMs
    child.timer = this.#clock.setTimeout(() => {
      child.timer = undefined
      if (this.#state === 'running' && child.state === 'backing-off') this.#startChild(child)
    }, delayMs)
  }

  /** Stops everything and rejects `done` with `err`; the first escalation wins. */
  #escalate (err: unknown): void {
    if (this.#state !== 'running') return
    this.#failure = { err }
    void this.stop()
  }

  async #stopAll (): Promise<void> {
    // Cancel every restart first, so nothing starts while earlier workers are stopping.
    for (const child of this.#children) {
      if (child.timer !== undefined) this.#clock.clearTimeout(child.timer)
      child.timer = undefined
      child.nextStartAt = undefined
      if (child.state === 'backing-off') child.state = 'stopped'
    }
    for (let i = this.#children.length - 1; i >= 0; i--) await this.#stopChild(this.#children[i]!)
  }

  async #stopChild (child: ChildRecord): Promise<void> {
    const name = child.spec.name
    child.generation++
    let worker = child.worker
    if (child.state === 'starting' && child.pendingStart !== undefined) {
      const started = await this.#within(child.pendingStart)
      if (!started.ok) this.#logger.log('warning', `worker "${name}" still starting after ${this.#policy.stopTimeoutMs} ms; abandoned`, { worker: name })
      worker = started.ok && isWorker(started.value) ? started.value : undefined
    }
    child.worker = undefined
    child.pendingStart = undefined
    if (child.state !== 'failed') child.state = 'stopped'
    if (worker === undefined) return
    let stopping: Promise<void>
    try {
      stopping = Promise.resolve(worker.stop())
    } catch (err) {
      stopping = Promise.reject(err)
    }
    const stopped = await this.#within(stopping.then(() => undefined, (err: unknown) => err))
    if (!stopped.ok) {
      this.#logger.log('warning', `worker "${name}" did not stop within ${this.#policy.stopTimeoutMs} ms; abandoned`, { worker: name })
    } else if (stopped.value !== undefined) {
      this.#logger.log('warning', `worker "${name}" failed while stopping: ${oneLine(stopped.value)}`, { worker: name })
    } else {
      this.#logger.log('debug', `worker "${name}" stopped`, { worker: name })
    }
  }

  /** Waits for `promise` (which must not reject) up to the stop timeout on the clock. */
  #within<T> (promise: Promise<T>): Promise<{ ok: true, value: T } | { ok: false }> {
    return new Promise(resolve => {
      const timer = this.#clock.setTimeout(() => resolve({ ok: false }), this.#policy.stopTimeoutMs)
      promise.then(value => {
        this.#clock.clearTimeout(timer)
        resolve({ ok: true, value })
      })
    })
  }
}

function isThenable (value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

function isWorker (value: unknown): value is Worker {
  return typeof value === 'object' && value !== null &&
    isThenable((value as { done?: unknown }).done) &&
    typeof (value as { stop?: unknown }).stop === 'function'
}

function isFatal (err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'FatalError'
}

/** An error's message on one line and bounded, for status and escalation messages. */
function oneLine (err: unknown): string {
  const text = err instanceof Error ? err.message : typeof err === 'string' ? err : `a thrown ${describeThrown(err)}`
  const flat = text.replace(/\s*\n\s*/g, ' ').trim()
  return flat.length > 500 ? flat.slice(0, 497) + '...' : flat === '' ? 'no message' : flat
}

function describeThrown (value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'object') return 'object'
  return `${typeof value} ${String(value)}`
}
