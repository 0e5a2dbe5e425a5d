import { assert, assertSafeInteger } from '../assert.ts'
import { encode } from '../codec.ts'
import { describeValue } from '../errors.ts'
import { defaultModelName, isApplicationName, isMachineId, isModelName, isUnitName, type ApplicationName, type MachineId, type RelationId, type UnitName } from '../ids.ts'
import { limits } from '../limits.ts'
import { configHashOf, trustHashOf, canonicalFlat } from './canonical.ts'
import { listAppend } from './chunked-list.ts'
import { charmEndpoints, configValueError, effectiveConfig, isPlainRecord, normaliseCharmSummary, type EndpointInfo } from './charm-summary.ts'
import { keys } from './keys.ts'
import { emptyTable, tableGet, tableKeys, tableWith, tableWithout } from './table.ts'
import { leaseHeld, validLeaseDuration } from './leases.ts'
import { controllerLeaseHeld, isControllerLeaseName, validControllerLeaseDuration } from './controller-leases.ts'
import { ModelDraft, recallRequest, rememberRequest } from './model-draft.ts'
import {
  agentStatuses, machineAgentStatuses, machineInstanceStatuses, workloadStatuses,
  type ActionRecord, type ApplicationRecord, type ApplyMeta, type Delta, type LeaseRecord, type ApplyOutcome, type CharmRecord, type CommandOf,
  type ControllerLeaseRecord,
  type CommandResult, type CommandSucceeded, type ConfigValue, type Entity, type MachineRecord, type ModelCommand,
  type ModelCommandType, type ModelContext, type RelationEndpoint, type RelationRecord, type SettingsRecord, type StorageRecord,
  type UnitRecord, type StatusRecord, type WorkloadStatus, type OpenedPortRange, type PortProtocol, portProtocols
} from './model-types.ts'
import { keyScope } from './visibility.ts'
import { withStatusChange } from './status-history.ts'

/**
 * Applying one committed command to the model: pure and deterministic, so every
 * controller, and every replay of the log, reaches the same context. Invalid commands
 * are refused with one line naming the component, the action and the reason; the
 * context is then unchanged except that the revision (= applied Raft index) advances,
 * because the entry was committed all the same.
 */

/** A refusal: the message is the one line the client sees. */
class Refusal extends Error {
  override name = 'Refusal'
}

type Succeeded = Omit<CommandSucceeded, 'ok' | 'index'>
type Handler<T extends ModelCommandType> = (d: ModelDraft, c: CommandOf<T>) => Succeeded

const q = describeValue
const requestIdLengthMax = 256
/** A hook run's commit key: a UUID, a colon and a run number. */
const hookRunLengthMax = 128
const textFieldLengthMax = 1024

/** The Juju tag of an entity, as messages and request keys name it (`machine-3`, `unit-web-0`). */
export function entityTag (entity: Entity): string {
  switch (entity.kind) {
    case 'user': return `user-${entity.name}`
    case 'controller': return `controller-${entity.id}`
    case 'machine': return `machine-${entity.id.replaceAll('/', '-')}`
    case 'unit': return `unit-${entity.name.replaceAll('/', '-')}`
  }
}

function isEntity (value: unknown): value is Entity {
  if (!isPlainRecord(value)) return false
  switch (value.kind) {
    case 'user': return typeof value.name === 'string' && value.name !== '' && value.name.length <= textFieldLengthMax
    case 'controller': return typeof value.id === 'string' && value.id !== '' && value.id.length <= textFieldLengthMax
    case 'machine': return typeof value.id === 'string' && isMachineId(value.id)
    case 'unit': return typeof value.name === 'string' && isUnitName(value.name)
    default: return false
  }
}

/** What the command tried to do, for `controller: cannot <this>: <why>`. */
export function describeCommand (c: ModelCommand): string {
  switch (c.type) {
    case 'add-charm': return `add charm ${q(c.url)}`
    case 'deploy': return `deploy ${q(c.application)}`
    case 'add-unit': return `add unit to ${q(c.application)}`
    case 'remove-unit': return `remove unit ${q(c.unit)}`
    case 'remove-application': return `remove application ${q(c.application)}`
    case 'set-config': return `set config of ${q(c.application)}`
    case 'integrate': return `integrate ${q(c.a)} with ${q(c.b)}`
    case 'remove-relation': return `remove relation ${q(c.relationId)}`
    case 'enter-scope': return `enter scope of relation ${q(c.relationId)} for ${q(c.unit)}`
    case 'leave-scope': return `leave scope of relation ${q(c.relationId)} for ${q(c.unit)}`
    case 'relation-settings': return c.application === true
      ? `write application settings on relation ${q(c.relationId)} for ${q(c.unit)}`
      : `write relation settings of ${q(c.unit)} on relation ${q(c.relationId)}`
    case 'leader-settings': return `write leader settings of ${q(c.application)} for ${q(c.unit)}`
    case 'claim-leadership': return `claim leadership of ${q(c.application)} for ${q(c.unit)}`
    case 'extend-leadership': return `extend leadership of ${q(c.application)} for ${q(c.unit)}`
    case 'release-leadership': return `release leadership of ${q(c.application)} for ${q(c.unit)}`
    case 'unit-dead': return `mark unit ${q(c.unit)} dead`
    case 'set-unit-status': return `set workload status of ${q(c.unit)}`
    case 'set-agent-status': return `set agent status of ${q(c.unit)}`
    case 'resolved': return `resolve ${q(c.unit)}`
    case 'clear-resolved': return `clear the resolved mode of ${q(c.unit)}`
    case 'enqueue-action': return `run action ${q(c.name)} on ${q(c.unit)}`
    case 'complete-action': return `complete action ${q(c.actionId)} of ${q(c.unit)}`
    case 'enqueue-command': return `run commands on ${q(c.unit)}`
    case 'complete-command': return `complete command ${q(c.commandId)} of ${q(c.unit)}`
    case 'storage-attached': return `attach storage ${q(c.storageId)} to ${q(c.unit)}`
    case 'add-machine': return 'add a machine'
    case 'set-machine-provisioning': return `record the provisioning of machine ${q(c.machine)}`
    case 'register-machine-agent': return `register the agent of machine ${q(c.machine)}`
    case 'set-machine-instance': return `set the instance of machine ${q(c.machine)}`
    case 'set-machine-status': return `set the status of machine ${q(c.machine)}`
    case 'remove-machine': return `remove machine ${q(c.machine)}`
    case 'machine-dead': return `mark machine ${q(c.machine)} dead`
    case 'refresh': return `refresh ${q(c.application)} to ${q(c.charm)}`
    case 'expose': return `expose ${q(c.application)}`
    case 'unexpose': return `unexpose ${q(c.application)}`
    case 'add-model': return `add model ${q(c.name)}`
    case 'destroy-model': return `destroy model ${q(c.name)}`
    case 'remove-model': return `remove model ${q(c.name)}`
    case 'claim-controller-lease': return `claim controller lease ${q(c.lease)} for ${q(c.controller)}`
    case 'release-controller-lease': return `release controller lease ${q(c.lease)} for ${q(c.controller)}`
    case 'commit-hook-changes': return `commit hook changes of ${q(c.unit)}`
    case 'set-workload-version': return `set the workload version of ${q(c.unit)}`
    case 'set-application-status': return `set the application status for ${q(c.unit)}`
  }
}

function refuse (c: ModelCommand, why: string): never {
  throw new Refusal(`controller: cannot ${describeCommand(c)}: ${why}`)
}

// ---------------------------------------------------------------------------------
// The entry point

/**
 * Applies `command`, committed at `meta.index`, to `context`. Returns the next context,
 * the deltas (empty when refused or a duplicate) and the result the proposer gets.
 * `meta.index` must be above the context's revision: re-applying an entry is the host's bug.
 */
export function applyCommand (context: ModelContext, command: ModelCommand, meta: ApplyMeta): ApplyOutcome {
  assertSafeInteger(meta.index, 'model: applied index')
  assert(meta.index > context.revision, `model: entry ${meta.index} applied at revision ${context.revision}`)
  const term = meta.term ?? context.term
  assertSafeInteger(term, 'model: applied term')
  const index = meta.index
  const advanced = (): ModelContext => ({ ...context, revision: index, term })

  const envelopeError = envelopeProblem(command)
  if (envelopeError !== undefined) {
    // Without a valid request id and proposer there is nothing to remember the result by.
    return { context: advanced(), deltas: [], result: { ok: false, index, error: envelopeError }, duplicate: false }
  }
  const requestKey = `${entityTag(command.proposer)} ${command.requestId}`
  const seen = recallRequest(context.requests, requestKey)
  if (seen !== undefined) {
    if (seen.type !== command.type) {
      const error = `controller: cannot ${describeCommand(command)}: request id ${q(command.requestId)} was already used for ${q(seen.type)}`
      return { context: advanced(), deltas: [], result: { ok: false, index, error }, duplicate: false }
    }
    return { context: advanced(), deltas: [], result: seen.result, duplicate: true }
  }

  const draft = new ModelDraft(context, index)
  let result: CommandResult
  let next: ModelContext
  let deltas: readonly Delta[] = []
  try {
    const handler = handlers[command.type] as Handler<ModelCommandType>
    const value = handler(draft, command)
    result = { ok: true, index, ...value }
    const finished = draft.finish(term)
    next = finished.context
    deltas = finished.deltas
  } catch (error) {
    if (!(error instanceof Refusal)) throw error
    result = { ok: false, index, error: error.message }
    next = advanced()
  }
  next = { ...next, requests: rememberRequest(next.requests, requestKey, { type: command.type, result }) }
  return { context: next, deltas, result, duplicate: false }
}

function envelopeProblem (command: unknown): string | undefined {
  if (!isPlainRecord(command)) return `controller: cannot apply command: expected a command map, got ${q(command)}`
  if (typeof command.type !== 'string' || !Object.hasOwn(handlers, command.type)) {
    return `controller: cannot apply command: unknown command type ${q(command.type)}`
  }
  if (typeof command.requestId !== 'string' || command.requestId === '' || command.requestId.length > requestIdLengthMax) {
    return `controller: cannot apply ${q(command.type)}: request id must be 1 to ${requestIdLengthMax} characters, got ${q(command.requestId)}`
  }
  if (!isEntity(command.proposer)) return `controller: cannot apply ${q(command.type)}: proposer is not a user, controller, machine or unit`
  return undefined
}

// ---------------------------------------------------------------------------------
// Authorisation (DESIGN.md §10)

function isAdmin (entity: Entity): boolean {
  return entity.kind === 'user' || entity.kind === 'controller'
}

function deny (c: ModelCommand): never {
  refuse(c, `permission denied for ${entityTag(c.proposer)}`)
}

function requireAdmin (c: ModelCommand): void {
  if (!isAdmin(c.proposer)) deny(c)
}

/** A unit agent's own request: the unit itself, the machine agent hosting it, or a controller worker. */
function requireUnitAgent (d: ModelDraft, c: ModelCommand, unit: UnitName): void {
  const p = c.proposer
  if (p.kind === 'controller') return
  if (p.kind === 'unit' && p.name === unit) return
  if (p.kind === 'machine' && d.unit(unit)?.machine === p.id) return
  deny(c)
}

/** The controller itself: no user, agent or other controller may claim a lease in its name. */
function requireController (c: ModelCommand, controller: string): void {
  const p = c.proposer
  if (p.kind === 'controller' && p.id === controller) return
  deny(c)
}

/** Any controller (the provisioner runs on whichever leads). */
function requireAnyController (c: ModelCommand): void {
  if (c.proposer.kind !== 'controller') deny(c)
}

function requireMachineAgent (c: ModelCommand, machine: MachineId): void {
  const p = c.proposer
  if (p.kind === 'controller') return
  if (p.kind === 'machine' && p.id === machine) return
  deny(c)
}

// ---------------------------------------------------------------------------------
// Field checks (commands come from the log: every field is checked)

function applicationName (c: ModelCommand, value: unknown): ApplicationName {
  if (typeof value !== 'string' || !isApplicationName(value)) refuse(c, `${q(value)} is not a valid application name`)
  return value
}

function unitName (c: ModelCommand, value: unknown): UnitName {
  if (typeof value !== 'string' || !isUnitName(value)) refuse(c, `${q(value)} is not a valid unit name`)
  return value
}

function modelName (c: ModelCommand, value: unknown): string {
  if (typeof value !== 'string' || !isModelName(value)) refuse(c, `${q(value)} is not a valid model name (lower-case letters, digits and hyphens, at most 63 characters)`)
  return value
}

function machineId (c: ModelCommand, value: unknown): MachineId {
  if (typeof value !== 'string' || !isMachineId(value)) refuse(c, `${q(value)} is not a valid machine id`)
  return value
}

/** A controller id, as the `controller` entity's `id` is checked in the envelope. */
function controllerId (c: ModelCommand, value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > textFieldLengthMax) refuse(c, `${q(value)} is not a valid controller id`)
  return value
}

function controllerLeaseName (c: ModelCommand, value: unknown): string {
  if (typeof value !== 'string' || !isControllerLeaseName(value)) refuse(c, `${q(value)} is not a lease name of 1 to 64 characters a-z, 0-9 and "-"`)
  return value
}

function relationId (c: ModelCommand, value: unknown): RelationId {
  if (!Number.isSafeInteger(value) || (value as number) < 0) refuse(c, `${q(value)} is not a valid relation id`)
  return value as number
}

const charmUrlPattern = /^(?:local|ch|cs):[A-Za-z0-9][A-Za-z0-9._+/-]*$/
function charmUrl (c: ModelCommand, value: unknown): string {
  if (typeof value !== 'string' || value.length > textFieldLengthMax || !charmUrlPattern.test(value)) refuse(c, `${q(value)} is not a charm URL like "local:mysql-0" or "ch:mysql-42"`)
  return value
}

function text (c: ModelCommand, field: string, value: unknown, lengthMax = textFieldLengthMax): string {
  if (typeof value !== 'string' || value.length > lengthMax) refuse(c, `${field} must be a string of at most ${lengthMax} characters`)
  return value
}

function optionalBoolean (c: ModelCommand, field: string, value: unknown): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') refuse(c, `${field} must be true or false`)
  return value
}

function clockReading (c: ModelCommand, value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) refuse(c, `"now" must be a clock reading in whole milliseconds, got ${q(value)}`)
  return value as number
}

function unitCount (c: ModelCommand, value: unknown, min: number): number {
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > limits.modelUnitsPerCommandMax) {
    refuse(c, `number of units must be ${min} to ${limits.modelUnitsPerCommandMax}, got ${q(value)}`)
  }
  return value as number
}

function stringRecord (c: ModelCommand, field: string, value: unknown): Readonly<Record<string, string>> {
  if (!isPlainRecord(value)) refuse(c, `${field} must be a map of strings`)
  let bytes = 0
  for (const [key, entry] of Object.entries(value)) {
    if (key === '' || key.length > textFieldLengthMax) refuse(c, `${field} key ${q(key)} must be 1 to ${textFieldLengthMax} characters`)
    if (typeof entry !== 'string') refuse(c, `${field} value of ${q(key)} must be a string`)
    bytes += key.length + entry.length
  }
  if (bytes > limits.modelSettingsBytesMax) refuse(c, `${field} exceed ${limits.modelSettingsBytesMax} bytes`)
  return value as Record<string, string>
}

function constraintsOf (c: ModelCommand, value: unknown): Readonly<Record<string, string>> {
  if (value === undefined) return {}
  const record = stringRecord(c, 'constraints', value)
  for (const key of Object.keys(record)) if (!/^[a-z][a-z0-9-]*$/.test(key)) refuse(c, `constraint ${q(key)} is not a constraint name`)
  return sortedRecord(record)
}

function encodedSize (c: ModelCommand, field: string, value: unknown): number {
  try {
    return encode(value, 'controller').byteLength
  } catch {
    refuse(c, `${field} cannot be encoded`)
  }
}

function sortedRecord<T> (record: Readonly<Record<string, T>>): Record<string, T> {
  const out: Record<string, T> = {}
  for (const key of Object.keys(record).sort()) defineOwn(out, key, record[key] as T)
  return out
}

function defineOwn<T> (target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

// ---------------------------------------------------------------------------------
// Lookups

function getApplication (d: ModelDraft, c: ModelCommand, name: ApplicationName): ApplicationRecord {
  const app = d.application(name)
  if (app === undefined) refuse(c, `application ${q(name)} not found`)
  return app
}

function getUnit (d: ModelDraft, c: ModelCommand, name: UnitName): UnitRecord {
  const unit = d.unit(name)
  if (unit === undefined) refuse(c, `unit ${q(name)} not found`)
  return unit
}

function getMachine (d: ModelDraft, c: ModelCommand, id: MachineId): MachineRecord {
  const machine = d.machine(id)
  if (machine === undefined) refuse(c, `machine ${q(id)} not found`)
  return machine
}

function getRelation (d: ModelDraft, c: ModelCommand, id: RelationId): RelationRecord {
  const relation = d.relation(id)
  if (relation === undefined) refuse(c, `relation ${id} not found`)
  return relation
}

/** The unit a unit-agent command names, checked to be the caller's and part of the relation it names. */
function unitInRelation (d: ModelDraft, c: ModelCommand & { unit: unknown, relationId: unknown }): { name: UnitName, unit: UnitRecord, relation: RelationRecord } {
  const name = unitName(c, c.unit)
  requireUnitAgent(d, c, name)
  const unit = getUnit(d, c, name)
  const relation = relationOfUnit(d, c, unit, c.relationId)
  return { name, unit, relation }
}

/** The relation `id` names, checked to be one `unit`'s application takes part in. */
function relationOfUnit (d: ModelDraft, c: ModelCommand, unit: UnitRecord, id: unknown): RelationRecord {
  const relation = getRelation(d, c, relationId(c, id))
  if (ownEndpoint(relation, unit.application) === undefined) refuse(c, `unit ${q(unit.name)} is not part of relation ${relation.id}`)
  return relation
}

/**
 * The key of the databag `unit` may write in `relation`: its application's (leader
 * only) or its own (in scope only). Shared by `relation-settings` and `commit-hook-changes`.
 */
function writableBagKey (d: ModelDraft, c: ModelCommand, unit: UnitRecord, relation: RelationRecord, application: boolean): string {
  if (application) {
    if (d.lease(unit.application)?.holder !== unit.name) refuse(c, `unit ${q(unit.name)} is not the leader of ${q(unit.application)}`)
    return keys.applicationSettings(relation.id, unit.application)
  }
  if (tableGet(relation.members, unit.name)?.inScope !== true) refuse(c, `unit ${q(unit.name)} is not in scope of relation ${relation.id}`)
  return keys.unitSettings(relation.id, unit.name)
}

/** Applies databag changes to the bag at `key`, bumping its version only when something changed. */
function writeBag (d: ModelDraft, c: ModelCommand, key: string, changes: Readonly<Record<string, string>>, field = 'settings'): void {
  const previous = d.settings(key)
  const values = changedBag(c, previous?.values ?? {}, changes, field)
  if (values === undefined) return
  putSettings(d, key, { version: (previous?.version ?? 0) + 1, values })
}

function getCharm (d: ModelDraft, c: ModelCommand, url: string): CharmRecord {
  const charm = d.charm(url)
  if (charm === undefined) refuse(c, `charm ${q(url)} not found; add it first`)
  return charm
}

function charmOf (d: ModelDraft, app: ApplicationRecord): CharmRecord {
  const charm = d.charm(app.charm)
  assert(charm !== undefined, `model: application "${app.name}" uses missing charm "${app.charm}"`)
  return charm
}

function ownEndpoint (relation: RelationRecord, application: ApplicationName): RelationEndpoint | undefined {
  return relation.endpoints.find(ep => ep.application === application)
}

// ---------------------------------------------------------------------------------
// Writes (each records its delta key)

function putApplication (d: ModelDraft, app: ApplicationRecord): void {
  d.applications.set(app.name, app)
  d.touch(keys.application(app.name))
}

function putUnit (d: ModelDraft, unit: UnitRecord): void {
  d.units.set(unit.name, unit)
  d.touch(keys.unit(unit.name))
}

function putMachine (d: ModelDraft, machine: MachineRecord): void {
  d.machines.set(machine.id, machine)
  d.touch(keys.machine(machine.id))
}

function putRelation (d: ModelDraft, relation: RelationRecord): void {
  d.relations.set(String(relation.id), relation)
  d.touch(keys.relation(relation.id))
}

function putSettings (d: ModelDraft, key: string, settings: SettingsRecord): void {
  d.settingsTable.set(key, settings)
  d.touch(key)
}

function removeKey (d: ModelDraft, key: string): void {
  d.remove(key, keyScope(d, key))
}

/** Applies databag changes (empty value deletes); undefined when nothing changes. */
function changedBag (c: ModelCommand, current: Readonly<Record<string, string>>, changes: Readonly<Record<string, string>>, field = 'settings'): Record<string, string> | undefined {
  const next: Record<string, string> = {}
  for (const key of Object.keys(current)) defineOwn(next, key, current[key]!)
  let changed = false
  for (const [key, value] of Object.entries(changes)) {
    const had = Object.hasOwn(next, key)
    if (value === '') {
      if (had) { delete next[key]; changed = true }
    } else if (!had || next[key] !== value) {
      defineOwn(next, key, value)
      changed = true
    }
  }
  if (!changed) return undefined
  const sorted = sortedRecord(next)
  let bytes = 0
  for (const [key, value] of Object.entries(sorted)) bytes += key.length + value.length
  if (bytes > limits.modelSettingsBytesMax) refuse(c, `${field} would exceed ${limits.modelSettingsBytesMax} bytes`)
  return sorted
}

function newMachine (d: ModelDraft, constraints: Readonly<Record<string, string>>, placement: string | null = null): MachineRecord {
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

/** The first alive machine that never hosted a unit and has no placement of its own, if any. */
function cleanEmptyMachine (d: ModelDraft): MachineRecord | undefined {
  // Machine ids are the counter's values, so the oldest clean machine is found first.
  for (let n = 0; n < d.counters.machine; n++) {
    const machine = d.machine(String(n))
    if (machine !== undefined && machine.life === 'alive' && machine.clean && machine.units.length === 0 && machine.placement === null) return machine
  }
  return undefined
}

/** Adds one unit of `appName` on `machineId` (a new machine when null), beside `principal` if a subordinate. */
function createUnit (d: ModelDraft, appName: ApplicationName, machineId: MachineId | null, principal: UnitName | null, created: { machines: MachineId[] }): UnitName {
  const app = d.application(appName)!
  const charm = charmOf(d, app).metadata
  const name = `${app.name}/${app.nextUnitNumber}`
  assert(d.unit(name) === undefined, `model: unit "${name}" exists already`)
  // Placement first; else a clean, empty machine (Juju's AssignCleanEmpty); else a new one.
  let machine = machineId === null ? cleanEmptyMachine(d) : d.machine(machineId)
  if (machine === undefined) {
    machine = newMachine(d, app.constraints)
    created.machines.push(machine.id)
  }
  putMachine(d, { ...machine, units: [...machine.units, name], clean: false })

  const storage: Record<string, StorageRecord> = {}
  for (const [storeName, spec] of Object.entries(charm.storage)) {
    const number = d.counters.storage
    d.counters = { ...d.counters, storage: number + 1 }
    const id = `${storeName}/${number}`
    const location = spec.type === 'block' ? '' : spec.location ?? `/var/lib/juju/storage/${storeName}/${number}`
    storage[id] = { id, name: storeName, kind: spec.type, life: 'alive', attached: false, location }
  }
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
function ensureSubordinate (d: ModelDraft, subApp: ApplicationName, principal: UnitName, created: { machines: MachineId[], units: UnitName[] }): void {
  const unit = d.unit(principal)!
  if (unit.life !== 'alive') return
  if (unit.subordinates.some(sub => d.unit(sub)?.application === subApp)) return
  created.units.push(createUnit(d, subApp, unit.machine, principal, created))
}

/** For container-scoped `relation` between a principal and a subordinate application: [principal, subordinate]. */
function subordinatePair (d: ModelDraft, relation: RelationRecord): [ApplicationName, ApplicationName] | undefined {
  if (!relation.containerScoped || relation.life !== 'alive' || relation.peer) return undefined
  const [a, b] = relation.endpoints as [RelationEndpoint, RelationEndpoint]
  const appA = d.application(a.application)
  const appB = d.application(b.application)
  if (appA === undefined || appB === undefined || appA.life !== 'alive' || appB.life !== 'alive') return undefined
  if (appA.subordinate && !appB.subordinate) return [appB.name, appA.name]
  if (appB.subordinate && !appA.subordinate) return [appA.name, appB.name]
  return undefined
}

/** A unit leaves the model: its relation scopes and databags, its place on its principal and machine, its lease, actions and keys. */
function removeUnitRecord (d: ModelDraft, unit: UnitRecord): void {
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
  const machine = d.machine(unit.machine)
  if (machine !== undefined) putMachine(d, { ...machine, units: machine.units.filter(u => u !== name) })
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
 * `relation` with `name` (a member in scope) out of scope: it stays a member, with its
 * bag, as the newest departure; departures beyond limits.relationDepartedMembersMax
 * lose their member record and bag, oldest first. The caller puts the result.
 */
function leaveScope (d: ModelDraft, relation: RelationRecord, name: UnitName): RelationRecord {
  const member = tableGet(relation.members, name)!
  const departed = [...relation.departed, name]
  const excess = departed.length - limits.relationDepartedMembersMax
  let members = tableWith(relation.members, name, { ...member, inScope: false })
  for (const unit of departed.slice(0, Math.max(0, excess))) {
    // Removed while the relation (and the member, which gives the bag's scope) is unchanged in the draft.
    const key = keys.unitSettings(relation.id, unit)
    if (d.settings(key) !== undefined) {
      removeKey(d, key)
      d.settingsTable.delete(key)
    }
    members = tableWithout(members, unit)
  }
  return { ...relation, members, inScope: relation.inScope - 1, departed: excess > 0 ? departed.slice(excess) : departed }
}

/**
 * `remove-unit` semantics: dying, and a dying principal takes its subordinates with it.
 * A unit whose agent never started (still `allocating`) has run no hook and holds no
 * scope, so nobody would ever finish its removal: as Juju does, it leaves the model at
 * once (after its subordinates, which it takes with it first).
 */
function destroyUnit (d: ModelDraft, name: UnitName): void {
  const unit = d.unit(name)
  if (unit === undefined || unit.life !== 'alive') return
  putUnit(d, { ...unit, life: 'dying' })
  const app = d.application(unit.application)!
  putApplication(d, { ...app, scale: app.scale - 1 })
  for (const sub of unit.subordinates) destroyUnit(d, sub)
  const dying = d.unit(name)!
  if (dying.agent.status !== 'allocating' || d.lease(dying.application)?.holder === name) return
  if (dying.subordinates.some(sub => d.unit(sub) !== undefined)) return
  const inScope = d.application(dying.application)!.relations.some(id => {
    const relation = d.relation(id)
    return relation !== undefined && tableGet(relation.members, name)?.inScope === true
  })
  if (!inScope) removeUnitRecord(d, dying)
}

function addRelationToApplication (d: ModelDraft, application: ApplicationName, id: RelationId): void {
  const app = d.application(application)
  if (app === undefined || app.relations.includes(id)) return
  // Only an index: the application's own key does not change.
  d.applications.set(application, { ...app, relations: [...app.relations, id].sort((x, y) => x - y) })
}

function createRelation (d: ModelDraft, endpoints: RelationEndpoint[], peer: boolean): RelationRecord {
  const id = d.counters.relation
  d.counters = { ...d.counters, relation: id + 1 }
  const relation: RelationRecord = {
    id,
    key: endpoints.map(ep => `${ep.application}:${ep.name}`).join(' '),
    endpoints,
    life: 'alive',
    suspended: false,
    peer,
    containerScoped: endpoints.some(ep => ep.scope === 'container'),
    members: emptyTable(),
    inScope: 0,
    departed: []
  }
  putRelation(d, relation)
  for (const ep of endpoints) addRelationToApplication(d, ep.application, id)
  return relation
}

function createPeerRelations (d: ModelDraft, app: ApplicationRecord, charm: CharmRecord): void {
  const existing = new Set(app.relations.map(id => d.relation(id)).filter(r => r?.peer === true).map(r => r!.endpoints[0]!.name))
  for (const [name, ep] of Object.entries(charm.metadata.peers).sort(([x], [y]) => x < y ? -1 : x > y ? 1 : 0)) {
    if (existing.has(name)) continue
    createRelation(d, [{ application: app.name, name, interface: ep.interface, role: 'peer', scope: 'global', implicit: false }], true)
  }
}

/** Removes a relation and its databags, telling watchers. */
function removeRelation (d: ModelDraft, relation: RelationRecord): void {
  const gone: string[] = [keys.relation(relation.id)]
  for (const unit of tableKeys(relation.members)) {
    const key = keys.unitSettings(relation.id, unit)
    if (d.settings(key) !== undefined) gone.push(key)
  }
  for (const ep of relation.endpoints) {
    const key = keys.applicationSettings(relation.id, ep.application)
    if (d.settings(key) !== undefined && !gone.includes(key)) gone.push(key)
  }
  // Scopes are computed while the relation still exists.
  for (const key of gone) removeKey(d, key)
  for (const key of gone.slice(1)) d.settingsTable.delete(key)
  d.relations.delete(String(relation.id))
  for (const application of new Set(relation.endpoints.map(ep => ep.application))) {
    const app = d.application(application)
    if (app !== undefined) d.applications.set(application, { ...app, relations: app.relations.filter(id => id !== relation.id) })
  }
}

function maybeRemoveRelation (d: ModelDraft, relation: RelationRecord): void {
  if (relation.life !== 'alive' && relation.inScope === 0) removeRelation(d, relation)
}

function dyingRelation (d: ModelDraft, relation: RelationRecord): void {
  if (relation.life !== 'alive') return
  const dying = { ...relation, life: 'dying' as const }
  putRelation(d, dying)
  maybeRemoveRelation(d, dying)
}

/** The application leaves the model (its last unit is gone, or it never had one). */
function removeApplication (d: ModelDraft, app: ApplicationRecord): void {
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

function finishAction (d: ModelDraft, action: ActionRecord, status: ActionRecord['status'], results: ActionRecord['results'], message: string): void {
  d.actions.set(action.id, { ...action, status, results, message, completedAt: d.revision })
  d.touch(keys.action(action.id))
  const { list, dropped } = listAppend(d.finishedActions, [action.id], limits.modelFinishedActionsMax)
  for (const old of dropped) {
    removeKey(d, keys.action(old))
    d.actions.delete(old)
  }
  d.finishedActions = list
}

function placementOf (d: ModelDraft, c: ModelCommand, value: unknown, count: number): Array<MachineId | null> {
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

function parseEndpointRef (c: ModelCommand, value: unknown): { application: ApplicationName, endpoint: string | undefined } {
  if (typeof value !== 'string') refuse(c, `${q(value)} is not an endpoint like "app" or "app:endpoint"`)
  const colon = value.indexOf(':')
  const application = colon < 0 ? value : value.slice(0, colon)
  const endpoint = colon < 0 ? undefined : value.slice(colon + 1)
  if (!isApplicationName(application) || endpoint === '') refuse(c, `${q(value)} is not an endpoint like "app" or "app:endpoint"`)
  return { application, endpoint }
}

function endpointOf (application: ApplicationName, info: EndpointInfo): RelationEndpoint {
  return { application, name: info.name, interface: info.interface, role: info.role, scope: info.scope, implicit: info.implicit }
}

function unitOfApplication (d: ModelDraft, c: ModelCommand, unit: UnitName, application: ApplicationName): UnitRecord {
  const record = getUnit(d, c, unit)
  if (record.application !== application) refuse(c, `unit ${q(unit)} is not a unit of ${q(application)}`)
  return record
}

// ---------------------------------------------------------------------------------
// Hook changes (commit-hook-changes)

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

/** A port range as Juju's network.PortRange holds it: icmp is -1 to -1, which makes two icmp ranges conflict. */
interface PortSpan {
  readonly protocol: PortProtocol
  readonly from: number
  readonly to: number
}

interface PortRequest extends PortSpan {
  /** `['*']`, or endpoint names, sorted and distinct. */
  readonly endpoints: readonly string[]
}

/** Juju's PortRange.String: `80/tcp`, `1000-2000/udp`, `icmp`. */
function portText (span: PortSpan): string {
  if (span.protocol === 'icmp') return 'icmp'
  return span.from === span.to ? `${span.from}/${span.protocol}` : `${span.from}-${span.to}/${span.protocol}`
}

function portIdentity (span: PortSpan): string {
  return `${span.protocol} ${span.from} ${span.to}`
}

/** Juju's PortRange.ConflictsWith: the same protocol and overlapping numbers. */
function portsConflict (a: PortSpan, b: PortSpan): boolean {
  return a.protocol === b.protocol && a.to >= b.from && b.to >= a.from
}

/** Juju's PortRange.LessThan: protocol, then from, then to. */
function comparePortSpans (a: PortSpan, b: PortSpan): number {
  if (a.protocol !== b.protocol) return a.protocol < b.protocol ? -1 : 1
  return a.from - b.from || a.to - b.to
}

function spanOf (range: OpenedPortRange): PortSpan {
  return { protocol: range.protocol, from: range.from ?? -1, to: range.to ?? -1 }
}

function openedPortRangeOf (span: PortSpan, endpoints: readonly string[]): OpenedPortRange {
  return span.protocol === 'icmp'
    ? { protocol: 'icmp', endpoints: [...endpoints] }
    : { protocol: span.protocol, from: span.from, to: span.to, endpoints: [...endpoints] }
}

/** Every endpoint of the charm, sorted: what `*` stands for when one endpoint is closed. */
function endpointNamesOf (charm: CharmRecord): string[] {
  return [...new Set(charmEndpoints(charm.metadata).map(ep => ep.name))].sort()
}

/** The ranges of `openPorts` or `closePorts`, checked as Juju's PortRange.Validate does (ports 1 to 65535). */
function portRangeChanges (c: ModelCommand, unit: UnitRecord, verb: 'open' | 'close', value: unknown, endpointNames: ReadonlySet<string>): PortRequest[] {
  if (value === undefined) return []
  const field = `${verb}Ports`
  if (!Array.isArray(value) || value.length > limits.modelOpenedPortRangesPerUnitMax) {
    refuse(c, `${field} must be a list of at most ${limits.modelOpenedPortRangesPerUnitMax} port ranges`)
  }
  return (value as unknown[]).map(entry => {
    if (!isPlainRecord(entry)) refuse(c, `each of ${field} must be a map with "protocol", "from", "to" and "endpoints"`)
    const protocol = entry.protocol
    if (typeof protocol !== 'string' || !(portProtocols as readonly string[]).includes(protocol)) {
      refuse(c, `invalid protocol ${q(protocol)}, expected "tcp", "udp", or "icmp"`)
    }
    let span: PortSpan
    if (protocol === 'icmp') {
      if (entry.from !== undefined || entry.to !== undefined) refuse(c, `protocol "icmp" doesn't support any ports; got ${q(entry.from ?? entry.to)}`)
      span = { protocol: 'icmp', from: -1, to: -1 }
    } else {
      const from = entry.from
      const to = entry.to ?? from
      const valid = (port: unknown): boolean => Number.isSafeInteger(port) && (port as number) >= 1 && (port as number) <= 65535
      if (!valid(from) || !valid(to)) refuse(c, `port range bounds must be between 1 and 65535, got ${q(from)}-${q(to)}`)
      span = { protocol: protocol as PortProtocol, from: from as number, to: to as number }
      if (span.from > span.to) refuse(c, `invalid port range ${span.from}-${span.to}/${span.protocol}`)
    }
    // No count of its own: every entry must name an endpoint, and the command's size bounds repeats.
    const listed = entry.endpoints ?? ['*']
    if (!Array.isArray(listed) || listed.length === 0) refuse(c, `${verb} port range ${portText(span)}: endpoints must list "*" or endpoint names`)
    const named = new Set<string>()
    for (const endpoint of listed as unknown[]) {
      if (endpoint === '*') continue
      if (typeof endpoint !== 'string' || !endpointNames.has(endpoint)) refuse(c, `${verb} port range: endpoint ${q(endpoint)} for unit ${q(unit.name)} not found`)
      named.add(endpoint)
    }
    const endpoints = (listed as unknown[]).includes('*') ? ['*'] : [...named].sort()
    return { ...span, endpoints }
  })
}

/**
 * The unit's opened ports after the hook's opens and then its closes, as Juju's
 * openClosePortRangesOperation merges them; undefined when nothing changes. A range is
 * one entry however many endpoints it is open for, and `*` absorbs named endpoints.
 * Opening a range that overlaps a different range open on the machine (another unit's,
 * or another of this unit's) is refused, and so is closing one that is not open but
 * overlaps one that is, since Juju refuses both.
 */
function nextOpenedPorts (
  d: ModelDraft, c: ModelCommand, unit: UnitRecord, opens: readonly PortRequest[], closes: readonly PortRequest[], endpointNames: readonly string[]
): OpenedPortRange[] | undefined {
  if (opens.length === 0 && closes.length === 0) return undefined
  const mine = new Map<string, { span: PortSpan, endpoints: readonly string[] }>()
  for (const range of unit.openedPorts) {
    const span = spanOf(range)
    mine.set(portIdentity(span), { span, endpoints: range.endpoints })
  }
  const others: Array<{ span: PortSpan, unit: UnitName }> = []
  for (const name of d.machine(unit.machine)?.units ?? []) {
    if (name === unit.name) continue
    for (const range of d.unit(name)?.openedPorts ?? []) others.push({ span: spanOf(range), unit: name })
  }
  const checkConflicts = (verb: 'open' | 'close', request: PortSpan): void => {
    const held = [...others, ...[...mine.values()].map(entry => ({ span: entry.span, unit: unit.name }))]
    for (const existing of held) {
      if (portsConflict(existing.span, request)) {
        refuse(c, `cannot ${verb} ports ${portText(request)}: port ranges ${portText(existing.span)} (${q(existing.unit)}) and ${portText(request)} (${q(unit.name)}) conflict`)
      }
    }
  }

  for (const open of opens) {
    const identity = portIdentity(open)
    const existing = mine.get(identity)
    if (existing === undefined) {
      checkConflicts('open', open)
      mine.set(identity, { span: open, endpoints: open.endpoints })
    } else if (existing.endpoints[0] !== '*') {
      const endpoints = open.endpoints[0] === '*' ? ['*'] : [...new Set([...existing.endpoints, ...open.endpoints])].sort()
      mine.set(identity, { span: existing.span, endpoints })
    }
  }
  for (const close of closes) {
    const identity = portIdentity(close)
    const existing = mine.get(identity)
    if (existing === undefined) {
      // Closing what is not open is a no-op, unless it overlaps what is.
      checkConflicts('close', close)
      continue
    }
    // Closing one endpoint of a range open for all leaves it open for every other endpoint.
    const current = existing.endpoints[0] === '*' ? endpointNames : existing.endpoints
    const remaining = close.endpoints[0] === '*' ? [] : current.filter(endpoint => !close.endpoints.includes(endpoint))
    if (remaining.length === 0) mine.delete(identity)
    else mine.set(identity, { span: existing.span, endpoints: remaining })
  }
  if (mine.size > limits.modelOpenedPortRangesPerUnitMax) {
    refuse(c, `unit ${q(unit.name)} would have more than ${limits.modelOpenedPortRangesPerUnitMax} port ranges open`)
  }
  const next = [...mine.values()].sort((a, b) => comparePortSpans(a.span, b.span)).map(entry => openedPortRangeOf(entry.span, entry.endpoints))
  return JSON.stringify(next) === JSON.stringify(unit.openedPorts) ? undefined : next
}

interface CharmStateRequest {
  readonly set: Readonly<Record<string, string>>
  readonly delete: readonly string[]
}

function charmStateKey (c: ModelCommand, key: unknown): string {
  if (typeof key !== 'string' || key === '' || key.length > textFieldLengthMax) refuse(c, `charm state key ${q(key)} must be 1 to ${textFieldLengthMax} characters`)
  return key
}

function charmStateChanges (c: ModelCommand, value: unknown): CharmStateRequest | undefined {
  if (value === undefined) return undefined
  if (!isPlainRecord(value)) refuse(c, 'charm state changes must be a map with "set" and "delete"')
  const set = value.set ?? {}
  if (!isPlainRecord(set)) refuse(c, 'charm state "set" must be a map of strings')
  const entries = Object.entries(set)
  if (entries.length > limits.modelCharmStateKeysMax) refuse(c, `charm state "set" has more than ${limits.modelCharmStateKeysMax} keys`)
  for (const [key, entry] of entries) {
    charmStateKey(c, key)
    if (typeof entry !== 'string') refuse(c, `charm state value of ${q(key)} must be a string`)
  }
  const deleted = value.delete ?? []
  if (!Array.isArray(deleted) || deleted.length > limits.modelCharmStateKeysMax) {
    refuse(c, `charm state "delete" must be a list of at most ${limits.modelCharmStateKeysMax} keys`)
  }
  for (const key of deleted as unknown[]) {
    if (Object.hasOwn(set, charmStateKey(c, key))) refuse(c, `charm state key ${q(key)} is both set and deleted`)
  }
  return { set: set as Record<string, string>, delete: deleted as string[] }
}

/** Bytes of `text` as UTF-8 (a lone surrogate counts as the 3-byte replacement character). */
function utf8Length (text: string): number {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) {
      bytes += 1
    } else if (code < 0x800) {
      bytes += 2
    } else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      i++
    } else {
      bytes += 3
    }
  }
  return bytes
}

/** The unit's charm state after the changes (an empty value deletes, as `state-set k=` does); undefined when nothing changes. */
function nextCharmState (c: ModelCommand, current: Readonly<Record<string, string>>, changes: CharmStateRequest): Record<string, string> | undefined {
  const next: Record<string, string> = {}
  for (const key of Object.keys(current)) defineOwn(next, key, current[key]!)
  let changed = false
  for (const key of changes.delete) {
    if (Object.hasOwn(next, key)) { delete next[key]; changed = true }
  }
  for (const [key, value] of Object.entries(changes.set)) {
    if (value === '') {
      if (Object.hasOwn(next, key)) { delete next[key]; changed = true }
    } else if (!Object.hasOwn(next, key) || next[key] !== value) {
      defineOwn(next, key, value)
      changed = true
    }
  }
  if (!changed) return undefined
  const entries = Object.entries(next)
  if (entries.length > limits.modelCharmStateKeysMax) refuse(c, `charm state would have more than ${limits.modelCharmStateKeysMax} keys`)
  let bytes = 0
  for (const [key, value] of entries) bytes += utf8Length(key) + utf8Length(value)
  if (bytes > limits.modelCharmStateBytesMax) refuse(c, `charm state would exceed ${limits.modelCharmStateBytesMax} bytes`)
  return sortedRecord(next)
}

// ---------------------------------------------------------------------------------
// Handlers

const handlers: { [T in ModelCommandType]: Handler<T> } = {
  'add-charm': (d, c) => {
    requireAdmin(c)
    const url = charmUrl(c, c.url)
    if (typeof c.hash !== 'string' || !/^[0-9a-f]{16,128}$/.test(c.hash)) refuse(c, 'hash must be a lower-case hex digest of the charm archive')
    const metadata = normaliseCharmSummary(c.metadata)
    if (typeof metadata === 'string') refuse(c, metadata)
    const existing = d.charm(url)
    if (existing !== undefined) {
      if (existing.hash !== c.hash) refuse(c, `the URL is already used by charm content ${q(existing.hash)}`)
      return {}
    }
    d.charms.set(url, { url, hash: c.hash, metadata })
    d.touch(keys.charm(url))
    return {}
  },

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
    destroyUnit(d, name)
    return {}
  },

  'remove-application': (d, c) => {
    requireAdmin(c)
    const app = getApplication(d, c, applicationName(c, c.application))
    if (app.life !== 'alive') return {}
    putApplication(d, { ...app, life: 'dying' })
    for (const id of app.relations) {
      const relation = d.relation(id)
      if (relation !== undefined && !relation.peer) dyingRelation(d, relation)
    }
    for (const unit of app.units) destroyUnit(d, unit)
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

  integrate: (d, c) => {
    requireAdmin(c)
    const refA = parseEndpointRef(c, c.a)
    const refB = parseEndpointRef(c, c.b)
    if (refA.application === refB.application) refuse(c, 'an application cannot be integrated with itself; peer relations come with the charm')
    const appA = getApplication(d, c, refA.application)
    const appB = getApplication(d, c, refB.application)
    for (const app of [appA, appB]) if (app.life !== 'alive') refuse(c, `application ${q(app.name)} is ${app.life}`)
    const endpointsA = charmEndpoints(charmOf(d, appA).metadata).filter(ep => ep.role !== 'peer' && (refA.endpoint === undefined || ep.name === refA.endpoint))
    const endpointsB = charmEndpoints(charmOf(d, appB).metadata).filter(ep => ep.role !== 'peer' && (refB.endpoint === undefined || ep.name === refB.endpoint))
    if (refA.endpoint !== undefined && endpointsA.length === 0) refuse(c, `application ${q(appA.name)} has no endpoint ${q(refA.endpoint)}`)
    if (refB.endpoint !== undefined && endpointsB.length === 0) refuse(c, `application ${q(appB.name)} has no endpoint ${q(refB.endpoint)}`)
    let pairs: Array<[EndpointInfo, EndpointInfo]> = []
    for (const a of endpointsA) {
      for (const b of endpointsB) {
        const roles = (a.role === 'provider' && b.role === 'requirer') || (a.role === 'requirer' && b.role === 'provider')
        if (roles && a.interface === b.interface) pairs.push([a, b])
      }
    }
    // The implicit juju-info provider is used only when nothing explicit matches (as Juju does).
    const explicit = pairs.filter(([a, b]) => !a.implicit && !b.implicit)
    if (explicit.length > 0) pairs = explicit
    if (pairs.length === 0) refuse(c, 'no matching endpoints (same interface, one provider and one requirer)')
    if (pairs.length > 1) {
      const options = pairs.map(([a, b]) => `${appA.name}:${a.name} ${appB.name}:${b.name}`).join(', ')
      refuse(c, `ambiguous: name the endpoints, one of ${options}`)
    }
    const [a, b] = pairs[0]!
    // Juju's relation key order: the requirer first.
    const endpoints = a.role === 'requirer'
      ? [endpointOf(appA.name, a), endpointOf(appB.name, b)]
      : [endpointOf(appB.name, b), endpointOf(appA.name, a)]
    const key = endpoints.map(ep => `${ep.application}:${ep.name}`).join(' ')
    for (const id of appA.relations) {
      if (d.relation(id)?.key === key) refuse(c, `relation ${q(key)} already exists`)
    }
    for (const app of [appA, appB]) {
      if (app.relations.length >= limits.relationsPerUnitMax) refuse(c, `application ${q(app.name)} already has ${limits.relationsPerUnitMax} relations`)
    }
    const relation = createRelation(d, endpoints, false)
    const created = { machines: [] as MachineId[], units: [] as UnitName[] }
    const pair = subordinatePair(d, relation)
    if (pair !== undefined) {
      for (const principal of d.application(pair[0])!.units) ensureSubordinate(d, pair[1], principal, created)
    }
    return { relationId: relation.id, units: created.units }
  },

  'remove-relation': (d, c) => {
    requireAdmin(c)
    const relation = getRelation(d, c, relationId(c, c.relationId))
    if (relation.peer) refuse(c, 'a peer relation is removed with its application')
    dyingRelation(d, relation)
    return {}
  },

  'enter-scope': (d, c) => {
    const { name, unit, relation } = unitInRelation(d, c)
    if (tableGet(relation.members, name)?.inScope === true) return {}
    if (relation.life !== 'alive') refuse(c, `relation ${relation.id} is ${relation.life}`)
    if (unit.life !== 'alive') refuse(c, `unit ${q(name)} is ${unit.life}`)
    if (relation.inScope >= limits.relationMembersMax) refuse(c, `relation ${relation.id} already has ${limits.relationMembersMax} units in scope`)
    // Re-entering after leaving: no longer a departure.
    const departed = relation.departed.includes(name) ? relation.departed.filter(u => u !== name) : relation.departed
    putRelation(d, { ...relation, members: tableWith(relation.members, name, { machine: unit.machine, inScope: true }), inScope: relation.inScope + 1, departed })
    // Entering scope writes the address keys (juju-semantics §2.2): version 1, or a new version on re-entry.
    const address = d.machine(unit.machine)?.addresses[0]
    const key = keys.unitSettings(relation.id, name)
    const previous = d.settings(key)
    const values: Record<string, string> = { ...previous?.values }
    if (address !== undefined) {
      values['egress-subnets'] = address.includes(':') ? `${address}/128` : `${address}/32`
      values['ingress-address'] = address
      values['private-address'] = address
    }
    putSettings(d, key, { version: (previous?.version ?? 0) + 1, values: sortedRecord(values) })
    return {}
  },

  'leave-scope': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const relation = d.relation(relationId(c, c.relationId))
    // Idempotent: the relation may be gone already, and leaving twice is not an error (as in Juju).
    const member = relation === undefined ? undefined : tableGet(relation.members, name)
    if (relation === undefined || member?.inScope !== true) return {}
    const left = leaveScope(d, relation, name)
    putRelation(d, left)
    maybeRemoveRelation(d, left)
    return {}
  },

  'relation-settings': (d, c) => {
    const { unit, relation } = unitInRelation(d, c)
    const changes = stringRecord(c, 'settings', c.settings)
    const application = optionalBoolean(c, 'application', c.application) ?? false
    writeBag(d, c, writableBagKey(d, c, unit, relation, application), changes)
    return {}
  },

  'leader-settings': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const app = getApplication(d, c, applicationName(c, c.application))
    unitOfApplication(d, c, name, app.name)
    if (d.lease(app.name)?.holder !== name) refuse(c, `unit ${q(name)} is not the leader`)
    const values = changedBag(c, app.leaderSettings, stringRecord(c, 'settings', c.settings))
    if (values === undefined) return {}
    d.applications.set(app.name, { ...app, leaderSettings: values, leaderSettingsVersion: app.leaderSettingsVersion + 1 })
    d.touch(keys.leaderSettings(app.name))
    return {}
  },

  'claim-leadership': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const app = getApplication(d, c, applicationName(c, c.application))
    const unit = unitOfApplication(d, c, name, app.name)
    const now = clockReading(c, c.now)
    if (!validLeaseDuration(c.durationMs)) refuse(c, `duration must be ${limits.leadershipLeaseDurationMsMin} to ${limits.leadershipLeaseDurationMsMax} ms, got ${q(c.durationMs)}`)
    if (unit.life !== 'alive') refuse(c, `unit ${q(name)} is ${unit.life}`)
    const lease = d.lease(app.name)
    if (lease !== undefined && leaseHeld(lease, now)) {
      if (lease.holder !== name) refuse(c, `${q(lease.holder)} holds it until ${lease.expiry}`)
      return { lease: extendLease(d, lease, now + c.durationMs) }
    }
    const granted = { application: app.name, holder: name, start: now, expiry: now + c.durationMs, grantedAt: d.revision }
    d.leases.set(app.name, granted)
    d.touch(keys.leadership(app.name))
    return { lease: { holder: name, expiry: granted.expiry } }
  },

  'extend-leadership': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const app = getApplication(d, c, applicationName(c, c.application))
    const unit = unitOfApplication(d, c, name, app.name)
    const now = clockReading(c, c.now)
    if (!validLeaseDuration(c.durationMs)) refuse(c, `duration must be ${limits.leadershipLeaseDurationMsMin} to ${limits.leadershipLeaseDurationMsMax} ms, got ${q(c.durationMs)}`)
    const lease = d.lease(app.name)
    if (lease === undefined || lease.holder !== name) refuse(c, `unit ${q(name)} does not hold the lease`)
    if (!leaseHeld(lease, now)) refuse(c, `the lease expired at ${lease.expiry}; claim it again`)
    // A dying unit is not renewed, so another unit can take over once the lease runs out.
    if (unit.life !== 'alive') refuse(c, `unit ${q(name)} is ${unit.life}`)
    return { lease: extendLease(d, lease, now + c.durationMs) }
  },

  'release-leadership': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const app = getApplication(d, c, applicationName(c, c.application))
    unitOfApplication(d, c, name, app.name)
    const lease = d.lease(app.name)
    if (lease === undefined) return {}
    if (lease.holder !== name) refuse(c, `${q(lease.holder)} holds the lease`)
    // The holder stopped believing before it proposed this, so the lease may go at once.
    removeKey(d, keys.leadership(app.name))
    d.leases.delete(app.name)
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

  'set-unit-status': (d, c) => {
    const { name, unit, status } = workloadStatusOf(d, c)
    d.units.set(name, { ...unit, workload: status, statusHistory: withStatusChange(unit.statusHistory, 'workload', status) })
    d.touch(keys.unitStatus(name))
    return {}
  },

  'set-agent-status': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    if (!agentStatuses.includes(c.status)) refuse(c, `${q(c.status)} is not an agent status (${agentStatuses.join(', ')})`)
    const message = text(c, 'message', c.message)
    const now = clockReading(c, c.now)
    let data: Record<string, string | number> | null = null
    if (c.data !== undefined) {
      if (!isPlainRecord(c.data)) refuse(c, 'data must be a map of strings and numbers')
      for (const [key, value] of Object.entries(c.data)) {
        if (typeof value !== 'string' && !Number.isFinite(value)) refuse(c, `data value of ${q(key)} must be a string or a number`)
      }
      if (encodedSize(c, 'data', c.data) > textFieldLengthMax * 4) refuse(c, `data exceeds ${textFieldLengthMax * 4} bytes`)
      data = sortedRecord(c.data)
    }
    const agent = { status: c.status, message, since: now, data }
    d.units.set(name, { ...unit, agent, statusHistory: withStatusChange(unit.statusHistory, 'juju-unit', agent) })
    d.touch(keys.unitStatus(name))
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
  },

  'enqueue-action': (d, c) => {
    requireAdmin(c)
    const unit = getUnit(d, c, unitName(c, c.unit))
    const charm = charmOf(d, d.application(unit.application)!)
    if (typeof c.name !== 'string' || !Object.hasOwn(charm.metadata.actions, c.name)) refuse(c, `charm ${q(charm.url)} defines no action ${q(c.name)}`)
    if (!isPlainRecord(c.parameters)) refuse(c, 'parameters must be a map')
    if (encodedSize(c, 'parameters', c.parameters) > limits.modelTaskBytesMax) refuse(c, `parameters exceed ${limits.modelTaskBytesMax} bytes`)
    if (unit.actions.length >= limits.pendingActionsMax) refuse(c, `unit already has ${limits.pendingActionsMax} pending actions`)
    const id = String(d.counters.task)
    d.counters = { ...d.counters, task: d.counters.task + 1 }
    d.actions.set(id, {
      id, unit: unit.name, machine: unit.machine, name: c.name, parameters: c.parameters,
      status: 'pending', results: {}, message: '', enqueuedAt: d.revision, completedAt: null
    })
    d.touch(keys.action(id))
    putUnit(d, { ...unit, actions: [...unit.actions, id] })
    return { actionId: id }
  },

  'complete-action': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    const action = typeof c.actionId === 'string' ? d.action(c.actionId) : undefined
    if (action === undefined || action.unit !== name) refuse(c, `unit ${q(name)} has no action ${q(c.actionId)}`)
    if (action.status !== 'pending') refuse(c, `the action is ${action.status} already`)
    if (c.status !== 'completed' && c.status !== 'failed') refuse(c, `status must be "completed" or "failed", got ${q(c.status)}`)
    const results = c.results ?? {}
    if (!isPlainRecord(results)) refuse(c, 'results must be a map')
    if (encodedSize(c, 'results', results) > limits.modelTaskBytesMax) refuse(c, `results exceed ${limits.modelTaskBytesMax} bytes`)
    const message = text(c, 'message', c.message ?? '')
    finishAction(d, action, c.status, results, message)
    putUnit(d, { ...unit, actions: unit.actions.filter(id => id !== action.id) })
    return {}
  },

  'enqueue-command': (d, c) => {
    requireAdmin(c)
    const unit = getUnit(d, c, unitName(c, c.unit))
    const commands = text(c, 'commands', c.commands, limits.modelTaskBytesMax)
    if (commands.trim() === '') refuse(c, 'no commands given')
    if (unit.commands.length >= limits.pendingCommandsMax) refuse(c, `unit already has ${limits.pendingCommandsMax} pending commands`)
    const id = `cmd-${d.counters.task}`
    d.counters = { ...d.counters, task: d.counters.task + 1 }
    putUnit(d, { ...unit, commands: [...unit.commands, { id, commands }] })
    return { commandId: id }
  },

  'complete-command': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    if (!unit.commands.some(command => command.id === c.commandId)) refuse(c, `unit ${q(name)} has no pending command ${q(c.commandId)}`)
    putUnit(d, { ...unit, commands: unit.commands.filter(command => command.id !== c.commandId) })
    return {}
  },

  'storage-attached': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    const storage = typeof c.storageId === 'string' && Object.hasOwn(unit.storage, c.storageId) ? unit.storage[c.storageId] : undefined
    if (storage === undefined) refuse(c, `unit ${q(name)} has no storage ${q(c.storageId)}`)
    const location = c.location === undefined ? storage.location : text(c, 'location', c.location)
    if (storage.attached && storage.location === location) return {}
    putUnit(d, { ...unit, storage: { ...unit.storage, [storage.id]: { ...storage, attached: true, location } } })
    return {}
  },

  'add-machine': (d, c) => {
    requireAdmin(c)
    let placement: string | null = null
    if (c.placement !== undefined) {
      placement = text(c, 'placement', c.placement)
      if (!/^ssh:[A-Za-z0-9._-]+@[A-Za-z0-9.:_[\]-]+$/.test(placement) || placement.length > 256) refuse(c, `placement ${q(placement)} is not ssh:user@host[:port]`)
    }
    const machine = newMachine(d, constraintsOf(c, c.constraints), placement)
    return { machines: [machine.id] }
  },

  'set-machine-provisioning': (d, c) => {
    requireAnyController(c)
    const machine = getMachine(d, c, machineId(c, c.machine))
    const token = text(c, 'token', c.token)
    const secret = text(c, 'secret', c.secret)
    if (!/^[0-9a-f]{16,128}$/.test(token) || !/^[0-9a-f]{32,128}$/.test(secret)) refuse(c, 'token and secret must be hex (16 to 128 and 32 to 128 digits)')
    // The first record stands: a provisioner that lost the race (a new leader) reuses it.
    if (machine.provisioning !== null || machine.life !== 'alive') return {}
    putMachine(d, { ...machine, provisioning: { token, secret } })
    return {}
  },

  'register-machine-agent': (d, c) => {
    requireAnyController(c)
    const machine = getMachine(d, c, machineId(c, c.machine))
    const peer = text(c, 'peer', c.peer)
    const secret = text(c, 'secret', c.secret)
    if (peer === '' || peer.length > 128) refuse(c, 'peer must be a peer id')
    if (machine.agentPeer === peer) return {}
    if (machine.agentPeer !== null) refuse(c, 'an agent has registered for it already')
    if (machine.life !== 'alive') refuse(c, `machine is ${machine.life}`)
    if (machine.provisioning === null || machine.provisioning.secret === '' || machine.provisioning.secret !== secret) refuse(c, 'the registration secret is wrong or used')
    putMachine(d, { ...machine, agentPeer: peer, provisioning: { token: machine.provisioning.token, secret: '' } })
    return {}
  },

  'set-machine-instance': (d, c) => {
    const id = machineId(c, c.machine)
    requireMachineAgent(c, id)
    const machine = getMachine(d, c, id)
    const instanceId = text(c, 'instance id', c.instanceId)
    if (instanceId === '') refuse(c, 'instance id is empty')
    if (machine.instanceId !== null && machine.instanceId !== instanceId) refuse(c, `machine is provisioned as ${q(machine.instanceId)} already`)
    if (!Array.isArray(c.addresses) || c.addresses.length > limits.machineAddressesMax || c.addresses.some(a => typeof a !== 'string' || a === '' || a.length > 256)) {
      refuse(c, `addresses must be at most ${limits.machineAddressesMax} non-empty strings`)
    }
    const addresses = [...c.addresses]
    if (machine.instanceId === instanceId && addresses.join(',') === machine.addresses.join(',')) return {}
    putMachine(d, { ...machine, instanceId, addresses })
    return {}
  },

  'set-machine-status': (d, c) => {
    const id = machineId(c, c.machine)
    requireMachineAgent(c, id)
    const machine = getMachine(d, c, id)
    if (c.agentStatus === undefined && c.instanceStatus === undefined) refuse(c, 'give an agent status, an instance status or both')
    if (c.agentStatus !== undefined && !machineAgentStatuses.includes(c.agentStatus)) refuse(c, `${q(c.agentStatus)} is not a machine status (${machineAgentStatuses.join(', ')})`)
    if (c.instanceStatus !== undefined && !machineInstanceStatuses.includes(c.instanceStatus)) refuse(c, `${q(c.instanceStatus)} is not an instance status (${machineInstanceStatuses.join(', ')})`)
    const message = text(c, 'message', c.message)
    const now = clockReading(c, c.now)
    const agent = c.agentStatus === undefined ? machine.agent : { status: c.agentStatus, message, since: now, data: null }
    const instance = c.instanceStatus === undefined ? machine.instance : { status: c.instanceStatus, message, since: now, data: null }
    let statusHistory = machine.statusHistory
    if (c.agentStatus !== undefined) statusHistory = withStatusChange(statusHistory, 'juju-machine', agent)
    if (c.instanceStatus !== undefined) statusHistory = withStatusChange(statusHistory, 'machine', instance)
    d.machines.set(id, { ...machine, agent, instance, statusHistory })
    d.touch(keys.machineStatus(id))
    return {}
  },

  'remove-machine': (d, c) => {
    requireAdmin(c)
    const machine = getMachine(d, c, machineId(c, c.machine))
    const force = optionalBoolean(c, 'force', c.force) ?? false
    if (machine.life !== 'alive') return {}
    if (machine.units.length > 0 && !force) refuse(c, `it hosts ${machine.units.map(u => q(u)).join(', ')}; remove them first or force it`)
    for (const unit of machine.units) if (d.unit(unit)?.principal === null) destroyUnit(d, unit)
    putMachine(d, { ...d.machine(machine.id)!, life: 'dying' })
    return {}
  },

  'machine-dead': (d, c) => {
    const id = machineId(c, c.machine)
    requireMachineAgent(c, id)
    const machine = d.machine(id)
    if (machine === undefined) return {}
    if (machine.life === 'alive') refuse(c, 'the machine is alive; remove it first')
    if (machine.units.length > 0) refuse(c, `units ${machine.units.map(u => q(u)).join(', ')} remain on it`)
    removeKey(d, keys.machine(id))
    removeKey(d, keys.machineStatus(id))
    d.machines.delete(id)
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
  },

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
  },

  'claim-controller-lease': (d, c) => {
    const controller = controllerId(c, c.controller)
    requireController(c, controller)
    const name = controllerLeaseName(c, c.lease)
    const now = clockReading(c, c.now)
    if (!validControllerLeaseDuration(c.durationMs)) {
      refuse(c, `duration must be ${limits.controllerLeaseDurationMsMin} to ${limits.controllerLeaseDurationMsMax} ms, got ${q(c.durationMs)}`)
    }
    const lease = d.controllerLease(name)
    if (lease !== undefined && controllerLeaseHeld(lease, now)) {
      if (lease.holder !== controller) refuse(c, `controller ${q(lease.holder)} holds it until ${lease.expiry}`)
      return { lease: extendControllerLease(d, lease, now + c.durationMs) }
    }
    const granted: ControllerLeaseRecord = { lease: name, holder: controller, start: now, expiry: now + c.durationMs, grantedAt: d.revision }
    d.controllerLeases.set(name, granted)
    d.touch(keys.controllerLease(name))
    return { lease: { holder: controller, expiry: granted.expiry } }
  },

  'release-controller-lease': (d, c) => {
    const controller = controllerId(c, c.controller)
    requireController(c, controller)
    const name = controllerLeaseName(c, c.lease)
    const lease = d.controllerLease(name)
    if (lease === undefined) return {}
    if (lease.holder !== controller) refuse(c, `controller ${q(lease.holder)} holds the lease`)
    // The holder stopped its singular workers before it proposed this, so the lease may go at once.
    removeKey(d, keys.controllerLease(name))
    d.controllerLeases.delete(name)
    return {}
  },

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
    if (openedPorts === undefined && charmState === undefined && hookRun === undefined) return {}
    // The unit's own key is not touched: ports and charm state are watched apart from it.
    d.units.set(name, {
      ...unit, openedPorts: openedPorts ?? unit.openedPorts, charmState: charmState ?? unit.charmState, ...(hookRun === undefined ? {} : { lastHookRun: hookRun })
    })
    if (openedPorts !== undefined) d.touch(keys.unitPorts(name))
    if (charmState !== undefined) d.touch(keys.unitState(name))
    return {}
  },

  'set-workload-version': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    const version = text(c, 'version', c.version, limits.modelWorkloadVersionLengthMax)
    const app = d.application(unit.application)!
    if (app.workloadVersion === version) return {}
    putApplication(d, { ...app, workloadVersion: version })
    return {}
  },

  'set-application-status': (d, c) => {
    const { name, unit, status } = workloadStatusOf(d, c)
    const lease = d.lease(unit.application)
    if (lease === undefined || lease.holder !== name || !leaseHeld(lease, status.since!)) refuse(c, `unit ${q(name)} is not the leader of ${q(unit.application)}`)
    const app = d.application(unit.application)!
    putApplication(d, { ...app, status, statusHistory: withStatusChange(app.statusHistory, 'application', status) })
    return {}
  }
}

/** The unit agent's own request, checked, and the workload status record it sets (for the unit or, by the leader, the application). */
function workloadStatusOf (d: ModelDraft, c: CommandOf<'set-unit-status'> | CommandOf<'set-application-status'>): { name: UnitName, unit: UnitRecord, status: StatusRecord<WorkloadStatus> } {
  const name = unitName(c, c.unit)
  requireUnitAgent(d, c, name)
  const unit = getUnit(d, c, name)
  if (!workloadStatuses.includes(c.status)) refuse(c, `${q(c.status)} is not a workload status (${workloadStatuses.join(', ')})`)
  const message = text(c, 'message', c.message)
  return { name, unit, status: { status: c.status, message, since: clockReading(c, c.now), data: null } }
}

function extendLease (d: ModelDraft, lease: LeaseRecord, expiry: number): { holder: UnitName, expiry: number } {
  // Never earlier: a holder's older copy must not outlive what the model believes.
  if (expiry > lease.expiry) {
    d.leases.set(lease.application, { ...lease, expiry })
    d.touch(keys.leadership(lease.application))
  }
  return { holder: lease.holder, expiry: Math.max(expiry, lease.expiry) }
}

function extendControllerLease (d: ModelDraft, lease: ControllerLeaseRecord, expiry: number): { holder: string, expiry: number } {
  // Never earlier: the holder may already be acting on the later expiry it was told.
  if (expiry > lease.expiry) {
    d.controllerLeases.set(lease.lease, { ...lease, expiry })
    d.touch(keys.controllerLease(lease.lease))
  }
  return { holder: lease.holder, expiry: Math.max(expiry, lease.expiry) }
}
