import type { AgentNetwork } from '../../agent-network.ts'
import { assert } from '../../assert.ts'
import type { ApplicationName, MachineId, UnitName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { listAppend } from '../chunked-list.ts'
import { keys } from '../keys.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { ActionRecord, ApplicationRecord, MachineRecord, ModelCommand, UnitRecord } from '../model-types.ts'
import { tableGet } from '../table.ts'
import { machineId } from './fields.ts'
import { getMachine, charmOf } from './lookups.ts'
import { Refusal, q, refuse } from './refusal.ts'
import { unitStorage } from './storage-records.ts'
import { leaveScope, removeRelation, maybeRemoveRelation, dyingRelation } from './relation-records.ts'
import { putApplication, putUnit, putMachine, putRelation, removeKey } from './writes.ts'

/**
 * Machines, units and applications coming and going: shared by the commands that add, remove and finish them.
 */

export function newMachine (d: ModelDraft, constraints: Readonly<Record<string, string>>, placement: string | null = null, privateKey?: string, network: AgentNetwork = {}): MachineRecord {
  const id = String(d.counters.machine)
  d.counters = { ...d.counters, machine: d.counters.machine + 1 }
  const machine: MachineRecord = {
    id,
    life: 'alive',
    constraints,
    instanceId: null,
    addresses: [],
    agent: { status: 'pending', message: '', since: null, data: null },
    instance: { status: 'pending', message: '', since: null, data: null },
    units: [],
    clean: true,
    placement,
    ...(privateKey === undefined ? {} : { privateKey }),
    ...(network.listen === undefined ? {} : { listen: network.listen }),
    ...(network.advertise === undefined ? {} : { advertise: network.advertise }),
    provisioning: null,
    agentPeer: null,
    statusHistory: [
      { type: 'juju-machine', status: 'pending', message: '', since: null },
      { type: 'machine', status: 'pending', message: '', since: null }
    ]
  }
  putMachine(d, machine)
  d.touch(keys.machineStatus(id))
  return machine
}

/**
 * The first alive machine that never hosted a unit and has no placement of its own, if any.
 * A machine only ever leaves that state (a unit makes it unclean for good, life only moves
 * on, placement is fixed at creation) and new machines take higher ids, so the scan starts
 * where the last one stopped (counters.cleanMachineFrom) instead of at machine 0: adding
 * thousands of units to a model of thousands of machines was quadratic.
 */
function cleanEmptyMachine (d: ModelDraft): MachineRecord | undefined {
  let n = d.counters.cleanMachineFrom ?? 0
  let found: MachineRecord | undefined
  for (; n < d.counters.machine; n++) {
    const machine = d.machine(String(n))
    if (machine !== undefined && machine.life === 'alive' && machine.clean && machine.units.length === 0 && machine.placement === null) {
      found = machine
      break
    }
  }
  if (n !== (d.counters.cleanMachineFrom ?? 0)) d.counters = { ...d.counters, cleanMachineFrom: n }
  return found
}

/** Adds one unit of `appName` on `machineId` (a new machine when null), beside `principal` if a subordinate. */
export function createUnit (d: ModelDraft, appName: ApplicationName, machineId: MachineId | null, principal: UnitName | null, created: { machines: MachineId[] }): UnitName {
  const app = d.application(appName)!
  const name = `${app.name}/${app.nextUnitNumber}`
  assert(d.unit(name) === undefined, `model: unit "${name}" exists already`)
  // Placement first; else a clean, empty machine (Juju's AssignCleanEmpty); else a new one.
  let machine = machineId === null ? cleanEmptyMachine(d) : d.machine(machineId)
  if (machine === undefined) {
    machine = newMachine(d, app.constraints)
    created.machines.push(machine.id)
  }
  putMachine(d, { ...machine, units: [...machine.units, name], clean: false })

  const storage = unitStorage(d, app, charmOf(d, app))
  if (Object.keys(storage).length > limits.storagePerUnitMax) throw new Refusal(`controller: cannot add unit to "${app.name}": more than ${limits.storagePerUnitMax} storage instances`)

  const unit: UnitRecord = {
    name,
    application: app.name,
    machine: machine.id,
    life: 'alive',
    resolvedMode: 'none',
    principal,
    subordinates: [],
    storage,
    storageRequired: Object.keys(storage),
    actions: [],
    commands: [],
    workload: { status: 'waiting', message: 'waiting for machine', since: null, data: null },
    agent: { status: 'allocating', message: '', since: null, data: null },
    openedPorts: [],
    charmState: {},
    statusHistory: [
      { type: 'workload', status: 'waiting', message: 'waiting for machine', since: null },
      { type: 'juju-unit', status: 'allocating', message: '', since: null }
    ]
  }
  putUnit(d, unit)
  d.touch(keys.unitStatus(name))
  putApplication(d, { ...app, nextUnitNumber: app.nextUnitNumber + 1, units: [...app.units, name], scale: app.scale + 1 })
  if (principal !== null) {
    const principalUnit = d.unit(principal)!
    putUnit(d, { ...principalUnit, subordinates: [...principalUnit.subordinates, name] })
  }
  return name
}

/** A subordinate of `subApp` beside `principal`, unless it has one already. */
export function ensureSubordinate (d: ModelDraft, subApp: ApplicationName, principal: UnitName, created: { machines: MachineId[], units: UnitName[] }): void {
  const unit = d.unit(principal)!
  if (unit.life !== 'alive') return
  if (unit.subordinates.some(sub => d.unit(sub)?.application === subApp)) return
  created.units.push(createUnit(d, subApp, unit.machine, principal, created))
}

/** A unit leaves the model: its relation scopes and databags, its place on its principal and machine, its lease, actions and keys. */
export function removeUnitRecord (d: ModelDraft, unit: UnitRecord): void {
  const name = unit.name
  const app = d.application(unit.application)!
  for (const id of app.relations) {
    const relation = d.relation(id)
    const member = relation === undefined ? undefined : tableGet(relation.members, name)
    if (relation === undefined || member?.inScope !== true) continue
    // The unit leaves scope and the model; its databag stays readable as a departed
    // member's (juju-semantics §2.4) until the relation goes or newer departures push it out.
    const left = leaveScope(d, relation, name)
    putRelation(d, left)
    maybeRemoveRelation(d, left)
  }
  if (unit.principal !== null) {
    const principal = d.unit(unit.principal)
    if (principal !== undefined) putUnit(d, { ...principal, subordinates: principal.subordinates.filter(sub => sub !== name) })
  }
  leaveMachine(d, unit)
  if (d.lease(app.name)?.holder === name) {
    // The holder's agent has terminated: nobody believes this lease any more.
    removeKey(d, keys.leadership(app.name))
    d.leases.delete(app.name)
  }
  for (const id of unit.actions) {
    const action = d.action(id)
    if (action !== undefined) finishAction(d, action, 'cancelled', {}, 'unit removed')
  }
  removeKey(d, keys.unit(name))
  removeKey(d, keys.unitStatus(name))
  // Only keys a watcher was ever told of: a unit that never opened a port has no ports key.
  for (const key of [keys.unitPorts(name), keys.unitState(name)]) if (d.known(key)) removeKey(d, key)
  d.units.delete(name)
  const remainingApp = { ...d.application(app.name)!, units: app.units.filter(u => u !== name) }
  d.applications.set(app.name, remainingApp)
  if (remainingApp.life !== 'alive' && remainingApp.units.length === 0) removeApplication(d, remainingApp)
}

/**
 * The unit leaves its machine; when it was the machine's last principal the machine goes
 * dying with it, as Juju's destroyHostOps (state/unit.go) does when a unit is removed, so
 * `remove-unit` and `remove-application` take the machines they empty (and the machiner
 * and provisioner then stop its agent and instance, as after `remove-machine`). A machine
 * that hosts a controller keeps its life (Juju: JobManageModel or a vote), as does one
 * that still hosts another principal. Juju's third exception, a machine with containers,
 * has no counterpart: cantrip's machines hold no containers.
 */
function leaveMachine (d: ModelDraft, unit: UnitRecord): void {
  const machine = d.machine(unit.machine)
  if (machine === undefined) return
  const units = machine.units.filter(u => u !== unit.name)
  const emptied = unit.principal === null && machine.life === 'alive' && machine.controller !== true &&
    !units.some(u => d.unit(u)?.principal === null)
  putMachine(d, { ...machine, units, ...(emptied ? { life: 'dying' as const } : {}) })
}

/**
 * `remove-unit` semantics: dying, and a dying principal takes its subordinates with it.
 * A unit whose agent never started (still `allocating`) has run no hook and holds no
 * scope, so nobody would ever finish its removal: as Juju does, it leaves the model at
 * once (after its subordinates, which it takes with it first). `force` (Juju's
 * `remove-unit --force`, for a unit whose agent is gone) does that for any unit, alive or
 * already dying: nothing waits for its agent's stop and remove hooks.
 */
export function destroyUnit (d: ModelDraft, name: UnitName, force = false): void {
  const unit = d.unit(name)
  if (unit === undefined || (unit.life !== 'alive' && !force)) return
  if (unit.life === 'alive') {
    putUnit(d, { ...unit, life: 'dying' })
    const app = d.application(unit.application)!
    putApplication(d, { ...app, scale: app.scale - 1 })
  }
  for (const sub of unit.subordinates) destroyUnit(d, sub, force)
  const dying = d.unit(name)!
  if (force) {
    removeUnitRecord(d, dying)
    return
  }
  if (dying.agent.status !== 'allocating' || d.lease(dying.application)?.holder === name) return
  if (dying.subordinates.some(sub => d.unit(sub) !== undefined)) return
  const inScope = d.application(dying.application)!.relations.some(id => {
    const relation = d.relation(id)
    return relation !== undefined && tableGet(relation.members, name)?.inScope === true
  })
  if (!inScope) removeUnitRecord(d, dying)
}

/** The application leaves the model (its last unit is gone, or it never had one). */
export function removeApplication (d: ModelDraft, app: ApplicationRecord): void {
  for (const id of app.relations) {
    const relation = d.relation(id)
    if (relation === undefined) continue
    if (relation.peer) {
      removeRelation(d, relation)
    } else if (relation.life === 'alive') {
      dyingRelation(d, relation)
    } else {
      maybeRemoveRelation(d, relation)
    }
  }
  removeKey(d, keys.application(app.name))
  removeKey(d, keys.leaderSettings(app.name))
  if (d.lease(app.name) !== undefined) {
    removeKey(d, keys.leadership(app.name))
    d.leases.delete(app.name)
  }
  d.applications.delete(app.name)
}

export function finishAction (d: ModelDraft, action: ActionRecord, status: ActionRecord['status'], results: ActionRecord['results'], message: string, completedAtMs?: number): void {
  d.actions.set(action.id, { ...action, status, results, message, completedAt: d.revision, ...(completedAtMs === undefined ? {} : { completedAtMs }) })
  d.touch(keys.action(action.id))
  const { list, dropped } = listAppend(d.finishedActions, [action.id], limits.modelFinishedActionsMax)
  for (const old of dropped) {
    removeKey(d, keys.action(old))
    d.actions.delete(old)
  }
  d.finishedActions = list
}

export function placementOf (d: ModelDraft, c: ModelCommand, value: unknown, count: number): Array<MachineId | null> {
  const placement: Array<MachineId | null> = Array.from({ length: count }, () => null)
  if (value === undefined) return placement
  if (!Array.isArray(value) || value.length > count) refuse(c, `placement must list at most ${count} machines`)
  value.forEach((entry, i) => {
    const id = machineId(c, entry)
    const machine = getMachine(d, c, id)
    if (machine.life !== 'alive') refuse(c, `machine ${q(id)} is ${machine.life}`)
    placement[i] = id
  })
  return placement
}
