/**
 * The controllers' clock worker for secret rotation and expiry (Juju's secretrotate and
 * secretexpire workers, moved to the controller that holds the singular lease). It keeps
 * no deadline of its own: every pass reads them from the replicated model
 * (runtime/model/secret-triggers.ts), proposes the ones its clock has passed, and arms a
 * single timer for the next. Started on the singular-lease holder and stopped when it
 * loses the lease, so after a failover the next holder starts from the same data: a
 * deadline that passed while no controller ran the worker fires as soon as one does, and
 * a trigger the old holder already committed is not in the model's pending set any more.
 */
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import { limits } from '../../runtime/limits.ts'
import type { Logger } from '../../runtime/logger.ts'
import { CommandProposer, type CommandSink } from '../../runtime/model/command-proposer.ts'
import type { ModelContext } from '../../runtime/model/model-types.ts'
import { dueSecretTriggers, nextSecretTriggerAt, type SecretTrigger } from '../../runtime/model/secret-triggers.ts'

export interface SecretTriggerWorkerOptions {
  controllerId: string
  /** Unique per start (a term and a clock reading): request ids never repeat across holders. */
  incarnation: string
  clock: Clock
  /** The controller's applied model. */
  model: () => ModelContext
  /** Called after entries apply; returns the unsubscribe. */
  onModelChange: (listener: () => void) => () => void
  sink: CommandSink
  logger: Logger
}

export function startSecretTriggerWorker (o: SecretTriggerWorkerOptions): { stop: () => void } {
  const proposer = new CommandProposer({ proposer: { kind: 'controller', id: o.controllerId }, requestPrefix: `secret-triggers/${o.controllerId}/${o.incarnation}` })
  let stopped = false
  let inFlight = false
  let again = false
  let timer: { handle: TimerHandle, at: number } | undefined
  /** Triggers the model refused in this run: not proposed again, so a refusal cannot loop. */
  const refused = new Set<string>()
  const keyOf = (t: SecretTrigger): string => `${t.type}/${t.id}/${t.type === 'secret-expire-due' ? t.revision : ''}/${t.deadline}`
  const due = (): SecretTrigger[] => dueSecretTriggers(o.model(), o.clock.now()).filter(t => !refused.has(keyOf(t)))

  const arm = (at: number | undefined): void => {
    if (timer !== undefined && timer.at === at) return
    if (timer !== undefined) o.clock.clearTimeout(timer.handle)
    timer = undefined
    if (at === undefined || stopped) return
    timer = { at, handle: o.clock.setTimeout(() => { timer = undefined; pass() }, Math.max(0, at - o.clock.now())) }
  }

  const propose = async (): Promise<boolean> => {
    let ok = true
    for (const trigger of due()) {
      if (stopped) break
      try {
        const result = await proposer.submit(o.sink, { ...trigger, now: Math.floor(o.clock.now()) })
        if (!result.ok) {
          refused.add(keyOf(trigger))
          o.logger.log('warning', `secret ${trigger.id}: ${trigger.type} refused: ${result.error}`)
        }
      } catch (error) {
        ok = false
        o.logger.log('debug', `secret ${trigger.id}: ${trigger.type} not committed yet: ${error instanceof Error ? error.message : String(error)}`)
        break
      }
    }
    return ok
  }

  function pass (): void {
    if (stopped) return
    if (inFlight) { again = true; return }
    if (due().length === 0) {
      arm(nextSecretTriggerAt(o.model()))
      return
    }
    inFlight = true
    void propose().then(ok => {
      inFlight = false
      // What committed reaches this controller's model as it applies (the listener runs
      // pass again); the timer covers a lost quorum or lease and an apply still behind.
      arm(o.clock.now() + limits.secretTriggerRetryMs)
      if (ok && again) { again = false; pass() }
    })
  }

  // One pass per burst of applied entries, not one scan of the secrets per entry.
  let queued: TimerHandle | undefined
  const unsubscribe = o.onModelChange(() => {
    if (queued !== undefined || stopped) return
    queued = o.clock.setTimeout(() => { queued = undefined; pass() }, 0)
  })
  pass()
  return {
    stop: () => {
      stopped = true
      unsubscribe()
      if (queued !== undefined) o.clock.clearTimeout(queued)
      if (timer !== undefined) o.clock.clearTimeout(timer.handle)
      timer = undefined
    }
  }
}
