import { defaultModelName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { requireAdmin } from './authorisation.ts'
import { modelName } from './fields.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'

/**
 * The model registry's commands: adding, destroying and removing models.
 */

export const modelCommands: HandlerTable<'add-model' | 'destroy-model' | 'remove-model'> = {
  'add-model': (d, c) => {
    requireAdmin(c)
    const name = modelName(c, c.name)
    if (name === defaultModelName || d.models.get(name) !== undefined) refuse(c, `model ${q(name)} already exists`)
    if (d.models.size >= limits.modelsMax) refuse(c, `the controller group hosts ${limits.modelsMax} models besides "default", the maximum`)
    // No delta key: machine agents never watch the registry; controllers act on every applied entry.
    d.models.set(name, { name, life: 'alive', createdAt: d.revision })
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
