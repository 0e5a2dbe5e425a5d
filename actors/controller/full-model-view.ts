/**
 * The `model` API op's answer, as data (controller-api.ts): the whole model with each
 * machine agent's presence as the answering controller hears it, registration secrets
 * left out. Pure, so the simulator's status-truth check (sim/invariants/status-truth.ts)
 * reads status from exactly what `cantrip status` is sent.
 */
import type { MachineRecord, ModelContext } from '../../runtime/model/model-types.ts'
import { tableEntries, tableFrom, tableKeys } from '../../runtime/model/table.ts'
import type { MachinePresence } from './controller-api.ts'

export type PresenceView = Record<string, { status: 'alive' | 'lost', since: number | null, heardBy: string | null }>

export interface FullModelView {
  model: ModelContext
  presence: PresenceView
}

export function fullModelView (model: ModelContext, presence: MachinePresence | undefined): FullModelView {
  const heard: PresenceView = {}
  for (const id of tableKeys(model.machines)) {
    const p = presence?.(id)
    if (p !== undefined) heard[id] = { status: p.status, since: p.since ?? null, heardBy: p.heardBy ?? null }
  }
  // Registration secrets stay with the controllers, even from admins.
  const machines = tableFrom<MachineRecord>([...tableEntries(model.machines)].map(([id, m]) => [id, m.provisioning === null ? m : { ...m, provisioning: { token: m.provisioning.token, secret: '' } }]))
  return { model: { ...model, machines }, presence: heard }
}
