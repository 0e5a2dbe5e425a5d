/**
 * The scopes `cantrip wait-for` queries, built from the model as `cantrip status` reads it
 * (the same displayed statuses: a hook error shows workload `error`, a lost machine's
 * agent `down`). Names follow Juju's cmd/juju/waitfor (application.go, unit.go,
 * machine.go, model.go GetIdentValue): only those cantrip has data for are offered, and
 * an unknown name lists these. A removed entity has no scope.
 */
import type { FullModel } from './connection.ts'
import { naturalCompare, statusDocument, type StatusDocument } from './status-document.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { MachineRecord, UnitRecord } from '../../runtime/model/model-types.ts'
import { displayedMachineAgent, displayedUnit } from '../../runtime/model/status-display.ts'
import { tableValues } from '../../runtime/model/table.ts'
import { queryList, queryScope, type QueryScope } from '../../runtime/query/query-scope.ts'

export const waitForKinds = ['application', 'unit', 'machine', 'model'] as const
export type WaitForKind = typeof waitForKinds[number]

/** What one model read shows of the target: its scope and life, or nothing when it is not (or no longer) there. */
export interface WaitForTarget {
  readonly scope: QueryScope
  readonly life: string
  /** What Juju's progress line says of it: the application's derived status. */
  readonly status?: string
}

type Entry = QueryScope['entry']

export function waitForTarget (kind: WaitForKind, full: FullModel, name: string): WaitForTarget | undefined {
  const scopes = new ModelScopes(full)
  switch (kind) {
    case 'application': return scopes.applicationTarget(name)
    case 'unit': {
      const unit = scopes.reader.unit(name)
      return unit === undefined ? undefined : { scope: scopes.unit(unit), life: unit.life }
    }
    case 'machine': {
      const machine = scopes.reader.machine(name)
      return machine === undefined ? undefined : { scope: scopes.machine(machine), life: machine.life }
    }
    case 'model': return { scope: scopes.model(), life: 'alive' }
  }
}

class ModelScopes {
  readonly reader
  private docMemo: StatusDocument | undefined

  constructor (private readonly full: FullModel) {
    this.reader = readerOf(full.model)
  }

  /** The status document, built only when an application's or the model's status is read (a unit or machine wait never needs it). */
  private get doc (): StatusDocument {
    return this.docMemo ??= statusDocument(this.full, '', 0)
  }

  applicationTarget (name: string): WaitForTarget | undefined {
    const app = this.reader.application(name)
    if (app === undefined) return undefined
    const scope = this.application(name)
    return { scope, life: app.life, status: String(scope.values['status']) }
  }

  model (): QueryScope {
    const machines = (tableValues(this.full.model.machines) as MachineRecord[]).sort((a, b) => naturalCompare(a.id, b.id))
    const units = (tableValues(this.full.model.units) as UnitRecord[]).sort((a, b) => naturalCompare(a.name, b.name))
    const name = this.full.modelName ?? 'default'
    return queryScope(`model "${name}"`, {
      name,
      // A model being destroyed cannot be connected to (cli-context.ts checkModel), so one read is alive.
      life: 'alive',
      'is-controller': false,
      status: this.doc.model['model-status'].current,
      applications: queryList(Object.keys(this.doc.applications).sort(naturalCompare).map(app => this.application(app, { collection: 'applications', key: app }))),
      machines: queryList(machines.map(m => this.machine(m, { collection: 'machines', key: m.id }))),
      units: queryList(units.map(u => this.unit(u, { collection: 'units', key: u.name })))
    })
  }

  application (name: string, entry?: Entry): QueryScope {
    const app = this.reader.application(name)!
    const units = app.units.map(unit => this.reader.unit(unit)).filter((u): u is UnitRecord => u !== undefined).sort((a, b) => naturalCompare(a.name, b.name))
    const machineIds = [...new Set(units.map(u => u.machine))].sort(naturalCompare)
    const machines = machineIds.map(id => this.reader.machine(id)).filter((m): m is MachineRecord => m !== undefined)
    return queryScope(`application "${name}"`, {
      name,
      life: app.life,
      exposed: app.exposed,
      'charm-url': app.charm,
      subordinate: app.subordinate,
      status: this.doc.applications[name]?.['application-status'].current ?? 'unknown',
      'workload-version': app.workloadVersion,
      units: queryList(units.map(u => this.unit(u, { collection: 'units', key: u.name }))),
      machines: queryList(machines.map(m => this.machine(m, { collection: 'machines', key: m.id })))
    }, entry)
  }

  unit (unit: UnitRecord, entry?: Entry): QueryScope {
    const machine = this.reader.machine(unit.machine)
    const shown = displayedUnit(unit, this.lost(unit.machine))
    const address = machine?.addresses[0] ?? ''
    return queryScope(`unit "${unit.name}"`, {
      name: unit.name,
      application: unit.application,
      base: machine?.base ?? '',
      'charm-url': this.reader.application(unit.application)?.charm ?? '',
      life: unit.life,
      'public-address': address,
      'private-address': address,
      'machine-id': unit.machine,
      principal: unit.principal ?? '',
      subordinate: unit.principal !== null,
      'workload-status': shown.workload.status,
      'workload-message': shown.workload.message,
      'agent-status': shown.agent.status,
      machines: queryList(machine === undefined ? [] : [this.machine(machine, { collection: 'machines', key: machine.id })])
    }, entry)
  }

  machine (machine: MachineRecord, entry?: Entry): QueryScope {
    const agent = displayedMachineAgent(machine, this.lost(machine.id)).status
    return queryScope(`machine "${machine.id}"`, {
      id: machine.id,
      life: machine.life,
      // Juju's machine scope answers `status` with the agent's status, as `agent-status`.
      status: agent,
      'agent-status': agent,
      'instance-status': machine.instance.status,
      base: machine.base ?? '',
      // cantrip has no containers: every machine is a host.
      'container-type': ''
    }, entry)
  }

  private lost (machine: string): boolean {
    return this.full.presence[machine]?.status === 'lost'
  }
}
