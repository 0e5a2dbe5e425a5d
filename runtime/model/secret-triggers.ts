import { limits } from '../limits.ts'
import type { SecretRecord, SecretRevisionRecord } from './secret-types.ts'
import type { ModelContext } from './model-types.ts'
import { forEachTableEntry } from './table.ts'

/**
 * When a secret's rotation and its revisions' expiries fall due (Juju's
 * internal/worker/secretrotate and secretexpire). Juju keeps the deadlines in its
 * database and each unit agent's worker arms a timer from them; here the deadlines are
 * the replicated model's data (`nextRotateTime`, each revision's `expireTime` and
 * `expireDue`), and one controller — the holder of the singular lease — arms its timer
 * from them and proposes `secret-rotate-due` / `secret-expire-due` when its clock has
 * passed a deadline by the drift margin. A controller that takes over after a failover
 * reads the same deadlines from the model, so none is lost; the model applies a due
 * command once per deadline, so none fires twice.
 *
 * Juju fires up to a minute early (it truncates deadlines to the minute); the margin here
 * makes a trigger never early while controllers' clocks are within half of it of true
 * time, and at most the margin late on a healthy group.
 */
export const secretTriggerMarginMs = limits.controllerLeaseClockDriftMarginMs

/** The rotation deadline still to fire, or null (never rotates, or fired and not yet rotated). */
export function rotateTrigger (secret: SecretRecord): number | null {
  if (secret.owner.kind === 'model' || secret.rotatePolicy === 'never' || secret.nextRotateTime === null) return null
  return secret.rotateDue === secret.nextRotateTime ? null : secret.nextRotateTime
}

/** The revision's next expiry trigger: its expiry, then every retry delay after the last trigger until it is removed. */
export function expireTrigger (secret: SecretRecord, revision: SecretRevisionRecord): number | null {
  if (secret.owner.kind === 'model' || revision.expireTime === null) return null
  return revision.expireDue === undefined ? revision.expireTime : revision.expireDue + limits.secretExpireRetryDelayMs
}

export type SecretTrigger =
  | { readonly type: 'secret-rotate-due', readonly id: string, readonly deadline: number }
  | { readonly type: 'secret-expire-due', readonly id: string, readonly revision: number, readonly deadline: number }

function eachTrigger (model: ModelContext, visit: (trigger: SecretTrigger) => void): void {
  if (model.secrets === undefined) return
  forEachTableEntry(model.secrets, (id, secret) => {
    const rotate = rotateTrigger(secret)
    if (rotate !== null) visit({ type: 'secret-rotate-due', id, deadline: rotate })
    for (const revision of secret.revisions) {
      const expire = expireTrigger(secret, revision)
      if (expire !== null) visit({ type: 'secret-expire-due', id, revision: revision.revision, deadline: expire })
    }
  })
}

/**
 * The triggers due on a controller whose clock reads `now`, earliest first, at most
 * limits.secretTriggersPerPassMax (the rest are due on the next pass).
 */
export function dueSecretTriggers (model: ModelContext, now: number): SecretTrigger[] {
  const due: SecretTrigger[] = []
  eachTrigger(model, trigger => { if (trigger.deadline + secretTriggerMarginMs <= now) due.push(trigger) })
  due.sort((a, b) => a.deadline - b.deadline || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return due.slice(0, limits.secretTriggersPerPassMax)
}

/** When the next trigger falls due on a controller's clock (deadline plus margin); undefined when none is pending. */
export function nextSecretTriggerAt (model: ModelContext): number | undefined {
  let next: number | undefined
  eachTrigger(model, trigger => {
    const at = trigger.deadline + secretTriggerMarginMs
    if (next === undefined || at < next) next = at
  })
  return next
}
