import { defaultModelName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { requireAdmin } from './authorisation.ts'
import { modelName } from './fields.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'
import type { ModelCommand } from '../model-types.ts'

/**
 * The model registry's commands: adding, destroying and removing models.
 */

export const modelCommands: HandlerTable<'add-model' | 'destroy-model' | 'remove-model' | 'set-model-uuid'> = {
  'add-model': (d, c) => {
    requireAdmin(c)
    const name = modelName(c, c.name)
    const uuid = modelUuid(c, c.uuid)
    if (name === defaultModelName || d.models.get(name) !== undefined) refuse(c, `model ${q(name)} already exists`)
    if (d.models.size >= limits.modelsMax) refuse(c, `the controller group hosts ${limits.modelsMax} models besides "default", the maximum`)
    // No delta key: machine agents never watch the registry; controllers act on every applied entry.
    d.models.set(name, { name, life: 'alive', createdAt: d.revision, uuid })
    return {}
  },

  'destroy-model': (d, c) => {
    requireAdmin(c)
    const name = modelName(c, c.name)
    if (name === defaultModelName) refuse(c, 'it is the controller group\'s own model, which holds the model registry; destroy-controller removes it')
    const model = d.models.get(name)
    if (model === undefined) refuse(c, `model ${q(name)} not found`)
    if (model.life === 'alive') d.models.set(name, { ...model, life: 'dying' })
    return {}
  },

  'set-model-uuid': (d, c) => {
    if (c.proposer.kind !== 'controller') refuse(c, 'only a controller sets the model\'s UUID')
    const uuid = modelUuid(c, c.uuid)
    if (d.uuid === uuid) return {}
    if (d.uuid !== '') refuse(c, `the model's UUID is already ${q(d.uuid)}`)
    d.uuid = uuid
    return {}
  },

  'remove-model': (d, c) => {
    requireAdmin(c)
    const name = modelName(c, c.name)
    const model = d.models.get(name)
    if (model === undefined) return {}
    if (model.life !== 'dying') refuse(c, 'the model is alive; destroy it first')
    d.models.delete(name)
    return {}
  }
}

const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** An RFC 4122 version 4 UUID in lower case, as Juju's model UUIDs are. */
function modelUuid (c: ModelCommand, value: unknown): string {
  if (typeof value !== 'string' || !uuidV4.test(value)) refuse(c, `uuid must be an RFC 4122 version 4 UUID in lower case, got ${typeof value === 'string' ? q(value.slice(0, 64)) : typeof value}`)
  return value
}
