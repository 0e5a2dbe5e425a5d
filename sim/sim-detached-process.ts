/**
 * One simulated detached process (a machine agent) in `SimProcessRunner`'s process
 * table: it ends by itself after its outcome's `durationMs` unless it hangs, when
 * signalled, or when the simulation crashes it.
 */
import type { TimerHandle } from '../runtime/clock.ts'
import type { DetachedExit, DetachedProcessSpec, ProcessSignal } from '../runtime/process-runner.ts'
import type { SimClock } from './sim-clock.ts'
import type { SimProcessOutcome } from './sim-process-runner.ts'

export class SimDetachedProcess {
  readonly pid: number
  /** The start time `identify` reports: a later process given this pid would differ. */
  readonly startTime: string
  /** What /proc/<pid>/cmdline would hold: command and arguments, NUL-separated. */
  readonly commandLine: string
  readonly exit: Promise<DetachedExit>
  readonly #outcome: SimProcessOutcome
  readonly #clock: SimClock
  readonly #onEnded: () => void
  #resolve!: (exit: DetachedExit) => void
  #timer: TimerHandle | undefined
  #ended = false

  constructor (pid: number, spec: DetachedProcessSpec, outcome: SimProcessOutcome, clock: SimClock, onEnded: () => void) {
    this.pid = pid
    this.startTime = String(clock.now())
    this.commandLine = [spec.command, ...spec.args].join('\0')
    this.#outcome = outcome
    this.#clock = clock
    this.#onEnded = onEnded
    this.exit = new Promise(resolve => { this.#resolve = resolve })
    if (outcome.hang !== true) {
      this.#timer = clock.setTimeout(() => {
        this.#timer = undefined
        this.end(outcome.signal !== undefined ? { kind: 'signalled', signal: outcome.signal } : { kind: 'exited', exitCode: outcome.exitCode ?? 0 })
      }, outcome.durationMs)
    }
  }

  receive (signal: ProcessSignal): void {
    if (signal === 'SIGKILL' || this.#outcome.ignoresSigterm !== true) this.end({ kind: 'signalled', signal })
  }

  end (exit: DetachedExit): void {
    if (this.#ended) return
    this.#ended = true
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#onEnded()
    this.#resolve(exit)
  }
}
