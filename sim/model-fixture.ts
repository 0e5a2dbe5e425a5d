import type { Clock } from '../runtime/clock.ts'
import { hashString32 } from '../runtime/random.ts'
import { naturalCompare, type ApplicationName, type MachineId, type RelationId, type UnitName } from '../runtime/ids.ts'
import { CommandProposer, type ModelCommandBody } from '../runtime/model/command-proposer.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import { leaseHeld } from '../runtime/model/leases.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import type { CharmSummaryInput, CommandResult, CommandSucceeded, ConfigChanges, Entity, Life, ModelContext, ResolvedMode } from '../runtime/model/model-types.ts'
import { remoteStateFor } from '../runtime/model/remote-state-view.ts'
import { tableKeys, tableValues } from '../runtime/model/table.ts'
import type { RemoteState } from '../runtime/unit-remote-state.ts'
import { commandForEmitted } from '../actors/unit/emitted-commands.ts'
import type { UnitEmitted } from '../actors/unit/unit-effects.ts'
import { FixtureLeadership, fixtureLeaseRenewEveryMs, type LeadershipProposal } from './fixture-leadership.ts'

/**
 * A test fixture over the real Juju model: one `ModelContext`, changed only by typed
 * commands applied with `applyCommand`, exactly as the controllers apply a committed
 * entry (no Raft, no network: one command after another, at consecutive indexes). The
 * scripting helpers (deploy, relate, config, leadership, removal, resolved, actions…) only
 * BUILD commands, proposed by the entity that would propose them in a real deployment
 * (the admin's CLI, a unit agent, a machine agent, a controller); what a command does is
 * the model's business. Each unit's `RemoteState` is the model's own projection
 * (`remoteStateFor`), and the unit actors' requests are applied as the real agent sends
 * them (`commandForEmitted`).
 */

export interface ApplicationSpec {
  name: ApplicationName
  /** Charm URL; `local:<name>-0` when absent. */
  charm?: string
  /** Peer endpoints, created with the application (interface `<name>-<endpoint>`). */
  peers?: string[]
  /** Provided endpoints: name → interface. */
  provides?: Record<string, string>
  /** Required endpoints: name → interface, or a container-scoped one (a subordinate's `host`). */
  requires?: Record<string, string | { interface: string, scope: 'container' }>
  /** A subordinate: it gets units by a container-scoped relation to a principal. */
  subordinate?: boolean
  /** Storage each unit is deployed with: name → kind (one instance, up to `storageMax`). */
  storage?: Record<string, 'filesystem' | 'block'>
  /** Instances a unit may have of each store; 1 when absent. */
  storageMax?: number
  /** The fewest instances per store (`multiple.range` m); 0 makes the stores optional. Default 1. */
  storageMin?: number
  /** String config options and their defaults; `{ setting: '' }` when absent. */
  config?: Record<string, string>
  /** Actions the charm defines; `['backup']` when absent. */
  actions?: string[]
}

export interface ModelFixtureOptions {
  /** The world's clock: leases are claimed at its readings and renewed on its timers. */
  clock: Clock
  /** Where refused agent requests are reported (the world's trace). */
  trace?: (line: string) => void
}

export type ModelFixtureListener = (units: UnitName[]) => void

const admin = new CommandProposer({ proposer: { kind: 'user', name: 'admin' }, requestPrefix: 'admin' })
/** The provisioner's entity: it records the instance and addresses of machines. */
const provisioner = new CommandProposer({ proposer: { kind: 'controller', id: '0' }, requestPrefix: 'controller-0' })
const charmHashLength = 16
/** Delta keys of unit and machine statuses (`unit/web/0/status`, `machine/1/status`). */
const statusKey = /^(?:unit\/[^/]+\/\d+|machine\/[^/]+)\/status$/

export class ModelFixture {
  #context: ModelContext = emptyModel()
  readonly #clock: Clock
  readonly #trace: (line: string) => void
  readonly #leadership = new FixtureLeadership()
  readonly #specs = new Map<ApplicationName, ApplicationSpec>()
  readonly #proposers = new Map<string, CommandProposer>()
  readonly #listeners: ModelFixtureListener[] = []
  readonly #appliedListeners: Array<(result: CommandResult) => void> = []
  #depth = 0
  #changed = false
  #generation = 0
  /** Units that left the model, in the order they left. */
  readonly removedUnits: UnitName[] = []
  /** Agent requests the model refused, as `unit: error` (a real agent logs them and goes on). */
  readonly refusals: string[] = []

  constructor (options: ModelFixtureOptions) {
    this.#clock = options.clock
    this.#trace = options.trace ?? (() => {})
    this.#scheduleRenewal()
  }

  /** The committed model, for reading with `readerOf` or the table helpers. */
  get context (): ModelContext { return this.#context }

  /** Called, after each scripted change or applied request, with every unit of the model. */
  onChange (listener: ModelFixtureListener): void {
    this.#listeners.push(listener)
  }

  /** Called after every command is applied, before anyone is told (checkers that must see each change). */
  onCommandApplied (listener: (result: CommandResult) => void): void {
    this.#appliedListeners.push(listener)
  }

  // --- reading -----------------------------------------------------------------------

  units (): UnitName[] {
    return tableKeys(this.#context.units).sort(naturalCompare)
  }

  unitLife (unit: UnitName): Life | undefined {
    return readerOf(this.#context).unit(unit)?.life
  }

  machineOf (unit: UnitName): MachineId {
    const record = readerOf(this.#context).unit(unit)
    if (record === undefined) throw new Error(`model fixture: no unit "${unit}"`)
    return record.machine
  }

  /** The unit holding `application`'s lease now, if it is in force. */
  leaderOf (application: ApplicationName): UnitName | undefined {
    const lease = readerOf(this.#context).lease(application)
    return lease !== undefined && leaseHeld(lease, this.#now()) ? lease.holder : undefined
  }

  relationIds (): RelationId[] {
    return tableValues(this.#context.relations).map(relation => relation.id).sort((a, b) => a - b)
  }

  /** The remote state `unit`'s watcher sees at `now` on its own clock (the world's clock by default). */
  remoteState (unit: UnitName, now = this.#now()): RemoteState {
    const state = this.remoteStateIfPresent(unit, now)
    if (state === undefined) throw new Error(`model fixture: no unit "${unit}"`)
    return state
  }

  /** As `remoteState`, or undefined once the unit has left the model. */
  remoteStateIfPresent (unit: UnitName, now = this.#now()): RemoteState | undefined {
    return remoteStateFor(this.#context, unit, Math.floor(now))
  }

  // --- the admin's commands --------------------------------------------------------

  /** `juju deploy` of a charm built from `spec`, `count` units on new machines or on `machines` (added as needed). */
  deploy (spec: ApplicationSpec, count: number, machines?: MachineId[]): UnitName[] {
    return this.#batch(() => {
      this.#specs.set(spec.name, spec)
      const url = spec.charm ?? `local:${spec.name}-0`
      this.#admin({ type: 'add-charm', url, hash: charmHash(url), metadata: charmMetadata(spec) })
      for (const machine of machines ?? []) this.#ensureMachine(machine)
      const body: ModelCommandBody = { type: 'deploy', application: spec.name, charm: url, config: {}, constraints: {}, numUnits: count }
      const result = this.#admin(machines === undefined ? body : { ...body, placement: machines })
      return [...result.units ?? []]
    })
  }

  /** `juju add-unit`; returns the new unit (its subordinates come with it). */
  addUnit (application: ApplicationName, machine?: MachineId): UnitName {
    return this.#batch(() => {
      if (machine !== undefined) this.#ensureMachine(machine)
      const result = this.#admin({ type: 'add-unit', application, numUnits: 1, ...(machine === undefined ? {} : { placement: [machine] }) })
      return result.units![0]!
    })
  }

  /** `juju integrate a b`; returns the relation id. */
  relate (a: string, b: string): RelationId {
    return this.#batch(() => this.#admin({ type: 'integrate', a, b }).relationId!)
  }

  removeRelation (id: RelationId): void {
    this.#batch(() => { this.#admin({ type: 'remove-relation', relationId: id }) })
  }

  /** `juju config app k=v` (null resets an option to its default). */
  setConfig (application: ApplicationName, config: ConfigChanges): void {
    this.#batch(() => { this.#admin({ type: 'set-config', application, config }) })
  }

  /** The provisioner learned `machine`'s addresses (every unit on it sees a new addresses hash). */
  setMachineAddresses (machine: MachineId, addresses: string[]): void {
    this.#batch(() => {
      this.#apply(provisioner, { type: 'set-machine-instance', machine, instanceId: `i-${machine}`, addresses }, true)
    })
  }

  /** `juju refresh` to `charm` (same metadata, or other config defaults). */
  refresh (application: ApplicationName, charm: string, options: { force?: boolean, configDefaults?: Record<string, string> } = {}): void {
    this.#batch(() => {
      const spec = this.#spec(application)
      const metadata = charmMetadata({ ...spec, config: { ...spec.config ?? defaultConfig, ...options.configDefaults } })
      this.#admin({ type: 'add-charm', url: charm, hash: charmHash(charm), metadata })
      this.#admin({ type: 'refresh', application, charm, ...(options.force === true ? { force: true } : {}) })
    })
  }

  resolved (unit: UnitName, mode: Exclude<ResolvedMode, 'none'> = 'retry-hooks'): void {
    this.#batch(() => { this.#admin({ type: 'resolved', unit, mode }) })
  }

  enqueueAction (unit: UnitName, name: string, parameters: Record<string, unknown> = {}): string {
    return this.#batch(() => this.#admin({ type: 'enqueue-action', unit, name, parameters }).actionId!)
  }

  /** `juju exec --unit`: queue commands for the unit. */
  enqueueCommand (unit: UnitName, commands: string): string {
    return this.#batch(() => this.#admin({ type: 'enqueue-command', unit, commands }).commandId!)
  }

  /** `juju remove-unit`. */
  removeUnit (unit: UnitName): void {
    this.#batch(() => { this.#admin({ type: 'remove-unit', unit }) })
  }

  /** `juju add-storage UNIT NAME=COUNT`; returns the new storage ids. */
  addStorage (unit: UnitName, name: string, count = 1): string[] {
    return this.#batch(() => [...this.#admin({ type: 'add-storage', unit, name, count }).storage ?? []])
  }

  /** `juju detach-storage ID`. */
  detachStorage (unit: UnitName, storageId: string): void {
    this.#batch(() => { this.#admin({ type: 'detach-storage', unit, storageId }) })
  }

  removeApplication (application: ApplicationName): void {
    this.#batch(() => { this.#admin({ type: 'remove-application', application }) })
  }

  // --- agents' commands ---------------------------------------------------------------

  /** The machine agent attached `unit`'s storage (all of it not yet attached, or `storageId`). */
  attachStorage (unit: UnitName, storageId?: string): void {
    this.#batch(() => {
      const machine = this.#proposer({ kind: 'machine', id: this.machineOf(unit) })
      for (const storage of Object.values(this.remoteState(unit).storage)) {
        if (storage.attached || (storageId !== undefined && storage.id !== storageId)) continue
        this.#apply(machine, { type: 'storage-attached', unit, storageId: storage.id }, true)
      }
    })
  }

  /** Hands `application`'s lease to `unit` (its holder releases, `unit` claims); undefined leaves it vacant a while. */
  setLeader (application: ApplicationName, unit: UnitName | undefined): void {
    this.#batch(() => { this.#applyLeadership(this.#leadership.handOver(this.#context, application, unit, this.#now()), true) })
  }

  /** The leader ran `leader-set` with a new value; false when no alive unit holds the lease (a dying one has resigned). */
  leaderSet (application: ApplicationName): boolean {
    const leader = this.leaderOf(application)
    if (leader === undefined || this.unitLife(leader) !== 'alive') return false
    this.#batch(() => { this.#asUnit(leader, { type: 'leader-settings', application, unit: leader, settings: { generation: this.#nextValue() } }, true) })
    return true
  }

  /** A committed `relation-set` by `unit` on relation `id` (its own bag, or its application's with `application`). */
  relationSet (unit: UnitName, id: RelationId, options: { application?: boolean } = {}): void {
    const body: ModelCommandBody = { type: 'relation-settings', unit, relationId: id, settings: { generation: this.#nextValue() } }
    this.#batch(() => { this.#asUnit(unit, options.application === true ? { ...body, application: true } : body, true) })
  }

  /** `unit`'s agent proposes `body`; a refusal is recorded, as the agent logs it and goes on. */
  propose (unit: UnitName, body: ModelCommandBody): CommandResult {
    return this.#batch(() => this.#asUnit(unit, body, false))
  }

  /** What `unit`'s actor emitted, applied as the real unit agent sends it. */
  applyEmitted (unit: UnitName, event: UnitEmitted, now: number): void {
    const body = commandForEmitted(unit, event, Math.floor(now))
    if (body !== undefined) this.propose(unit, body)
  }

  // --- internals ------------------------------------------------------------------------

  #now (): number {
    return Math.floor(this.#clock.now())
  }

  #nextValue (): string {
    return String(++this.#generation)
  }

  #spec (application: ApplicationName): ApplicationSpec {
    const spec = this.#specs.get(application)
    if (spec === undefined) throw new Error(`model fixture: no application "${application}" deployed`)
    return spec
  }

  /** Machine ids are the model's counter: add machines until `machine` exists. */
  #ensureMachine (machine: MachineId): void {
    while (readerOf(this.#context).machine(machine) === undefined && this.#context.counters.machine <= Number(machine)) {
      this.#admin({ type: 'add-machine' })
    }
  }

  /**
   * Runs `change` and then, once for the outermost change, lets vacant leases be claimed
   * and tells the listeners: one notice per scripted step, as one watcher event.
   */
  #batch<T> (change: () => T): T {
    this.#depth++
    let result: T
    try {
      result = change()
      // Only a change a watcher would see can have left a lease vacant.
      if (this.#depth === 1 && this.#changed) this.#applyLeadership(this.#leadership.electVacant(this.#context, this.#now()), false)
    } finally {
      this.#depth--
    }
    if (this.#depth === 0 && this.#changed) {
      this.#changed = false
      const units = this.units()
      for (const listener of this.#listeners) listener(units)
    }
    return result
  }

  #scheduleRenewal (): void {
    this.#clock.setTimeout(() => {
      this.#batch(() => { this.#applyLeadership(this.#leadership.renew(this.#context, this.#now()), false) })
      this.#scheduleRenewal()
    }, fixtureLeaseRenewEveryMs)
  }

  #applyLeadership (proposals: LeadershipProposal[], strict: boolean): void {
    for (const { unit, body } of proposals) this.#asUnit(unit, body, strict)
  }

  #admin (body: ModelCommandBody): CommandSucceeded {
    return this.#apply(admin, body, true) as CommandSucceeded
  }

  #asUnit (unit: UnitName, body: ModelCommandBody, strict: boolean): CommandResult {
    return this.#apply(this.#proposer({ kind: 'unit', name: unit }), body, strict)
  }

  #proposer (entity: Entity): CommandProposer {
    const key = entity.kind === 'unit' || entity.kind === 'user' ? `${entity.kind}:${entity.name}` : `${entity.kind}:${entity.id}`
    let proposer = this.#proposers.get(key)
    if (proposer === undefined) {
      proposer = new CommandProposer({ proposer: entity, requestPrefix: key })
      this.#proposers.set(key, proposer)
    }
    return proposer
  }

  /** Applies one command at the next index; a refused scripted command is a broken script and throws. */
  #apply (proposer: CommandProposer, body: ModelCommandBody, strict: boolean): CommandResult {
    const outcome = applyCommand(this.#context, proposer.command(body), { index: this.#context.revision + 1 })
    this.#context = outcome.context
    for (const delta of outcome.deltas) {
      const unit = /^unit\/([^/]+\/\d+)$/.exec(delta.key)?.[1]
      if (unit !== undefined && delta.removed === true) this.removedUnits.push(unit)
    }
    // Statuses are not part of any unit's remote state: a status-only change tells no watcher.
    if (outcome.deltas.some(delta => !statusKey.test(delta.key))) this.#changed = true
    for (const listener of this.#appliedListeners) listener(outcome.result)
    if (!outcome.result.ok) {
      if (strict) throw new Error(`model fixture: ${outcome.result.error}`)
      const who = proposer.proposer.kind === 'unit' ? proposer.proposer.name : proposer.proposer.kind
      this.refusals.push(`${who}: ${outcome.result.error}`)
      this.#trace(`refused ${who}: ${outcome.result.error}`)
    }
    return outcome.result
  }
}

const defaultConfig: Record<string, string> = { setting: '' }

/** The charm summary `add-charm` takes, built from the spec. */
function charmMetadata (spec: ApplicationSpec): CharmSummaryInput {
  return {
    name: spec.name,
    subordinate: spec.subordinate === true,
    peers: Object.fromEntries((spec.peers ?? []).map(endpoint => [endpoint, `${spec.name}-${endpoint}`])),
    provides: { ...spec.provides },
    requires: Object.fromEntries(Object.entries(spec.requires ?? {}).map(([name, ep]) => [name, typeof ep === 'string' ? ep : { ...ep }])),
    config: Object.fromEntries(Object.entries(spec.config ?? defaultConfig).map(([name, value]) => [name, { type: 'string' as const, default: value }])),
    storage: Object.fromEntries(Object.entries(spec.storage ?? {}).map(([name, kind]) => [name, { type: kind, countMin: spec.storageMin ?? 1, countMax: spec.storageMax ?? 1 }])),
    actions: Object.fromEntries((spec.actions ?? ['backup']).map(name => [name, { description: name }]))
  }
}

/** A stable content address per URL (the model only checks that it is hex and unchanged). */
function charmHash (url: string): string {
  let hex = ''
  for (let i = 0; hex.length < charmHashLength; i++) hex += hashString32(`${i}:${url}`).toString(16).padStart(8, '0')
  return hex.slice(0, charmHashLength)
}
