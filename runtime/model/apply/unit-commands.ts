import type { MachineId, UnitName } from '../../ids.ts'
import { isAdmin, requireAdmin, requireUnitAgent } from './authorisation.ts'
import { applicationName, unitName, unitCount } from './fields.ts'
import { getApplication, getUnit } from './lookups.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'
import { subordinatePair } from './relation-records.ts'
import { createUnit, ensureSubordinate, removeUnitRecord, destroyUnit, placementOf } from './unit-records.ts'
import { putUnit } from './writes.ts'

/**
 * The unit commands: adding and removing units, their death and resolving.
 */

export const unitCommands: HandlerTable<'add-unit' | 'remove-unit' | 'unit-dead' | 'resolved' | 'clear-resolved'> = {
  'add-unit': (d, c) => {
    requireAdmin(c)
    const app = getApplication(d, c, applicationName(c, c.application))
    if (app.life !== 'alive') refuse(c, `application is ${app.life}`)
    if (app.subordinate) refuse(c, 'a subordinate application gets units by integrating with a principal')
    const numUnits = unitCount(c, c.numUnits, 1)
    const placement = placementOf(d, c, c.placement, numUnits)
    const created = { machines: [] as MachineId[], units: [] as UnitName[] }
    const units = placement.map(machine => createUnit(d, app.name, machine, null, created))
    for (const unit of units) {
      for (const id of d.application(app.name)!.relations) {
        const pair = subordinatePair(d, d.relation(id)!)
        if (pair !== undefined && pair[0] === app.name) ensureSubordinate(d, pair[1], unit, created)
      }
    }
    return { units: [...units, ...created.units], machines: created.machines }
  },

  'remove-unit': (d, c) => {
    const name = unitName(c, c.unit)
    // A unit agent may ask for its own removal (a subordinate whose principal relation went away).
    if (!isAdmin(c.proposer)) requireUnitAgent(d, c, name)
    getUnit(d, c, name)
    if (c.force !== undefined && typeof c.force !== 'boolean') refuse(c, 'force must be true or false')
    if (c.force === true) requireAdmin(c)
    destroyUnit(d, name, c.force === true)
    return {}
  },

  'unit-dead': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = d.unit(name)
    if (unit === undefined) return {}
    if (unit.life === 'alive') refuse(c, 'the unit is alive; remove it first')
    const remaining = unit.subordinates.filter(sub => d.unit(sub) !== undefined)
    if (remaining.length > 0) refuse(c, `subordinate units ${remaining.map(s => q(s)).join(', ')} remain`)
    removeUnitRecord(d, unit)
    return {}
  },

  resolved: (d, c) => {
    requireAdmin(c)
    const unit = getUnit(d, c, unitName(c, c.unit))
    if (c.mode !== 'retry-hooks' && c.mode !== 'no-hooks') refuse(c, `mode must be "retry-hooks" or "no-hooks", got ${q(c.mode)}`)
    if (unit.resolvedMode === c.mode) return {}
    putUnit(d, { ...unit, resolvedMode: c.mode })
    return {}
  },

  'clear-resolved': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    if (unit.resolvedMode === 'none') return {}
    putUnit(d, { ...unit, resolvedMode: 'none' })
    return {}
  }
}
