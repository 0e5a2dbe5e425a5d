import type { MachineId, UnitName } from '../../ids.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { Entity, ModelCommand } from '../model-types.ts'
import { entityTag } from './describe-command.ts'
import { refuse } from './refusal.ts'

/**
 * Who may make which command (DESIGN.md §10): each check refuses with `permission denied`.
 */

export function isAdmin (entity: Entity): boolean {
  return entity.kind === 'user' || entity.kind === 'controller'
}

function deny (c: ModelCommand): never {
  refuse(c, `permission denied for ${entityTag(c.proposer)}`)
}

export function requireAdmin (c: ModelCommand): void {
  if (!isAdmin(c.proposer)) deny(c)
}

/** A unit agent's own request: the unit itself, the machine agent hosting it, or a controller worker. */
export function requireUnitAgent (d: ModelDraft, c: ModelCommand, unit: UnitName): void {
  const p = c.proposer
  if (p.kind === 'controller') return
  if (p.kind === 'unit' && p.name === unit) return
  if (p.kind === 'machine' && d.unit(unit)?.machine === p.id) return
  deny(c)
}

/** The controller itself: no user, agent or other controller may claim a lease in its name. */
export function requireController (c: ModelCommand, controller: string): void {
  const p = c.proposer
  if (p.kind === 'controller' && p.id === controller) return
  deny(c)
}

/** Any controller (the provisioner runs on whichever leads). */
export function requireAnyController (c: ModelCommand): void {
  if (c.proposer.kind !== 'controller') deny(c)
}

export function requireMachineAgent (c: ModelCommand, machine: MachineId): void {
  const p = c.proposer
  if (p.kind === 'controller') return
  if (p.kind === 'machine' && p.id === machine) return
  deny(c)
}
