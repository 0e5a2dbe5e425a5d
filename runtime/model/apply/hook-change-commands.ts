import { limits } from '../../limits.ts'
import { isPlainRecord } from '../charm-summary.ts'
import { keys } from '../keys.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { ModelCommand, UnitRecord } from '../model-types.ts'
import { requireUnitAgent } from './authorisation.ts'
import { writableBagKey, writeBag } from './bags.ts'
import { charmStateChanges, nextCharmState } from './charm-state.ts'
import { unitName, text, optionalBoolean, stringRecord, clockReading } from './fields.ts'
import { getUnit, relationOfUnit, charmOf } from './lookups.ts'
import { endpointNamesOf, portRangeChanges, nextOpenedPorts } from './ports.ts'
import { refuse, type HandlerTable } from './refusal.ts'
import { commitSecretChanges } from './secret-commands.ts'

/**
 * A hook's changes committed as one command: databags, ports and charm state, all or nothing.
 */

/** A hook run's commit key: a UUID, a colon and a run number. */
const hookRunLengthMax = 128

interface BagWrite {
  readonly key: string
  readonly changes: Readonly<Record<string, string>>
  readonly field: string
}

/** The databags a hook wrote, each checked as `relation-settings` checks one. */
function relationSettingsWrites (d: ModelDraft, c: ModelCommand, unit: UnitRecord, value: unknown): BagWrite[] {
  if (value === undefined) return []
  // A unit bag and an application bag per relation at most.
  const entriesMax = 2 * limits.relationsPerUnitMax
  if (!Array.isArray(value) || value.length > entriesMax) refuse(c, `relation settings must be a list of at most ${entriesMax} entries`)
  const writes: BagWrite[] = []
  const seen = new Set<string>()
  for (const entry of value as unknown[]) {
    if (!isPlainRecord(entry)) refuse(c, 'each relation settings entry must be a map with "relationId" and "settings"')
    const relation = relationOfUnit(d, c, unit, entry.relationId)
    const application = optionalBoolean(c, 'application', entry.application) ?? false
    const field = `${application ? 'application' : 'unit'} settings of relation ${relation.id}`
    const changes = stringRecord(c, field, entry.settings)
    const key = writableBagKey(d, c, unit, relation, application)
    if (seen.has(key)) refuse(c, `${field} are given twice`)
    seen.add(key)
    writes.push({ key, changes, field })
  }
  return writes
}

export const hookChangeCommands: HandlerTable<'commit-hook-changes'> = {
  'commit-hook-changes': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    const hookRun = c.hookRun === undefined ? undefined : text(c, 'hookRun', c.hookRun, hookRunLengthMax)
    // This run's commit was applied before (the hook ran again after a crash): nothing
    // more to apply, whatever the second run wrote, and nothing to refuse.
    if (hookRun !== undefined && unit.lastHookRun === hookRun) return {}
    // Every part is checked before anything is written. The draft makes it all or nothing
    // regardless: the checks that need the merged result (quotas, conflicts) refuse the
    // whole command, and a refused command's draft is dropped.
    const bags = relationSettingsWrites(d, c, unit, c.relationSettings)
    const endpoints = endpointNamesOf(charmOf(d, d.application(unit.application)!))
    const opens = portRangeChanges(c, unit, 'open', c.openPorts, new Set(endpoints))
    const closes = portRangeChanges(c, unit, 'close', c.closePorts, new Set(endpoints))
    const stateChanges = charmStateChanges(c, c.charmState)
    const openedPorts = nextOpenedPorts(d, c, unit, opens, closes, endpoints)
    const charmState = stateChanges === undefined ? undefined : nextCharmState(c, unit.charmState, stateChanges)

    for (const bag of bags) writeBag(d, c, bag.key, bag.changes, bag.field)
    commitSecretChanges(d, c, unit, c.secrets, c.secrets?.now === undefined ? 0 : clockReading(c, c.secrets.now))
    if (openedPorts === undefined && charmState === undefined && hookRun === undefined) return {}
    // The unit's own key is not touched: ports and charm state are watched apart from it.
    d.units.set(name, {
      ...unit, openedPorts: openedPorts ?? unit.openedPorts, charmState: charmState ?? unit.charmState, ...(hookRun === undefined ? {} : { lastHookRun: hookRun })
    })
    if (openedPorts !== undefined) d.touch(keys.unitPorts(name))
    if (charmState !== undefined) d.touch(keys.unitState(name))
    return {}
  }
}
