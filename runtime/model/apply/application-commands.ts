import type { MachineId } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { configHashOf, trustHashOf, canonicalFlat } from '../canonical.ts'
import { charmEndpoints, configValueError, effectiveConfig, isPlainRecord } from '../charm-summary.ts'
import { keys } from '../keys.ts'
import type { ApplicationRecord, CharmRecord, ConfigValue, ModelCommand } from '../model-types.ts'
import { requireAdmin } from './authorisation.ts'
import { applicationName, charmUrl, optionalBoolean, unitCount, constraintsOf, sortedRecord } from './fields.ts'
import { getApplication, getCharm, charmOf, ownEndpoint } from './lookups.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'
import { createPeerRelations, dyingRelation } from './relation-records.ts'
import { deployResources } from './resource-commands.ts'
import { storageDirectives } from './storage-records.ts'
import { createUnit, destroyUnit, removeApplication, placementOf } from './unit-records.ts'
import { putApplication } from './writes.ts'

/**
 * The application commands: deploy, configure, refresh, expose and remove.
 */

/** Checks config changes against the charm's options; null (when allowed) unsets. */
function configChanges (c: ModelCommand, charm: CharmRecord, value: unknown, allowNull: boolean): Record<string, ConfigValue | null> {
  if (!isPlainRecord(value)) refuse(c, 'config must be a map of option values')
  const out: Record<string, ConfigValue | null> = {}
  let bytes = 0
  for (const [option, entry] of Object.entries(value)) {
    const spec = Object.hasOwn(charm.metadata.config, option) ? charm.metadata.config[option] : undefined
    if (spec === undefined) refuse(c, `charm ${q(charm.url)} has no config option ${q(option)}`)
    if (entry === null && allowNull) { out[option] = null; continue }
    const problem = configValueError(spec.type, entry)
    if (problem !== undefined) refuse(c, `option ${q(option)} ${problem}`)
    out[option] = entry as ConfigValue
    bytes += option.length + String(entry).length
  }
  if (bytes > limits.modelSettingsBytesMax) refuse(c, `config exceeds ${limits.modelSettingsBytesMax} bytes`)
  return out
}

function mergedConfig (current: Readonly<Record<string, ConfigValue>>, changes: Readonly<Record<string, ConfigValue | null>>): Record<string, ConfigValue> {
  const next: Record<string, ConfigValue> = { ...current }
  for (const [option, value] of Object.entries(changes)) {
    if (value === null) delete next[option]
    else next[option] = value
  }
  return sortedRecord(next)
}

export const applicationCommands: HandlerTable<'deploy' | 'remove-application' | 'set-config' | 'refresh' | 'expose' | 'unexpose'> = {
  deploy: (d, c) => {
    requireAdmin(c)
    const name = applicationName(c, c.application)
    if (d.application(name) !== undefined) refuse(c, 'application already exists')
    const charm = getCharm(d, c, charmUrl(c, c.charm))
    const numUnits = unitCount(c, c.numUnits, 0)
    if (charm.metadata.subordinate && numUnits > 0) refuse(c, 'a subordinate application is deployed without units; integrate it with a principal')
    const config = configChanges(c, charm, c.config, false) as Record<string, ConfigValue>
    const constraints = constraintsOf(c, c.constraints)
    const trust = optionalBoolean(c, 'trust', c.trust) ?? false
    const placement = placementOf(d, c, c.placement, numUnits)
    const storage = storageDirectives(c, charm, c.storage)
    const resources = deployResources(c, charm, c.resources)
    if (Object.keys(charm.metadata.peers).length > limits.relationsPerUnitMax) refuse(c, `charm ${q(charm.url)} has more than ${limits.relationsPerUnitMax} peer endpoints`)
    const userConfig = sortedRecord(config)
    const app: ApplicationRecord = {
      name,
      life: 'alive',
      charm: charm.url,
      charmModifiedVersion: 0,
      forceUpgrade: false,
      subordinate: charm.metadata.subordinate,
      config: userConfig,
      configHash: configHashOf(effectiveConfig(charm.metadata, userConfig)),
      trust,
      trustHash: trustHashOf(trust),
      constraints,
      ...(Object.keys(storage).length === 0 ? {} : { storage }),
      ...(Object.keys(resources).length === 0 ? {} : { resources }),
      exposed: false,
      scale: 0,
      nextUnitNumber: 0,
      units: [],
      relations: [],
      leaderSettings: {},
      leaderSettingsVersion: 1,
      workloadVersion: '',
      status: null,
      statusHistory: []
    }
    putApplication(d, app)
    d.touch(keys.leaderSettings(name))
    createPeerRelations(d, app, charm)
    const created = { machines: [] as MachineId[] }
    const units = placement.map(machine => createUnit(d, name, machine, null, created))
    return { units, machines: created.machines }
  },

  'remove-application': (d, c) => {
    requireAdmin(c)
    const app = getApplication(d, c, applicationName(c, c.application))
    const force = optionalBoolean(c, 'force', c.force) === true
    if (app.life !== 'alive' && !force) return {}
    if (app.life === 'alive') putApplication(d, { ...app, life: 'dying' })
    for (const id of app.relations) {
      const relation = d.relation(id)
      if (relation !== undefined && !relation.peer) dyingRelation(d, relation)
    }
    for (const unit of app.units) destroyUnit(d, unit, force)
    // Its last unit may have left at once (never started), taking the application with it.
    const dying = d.application(app.name)
    if (dying !== undefined && dying.units.length === 0) removeApplication(d, dying)
    return {}
  },

  'set-config': (d, c) => {
    requireAdmin(c)
    const app = getApplication(d, c, applicationName(c, c.application))
    const charm = charmOf(d, app)
    const changes = configChanges(c, charm, c.config, true)
    const trust = optionalBoolean(c, 'trust', c.trust) ?? app.trust
    const config = mergedConfig(app.config, changes)
    if (canonicalFlat(config) === canonicalFlat(app.config) && trust === app.trust) return {}
    putApplication(d, {
      ...app,
      config,
      configHash: configHashOf(effectiveConfig(charm.metadata, config)),
      trust,
      trustHash: trustHashOf(trust)
    })
    return {}
  },

  refresh: (d, c) => {
    requireAdmin(c)
    const app = getApplication(d, c, applicationName(c, c.application))
    if (app.life !== 'alive') refuse(c, `application is ${app.life}`)
    const charm = getCharm(d, c, charmUrl(c, c.charm))
    const force = optionalBoolean(c, 'force', c.force) ?? false
    if (charm.url === app.charm) refuse(c, `already running charm ${q(charm.url)}`)
    const old = charmOf(d, app).metadata
    if (charm.metadata.name !== old.name) refuse(c, `charm ${q(charm.url)} is ${q(charm.metadata.name)}, not ${q(old.name)}`)
    if (charm.metadata.subordinate !== old.subordinate) refuse(c, 'a charm cannot change between subordinate and principal')
    const available = new Set(charmEndpoints(charm.metadata).map(ep => `${ep.role}:${ep.name}`))
    for (const id of app.relations) {
      const ep = ownEndpoint(d.relation(id)!, app.name)!
      if (!available.has(`${ep.role}:${ep.name}`)) refuse(c, `charm ${q(charm.url)} has no ${ep.role} endpoint ${q(ep.name)} used by relation ${id}`)
    }
    // Values the new charm no longer accepts are dropped, as the new charm's defaults apply.
    const config: Record<string, ConfigValue> = {}
    for (const [option, value] of Object.entries(app.config)) {
      const spec = Object.hasOwn(charm.metadata.config, option) ? charm.metadata.config[option] : undefined
      if (spec !== undefined && configValueError(spec.type, value) === undefined) config[option] = value
    }
    const refreshed: ApplicationRecord = {
      ...app,
      charm: charm.url,
      charmModifiedVersion: app.charmModifiedVersion + 1,
      forceUpgrade: force,
      config,
      configHash: configHashOf(effectiveConfig(charm.metadata, config))
    }
    putApplication(d, refreshed)
    createPeerRelations(d, d.application(app.name)!, charm)
    return {}
  },

  expose: (d, c) => {
    requireAdmin(c)
    const app = getApplication(d, c, applicationName(c, c.application))
    if (!app.exposed) putApplication(d, { ...app, exposed: true })
    return {}
  },

  unexpose: (d, c) => {
    requireAdmin(c)
    const app = getApplication(d, c, applicationName(c, c.application))
    if (app.exposed) putApplication(d, { ...app, exposed: false })
    return {}
  }
}
