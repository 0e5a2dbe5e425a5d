/**
 * Who may make which controller API call (DESIGN.md §10), as one table the API consults
 * before it looks at anything else in a request: a refused caller learns nothing about
 * the model, not even whether what it asked for exists. Callers are the entity their
 * authenticated peer id maps to (`IdentifyPeer`), or strangers.
 *
 * Commands proposed to the model (the propose protocol) are authorised twice elsewhere:
 * model-replica.ts checks that the caller speaks for the proposer, and the model
 * (runtime/model) checks what that proposer may do.
 */
import type { Entity } from '../../runtime/model/model-types.ts'

export const apiOps = [
  'machine-model', 'machine-watch', 'application-status', 'goal-state', 'charm-manifest', 'charm-chunk', 'put-charm-begin', 'put-charm-chunk', 'put-charm-commit', 'model-summary', 'register', 'model', 'model-watch',
  'controller-status', 'members', 'add-controller', 'remove-controller', 'controllers', 'debug-log', 'ship-logs', 'secret-content', 'reveal-secret'
] as const

export type ApiOp = typeof apiOps[number]

/** A caller as the policy sees it: the kind of its entity, or a stranger. */
export type CallerKind = Entity['kind'] | 'stranger'

export interface ApiRule {
  /** Who may call the op at all. */
  readonly allowed: readonly CallerKind[]
  /** Machine agents only for their own machine (the request's target). */
  readonly ownMachineOnly?: boolean
  /**
   * The target is a unit that must hold its application's leadership lease on the
   * answering controller's clock, and a machine agent must host it. That needs the model,
   * so the handler checks it after the table, and refuses with the same line: a caller
   * cannot tell a unit that does not exist from one that does not lead.
   */
  readonly leaderUnitOnly?: boolean
  /** What a refused caller is told it may not do (after `peer "…"`). */
  readonly refusal: (target: unknown) => string
}

const staff = ['user', 'controller'] as const
const known = ['user', 'controller', 'machine', 'unit'] as const

export const apiPolicy: Readonly<Record<ApiOp, ApiRule>> = {
  'machine-model': { allowed: ['controller', 'machine'], ownMachineOnly: true, refusal: target => `may not read machine ${JSON.stringify(typeof target === 'string' ? target : String(typeof target))}` },
  'machine-watch': { allowed: ['controller', 'machine'], ownMachineOnly: true, refusal: target => `may not watch machine ${JSON.stringify(typeof target === 'string' ? target : String(typeof target))}` },
  'application-status': { allowed: ['controller', 'machine'], leaderUnitOnly: true, refusal: target => `may not read the application status for unit ${JSON.stringify(typeof target === 'string' ? target : String(typeof target))}` },
  'goal-state': { allowed: ['controller', 'machine'], refusal: target => `may not read the goal state for unit ${JSON.stringify(typeof target === 'string' ? target : String(typeof target))}` },
  'charm-manifest': { allowed: known, refusal: () => 'is not known to this model' },
  'charm-chunk': { allowed: known, refusal: () => 'is not known to this model' },
  'put-charm-begin': { allowed: staff, refusal: () => 'may not add charms' },
  'put-charm-chunk': { allowed: staff, refusal: () => 'may not add charms' },
  'put-charm-commit': { allowed: staff, refusal: () => 'may not add charms' },
  'model-summary': { allowed: staff, refusal: () => 'may not read the model summary' },
  register: { allowed: ['user', 'controller', 'machine', 'unit', 'stranger'], refusal: () => 'may not register' },
  model: { allowed: staff, refusal: () => 'may not read the whole model' },
  'model-watch': { allowed: staff, refusal: () => 'may not watch the model' },
  'controller-status': { allowed: staff, refusal: () => 'may not read the controller status' },
  members: { allowed: staff, refusal: () => 'may not read the membership' },
  'add-controller': { allowed: ['user'], refusal: () => 'may not add controllers' },
  'remove-controller': { allowed: ['user'], refusal: () => 'may not remove controllers' },
  controllers: { allowed: known, refusal: () => 'is not known to this model' },
  'debug-log': { allowed: staff, refusal: () => 'may not read the model\'s logs' },
  'ship-logs': { allowed: ['controller', 'machine'], refusal: () => 'may not ship log records' },
  // A machine agent for a unit it hosts that owns or was granted the secret (api-secrets.ts checks the model).
  'secret-content': { allowed: ['controller', 'machine'], refusal: target => `may not read secrets for unit ${JSON.stringify(typeof target === 'string' ? target : String(typeof target))}` },
  'reveal-secret': { allowed: staff, refusal: () => 'may not reveal secrets' }
}

export function isApiOp (op: unknown): op is ApiOp {
  return typeof op === 'string' && (apiOps as readonly string[]).includes(op)
}

/**
 * Whether `caller` may make the call `op` about `target` (the machine, for machine-model),
 * as far as the table can tell: a `leaderUnitOnly` op also needs the model's say.
 */
export function apiPermits (op: ApiOp, caller: Entity | undefined, target?: unknown): boolean {
  const rule = apiPolicy[op]
  const kind: CallerKind = caller?.kind ?? 'stranger'
  if (!rule.allowed.includes(kind)) return false
  if (rule.ownMachineOnly === true && caller?.kind === 'machine') return typeof target === 'string' && caller.id === target
  return true
}

/** The one-line refusal: names the peer and what it may not do, and nothing of the model. */
export function apiRefusal (component: string, op: ApiOp, peer: string, target?: unknown): string {
  return `${component}: permission denied: peer ${JSON.stringify(peer)} ${apiPolicy[op].refusal(target)}`
}
