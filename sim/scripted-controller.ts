import { assert } from '../runtime/assert.ts'
import { applicationOf, naturalCompare, type ApplicationName, type MachineId, type RelationId, type UnitName } from '../runtime/ids.ts'
import type { Life, RemoteAction, RemoteCommand, RemoteRelation, RemoteState, RemoteStorage, ResolvedMode } from '../actors/unit/remote-state.ts'

/**
 * A stand-in for the controller group until it exists: the desired state of one model
 * held in memory, changed by script (deploy, relate, config, leadership, removal), and
 * projected into the `RemoteState` each unit's watcher would see. It applies the unit
 * actors' requests (enter/leave scope, clear resolved, destroy, terminated) the way the
 * controllers will. No time, no I/O: the world that owns it decides when things happen.
 */

export interface ApplicationSpec {
  name: ApplicationName
  charm?: string
  /** Peer relation endpoints, created with the application. */
  peers?: string[]
  /** A subordinate: its units follow principals through container-scoped relations. */
  subordinate?: boolean
  /** Storage each unit is deployed with: name → kind. */
  storage?: Record<string, 'filesystem' | 'block'>
}

interface ApplicationRecord {
  spec: ApplicationSpec
  charmUrl: string
  modifiedVersion: number
  forceUpgrade: boolean
  configHash: string
  trustHash: string
  leader: UnitName | undefined
  leaderSettingsVersion: number
  nextUnitNumber: number
  life: Life
}

interface UnitRecord {
  name: UnitName
  machine: MachineId
  life: Life
  resolvedMode: ResolvedMode
  principal: UnitName | undefined
  addressesHash: string
  storage: Record<string, RemoteStorage>
  storageRequired: string[]
  actions: RemoteAction[]
  commands: RemoteCommand[]
}

interface EndpointRef { application: ApplicationName, endpoint: string }

interface RelationRecord {
  id: RelationId
  endpoints: EndpointRef[]
  life: Life
  suspended: boolean
  peer: boolean
  containerScoped: boolean
  /** Units in scope → their settings version (entering scope writes the address keys: version 1). */
  scope: Map<UnitName, number>
  /** Application databag versions; 0 = never written. */
  applicationVersion: Map<ApplicationName, number>
}

export type ControllerListener = (units: UnitName[]) => void

export class ScriptedController {
  readonly #applications = new Map<ApplicationName, ApplicationRecord>()
  readonly #units = new Map<UnitName, UnitRecord>()
  readonly #relations = new Map<RelationId, RelationRecord>()
  #nextRelationId = 0
  #nextMachine = 0
  #nextActionId = 1
  readonly #listeners: ControllerListener[] = []
  /** Units removed from the model after they terminated. */
  readonly removedUnits: UnitName[] = []

  /** Called with the units whose remote state may have changed. */
  onChange (listener: ControllerListener): void {
    this.#listeners.push(listener)
  }

  #changed (units: Iterable<UnitName>): void {
    const list = [...new Set(units)].filter(unit => this.#units.has(unit)).sort(naturalCompare)
    if (list.length === 0) return
    for (const listener of this.#listeners) listener(list)
  }

  #app (name: ApplicationName): ApplicationRecord {
    const app = this.#applications.get(name)
    assert(app !== undefined, `controller: no application "${name}"`)
    return app
  }

  #unit (name: UnitName): UnitRecord {
    const unit = this.#units.get(name)
    assert(unit !== undefined, `controller: no unit "${name}"`)
    return unit
  }

  #relation (id: RelationId): RelationRecord {
    const relation = this.#relations.get(id)
    assert(relation !== undefined, `controller: no relation ${id}`)
    return relation
  }

  #unitsOf (application: ApplicationName): UnitName[] {
    return [...this.#units.keys()].filter(unit => applicationOf(unit) === application).sort(naturalCompare)
  }

  units (): UnitName[] {
    return [...this.#units.keys()].sort(naturalCompare)
  }

  unitLife (unit: UnitName): Life | undefined {
    return this.#units.get(unit)?.life
  }

  machineOf (unit: UnitName): MachineId {
    return this.#unit(unit).machine
  }

  leaderOf (application: ApplicationName): UnitName | undefined {
    return this.#app(application).leader
  }

  relationIds (): RelationId[] {
    return [...this.#relations.keys()]
  }

  /** Deploy an application with `count` units, each on a new machine (or the given ones). */
  deploy (spec: ApplicationSpec, count: number, machines?: MachineId[]): UnitName[] {
    assert(!this.#applications.has(spec.name), `controller: application "${spec.name}" exists`)
    this.#applications.set(spec.name, {
      spec,
      charmUrl: spec.charm ?? `local:${spec.name}-0`,
      modifiedVersion: 0,
      forceUpgrade: false,
      configHash: 'config-0',
      trustHash: '',
      leader: undefined,
      leaderSettingsVersion: 1,
      nextUnitNumber: 0,
      life: 'alive'
    })
    for (const endpoint of spec.peers ?? []) {
      this.#addRelation([{ application: spec.name, endpoint }], true, false)
    }
    const added: UnitName[] = []
    for (let i = 0; i < count; i++) added.push(this.addUnit(spec.name, machines?.[i]))
    return added
  }

  addUnit (application: ApplicationName, machine?: MachineId, principal?: UnitName): UnitName {
    const app = this.#app(application)
    const name = `${application}/${app.nextUnitNumber++}`
    const storage: Record<string, RemoteStorage> = {}
    for (const [storageName, kind] of Object.entries(app.spec.storage ?? {})) {
      const id = `${storageName}/${Object.keys(storage).length}`
      storage[id] = { id, name: storageName, kind, life: 'alive', attached: false, location: `/srv/${storageName}/${id.split('/')[1]}` }
    }
    this.#units.set(name, {
      name,
      machine: machine ?? String(this.#nextMachine++),
      life: 'alive',
      resolvedMode: 'none',
      principal,
      addressesHash: 'addr-0',
      storage,
      storageRequired: Object.keys(storage),
      actions: [],
      commands: []
    })
    if (app.leader === undefined) app.leader = name
    this.#changed(this.#unitsOf(application))
    return name
  }

  #addRelation (endpoints: EndpointRef[], peer: boolean, containerScoped: boolean): RelationId {
    const id = this.#nextRelationId++
    this.#relations.set(id, {
      id, endpoints, life: 'alive', suspended: false, peer, containerScoped, scope: new Map(), applicationVersion: new Map()
    })
    return id
  }

  /** `juju integrate a:ep b:ep`. A container-scoped relation to a subordinate deploys it beside each principal. */
  relate (a: string, b: string, options: { containerScoped?: boolean } = {}): RelationId {
    const [appA, epA] = a.split(':') as [string, string]
    const [appB, epB] = b.split(':') as [string, string]
    this.#app(appA); this.#app(appB)
    const containerScoped = options.containerScoped ?? (this.#app(appA).spec.subordinate === true || this.#app(appB).spec.subordinate === true)
    const id = this.#addRelation([{ application: appA, endpoint: epA }, { application: appB, endpoint: epB }], false, containerScoped)
    const subordinate = this.#app(appA).spec.subordinate === true ? appA : this.#app(appB).spec.subordinate === true ? appB : undefined
    if (containerScoped && subordinate !== undefined) {
      const principalApp = subordinate === appA ? appB : appA
      for (const principal of this.#unitsOf(principalApp)) {
        if (this.#unit(principal).life === 'alive') this.addUnit(subordinate, this.#unit(principal).machine, principal)
      }
    }
    this.#changed([...this.#unitsOf(appA), ...this.#unitsOf(appB)])
    return id
  }

  removeRelation (id: RelationId): void {
    const relation = this.#relation(id)
    relation.life = 'dying'
    this.#maybeRemoveRelation(relation)
    this.#changed(this.#relationUnits(relation))
  }

  #relationUnits (relation: RelationRecord): UnitName[] {
    return relation.endpoints.flatMap(ep => this.#unitsOf(ep.application))
  }

  #maybeRemoveRelation (relation: RelationRecord): void {
    if (relation.life !== 'alive' && relation.scope.size === 0) {
      relation.life = 'dead'
      this.#relations.delete(relation.id)
    }
  }

  setConfig (application: ApplicationName, configHash: string): void {
    const app = this.#app(application)
    if (app.configHash === configHash) return
    app.configHash = configHash
    this.#changed(this.#unitsOf(application))
  }

  setAddresses (unit: UnitName, addressesHash: string): void {
    this.#unit(unit).addressesHash = addressesHash
    this.#changed([unit])
  }

  /** The leader ran `leader-set`: every unit of the application sees a new settings version. */
  leaderSet (application: ApplicationName): void {
    this.#app(application).leaderSettingsVersion++
    this.#changed(this.#unitsOf(application))
  }

  setLeader (application: ApplicationName, unit: UnitName | undefined): void {
    const app = this.#app(application)
    app.leader = unit
    this.#changed(this.#unitsOf(application))
  }

  /** A committed `relation-set` by `unit` on relation `id` (unit bag, or the app bag with `application`). */
  relationSet (unit: UnitName, id: RelationId, options: { application?: boolean } = {}): void {
    const relation = this.#relation(id)
    if (options.application === true) {
      const app = applicationOf(unit)
      relation.applicationVersion.set(app, (relation.applicationVersion.get(app) ?? 0) + 1)
    } else {
      const version = relation.scope.get(unit)
      assert(version !== undefined, `controller: "${unit}" is not in scope of relation ${id}`)
      relation.scope.set(unit, version + 1)
    }
    this.#changed(this.#relationUnits(relation))
  }

  refresh (application: ApplicationName, charmUrl: string, options: { force?: boolean, configHash?: string } = {}): void {
    const app = this.#app(application)
    app.charmUrl = charmUrl
    app.forceUpgrade = options.force ?? false
    if (options.configHash !== undefined) app.configHash = options.configHash
    this.#changed(this.#unitsOf(application))
  }

  resolved (unit: UnitName, mode: Exclude<ResolvedMode, 'none'> = 'retry-hooks'): void {
    this.#unit(unit).resolvedMode = mode
    this.#changed([unit])
  }

  clearResolved (unit: UnitName): void {
    const record = this.#units.get(unit)
    if (record === undefined || record.resolvedMode === 'none') return
    record.resolvedMode = 'none'
    this.#changed([unit])
  }

  enqueueAction (unit: UnitName, name: string, parameters: Record<string, unknown> = {}): string {
    const id = String(this.#nextActionId++)
    this.#unit(unit).actions.push({ id, name, parameters })
    this.#changed([unit])
    return id
  }

  actionCompleted (unit: UnitName, id: string): void {
    const record = this.#units.get(unit)
    if (record === undefined) return
    record.actions = record.actions.filter(action => action.id !== id)
    this.#changed([unit])
  }

  /** `juju exec --unit`: queue commands for the unit. */
  enqueueCommand (unit: UnitName, commands: string): string {
    const id = `cmd-${this.#nextActionId++}`
    this.#unit(unit).commands.push({ id, commands })
    this.#changed([unit])
    return id
  }

  commandCompleted (unit: UnitName, id: string): void {
    const record = this.#units.get(unit)
    if (record === undefined) return
    record.commands = record.commands.filter(command => command.id !== id)
    this.#changed([unit])
  }

  attachStorage (unit: UnitName, storageId?: string): void {
    const record = this.#unit(unit)
    for (const storage of Object.values(record.storage)) {
      if (storageId === undefined || storage.id === storageId) record.storage[storage.id] = { ...storage, attached: true }
    }
    this.#changed([unit])
  }

  addStorage (unit: UnitName, name: string, kind: 'filesystem' | 'block' = 'filesystem'): string {
    const record = this.#unit(unit)
    const id = `${name}/${Object.keys(record.storage).length}`
    record.storage[id] = { id, name, kind, life: 'alive', attached: true, location: `/srv/${name}/${id.split('/')[1]}` }
    this.#changed([unit])
    return id
  }

  detachStorage (unit: UnitName, storageId: string): void {
    const record = this.#unit(unit)
    const storage = record.storage[storageId]
    assert(storage !== undefined, `controller: no storage "${storageId}" on "${unit}"`)
    record.storage[storageId] = { ...storage, life: 'dying' }
    this.#changed([unit])
  }

  /** `juju remove-unit`: dying; a dying principal takes its subordinates with it. */
  removeUnit (unit: UnitName): void {
    const record = this.#unit(unit)
    if (record.life !== 'alive') return
    record.life = 'dying'
    const changed = [unit]
    for (const sub of this.#units.values()) {
      if (sub.principal === unit && sub.life === 'alive') { sub.life = 'dying'; changed.push(sub.name) }
    }
    const app = this.#app(applicationOf(unit))
    if (app.leader === unit) {
      // The lease is not renewed by a dying unit; another alive unit takes over.
      app.leader = this.#unitsOf(applicationOf(unit)).find(name => this.#unit(name).life === 'alive')
      changed.push(...this.#unitsOf(applicationOf(unit)))
    }
    this.#changed(changed)
  }

  removeApplication (application: ApplicationName): void {
    this.#app(application).life = 'dying'
    for (const relation of this.#relations.values()) {
      if (relation.endpoints.some(ep => ep.application === application) && !relation.peer) {
        relation.life = 'dying'
        this.#maybeRemoveRelation(relation)
        this.#changed(this.#relationUnits(relation))
      }
    }
    for (const unit of this.#unitsOf(application)) this.removeUnit(unit)
  }

  enterScope (unit: UnitName, id: RelationId): void {
    const relation = this.#relations.get(id)
    if (relation === undefined || relation.life !== 'alive' || relation.scope.has(unit)) return
    relation.scope.set(unit, 1)
    this.#changed(this.#relationUnits(relation))
  }

  leaveScope (unit: UnitName, id: RelationId): void {
    const relation = this.#relations.get(id)
    if (relation === undefined || !relation.scope.has(unit)) return
    relation.scope.delete(unit)
    this.#maybeRemoveRelation(relation)
    this.#changed(this.#relationUnits(relation))
  }

  /** The unit agent terminated (removed or dead): the unit leaves every scope and the model. */
  unitTerminated (unit: UnitName): void {
    const record = this.#units.get(unit)
    if (record === undefined) return
    const affected: UnitName[] = []
    for (const relation of [...this.#relations.values()]) {
      if (relation.scope.delete(unit)) {
        affected.push(...this.#relationUnits(relation))
        this.#maybeRemoveRelation(relation)
      }
    }
    this.#units.delete(unit)
    this.removedUnits.push(unit)
    if (record.principal !== undefined) affected.push(record.principal)
    const app = this.#app(applicationOf(unit))
    if (app.leader === unit) app.leader = this.#unitsOf(applicationOf(unit)).find(name => this.#unit(name).life === 'alive')
    affected.push(...this.#unitsOf(applicationOf(unit)))
    this.#changed(affected)
  }

  /** A subordinate asked to be destroyed because its principal's container relation went away. */
  destroyUnit (unit: UnitName): void {
    if (this.#units.has(unit)) this.removeUnit(unit)
  }

  /** The remote state `unit`'s watcher would see now. */
  remoteState (unit: UnitName): RemoteState {
    const record = this.#unit(unit)
    const application = applicationOf(unit)
    const app = this.#app(application)
    const relations: Record<string, RemoteRelation> = {}
    for (const relation of this.#relations.values()) {
      const view = this.#relationView(relation, record)
      if (view !== undefined) relations[String(relation.id)] = view
    }
    const subordinates = [...this.#units.values()].filter(sub => sub.principal === unit).map(sub => sub.name).sort(naturalCompare)
    const state: RemoteState = {
      life: record.life,
      resolvedMode: record.resolvedMode,
      charm: { url: app.charmUrl, modifiedVersion: app.modifiedVersion, forceUpgrade: app.forceUpgrade },
      configHash: app.configHash,
      trustHash: app.trustHash,
      addressesHash: record.addressesHash,
      leader: app.leader === unit,
      leaderSettingsVersion: app.leaderSettingsVersion,
      relations,
      storage: { ...record.storage },
      storageRequiredForInstall: [...record.storageRequired],
      actions: [...record.actions],
      commands: [...record.commands],
      subordinates
    }
    if (record.principal !== undefined) state.principalApplication = applicationOf(record.principal)
    return state
  }

  #relationView (relation: RelationRecord, unit: UnitRecord): RemoteRelation | undefined {
    const application = applicationOf(unit.name)
    const own = relation.endpoints.find(ep => ep.application === application)
    if (own === undefined) return undefined
    const remoteEndpoint = relation.peer ? own : relation.endpoints.find(ep => ep !== own)!
    // A subordinate only relates to its own principal; a principal only to its own subordinates.
    if (relation.containerScoped && !this.#containerPartnerExists(relation, unit)) return undefined
    const members: Record<UnitName, number> = {}
    for (const [member, version] of relation.scope) {
      if (member === unit.name || applicationOf(member) !== remoteEndpoint.application) continue
      if (relation.containerScoped && this.#unit(member).machine !== unit.machine) continue
      members[member] = version
    }
    return {
      id: relation.id,
      endpoint: own.endpoint,
      remoteApplication: remoteEndpoint.application,
      life: relation.life,
      suspended: relation.suspended,
      peer: relation.peer,
      implicit: own.endpoint === 'juju-info' && !relation.peer && this.#app(application).spec.subordinate !== true,
      containerScoped: relation.containerScoped,
      members,
      applicationVersion: relation.applicationVersion.get(remoteEndpoint.application) ?? 0,
      selfInScope: relation.scope.has(unit.name)
    }
  }

  #containerPartnerExists (relation: RelationRecord, unit: UnitRecord): boolean {
    const other = relation.endpoints.find(ep => ep.application !== applicationOf(unit.name))
    if (other === undefined) return true
    return [...this.#units.values()].some(candidate => applicationOf(candidate.name) === other.application && candidate.machine === unit.machine)
  }
}
