import { naturalCompare, type ApplicationName, type RelationId, type StorageId, type UnitName } from '../ids.ts'
import { addressesHashOf } from './canonical.ts'
import { keys } from './keys.ts'
import { believesLeader } from './leases.ts'
import { readerOf, type ModelReader } from './model-draft.ts'
import type { Life, ModelContext, OpenedPortRange, RelationRecord, ResolvedMode, UnitRecord } from './model-types.ts'
import { forEachTableEntry, tableEntries, tableGet } from './table.ts'
import type { RemoteAction, RemoteCharm, RemoteCommand, RemoteRelation, RemoteState, RemoteStorage } from '../unit-remote-state.ts'
import { relationVisibleTo } from './visibility.ts'
import { secretOwnerView } from './secret-owner-view.ts'

/**
 * The remote state one unit's watcher sees (juju-semantics §1.3), projected from the
 * model, in the shape declared in runtime/unit-remote-state.ts that the unit actor consumes.
 *
 * `leader` is true only while the unit is alive, holds the application's lease, and its
 * own clock (`now`) is more than the drift margin before the lease's expiry.
 */

export type RemoteCharmView = RemoteCharm
export type RemoteRelationView = RemoteRelation
export type RemoteStorageView = RemoteStorage
export type RemoteActionView = RemoteAction
export type RemoteCommandView = RemoteCommand
export type RemoteStateView = RemoteState

/** The remote state of `unit` at the unit's clock reading `now`; undefined once the unit has left the model. */
export function remoteStateFor (context: ModelContext, unit: UnitName, now: number): RemoteStateView | undefined {
  const reader = readerOf(context)
  const record = reader.unit(unit)
  if (record === undefined) return undefined
  const app = reader.application(record.application)
  if (app === undefined) return undefined
  const machine = reader.machine(record.machine)

  const relations: Record<string, RemoteRelationView> = {}
  for (const id of app.relations) {
    const relation = reader.relation(id)
    if (relation === undefined) continue
    const view = relationView(reader, relation, record)
    if (view !== undefined) relations[String(id)] = view
  }

  const storage: Record<StorageId, RemoteStorageView> = {}
  for (const [id, s] of Object.entries(record.storage)) {
    storage[id] = { id: s.id, name: s.name, kind: s.kind, life: s.life, attached: s.attached, location: s.location }
  }

  const actions: RemoteActionView[] = []
  for (const id of record.actions) {
    const action = reader.action(id)
    // Still the unit's until it completes: a running one too (the unit began it; after a
    // restart its local state fails it rather than running it twice).
    if (action !== undefined && (action.status === 'pending' || action.status === 'running')) actions.push({ id, name: action.name, parameters: action.parameters })
  }

  const view: RemoteStateView = {
    life: record.life,
    resolvedMode: record.resolvedMode,
    charm: { url: app.charm, modifiedVersion: app.charmModifiedVersion, forceUpgrade: app.forceUpgrade },
    configHash: app.configHash,
    trustHash: app.trustHash,
    addressesHash: addressesHashOf(machine?.addresses ?? []),
    // A dying unit resigns (juju-semantics §2.6) and may not extend: it never believes it leads.
    leader: record.life === 'alive' && believesLeader(reader.lease(app.name), unit, now),
    leaderSettingsVersion: app.leaderSettingsVersion,
    relations,
    storage,
    storageRequiredForInstall: [...record.storageRequired],
    actions,
    commands: record.commands.map(command => ({ id: command.id, commands: command.commands, ...(command.timeoutMs === undefined ? {} : { timeoutMs: command.timeoutMs }) })),
    subordinates: [...record.subordinates].sort(naturalCompare)
  }
  const consumed = secretsConsumedBy(context, unit)
  if (consumed !== undefined) view.secretsConsumed = consumed
  Object.assign(view, secretOwnerView(context, record, view.leader))
  if (record.principal !== null) {
    const principal = reader.unit(record.principal)
    view.principalApplication = principal?.application ?? applicationOf(record.principal)
  }
  return view
}

/**
 * What a unit agent answers `opened-ports`, `state-get` and the status Version column
 * from: the committed values (a running hook's own buffered changes are the agent's to
 * overlay). Copies, so a caller may change them. Undefined once the unit has left the model.
 */
export interface UnitHookDataView {
  readonly openedPorts: Array<Omit<OpenedPortRange, 'endpoints'> & { endpoints: string[] }>
  readonly charmState: Record<string, string>
  readonly workloadVersion: string
}

export function unitHookDataFor (context: ModelContext, unit: UnitName): UnitHookDataView | undefined {
  const reader = readerOf(context)
  const record = reader.unit(unit)
  if (record === undefined) return undefined
  return {
    openedPorts: record.openedPorts.map(range => ({ ...range, endpoints: [...range.endpoints] })),
    charmState: { ...record.charmState },
    workloadVersion: reader.application(record.application)?.workloadVersion ?? ''
  }
}

/** The secrets `unit` consumes, for the secret-changed resolver; undefined when none. */
function secretsConsumedBy (context: ModelContext, unit: UnitName): RemoteStateView['secretsConsumed'] {
  if (context.secrets === undefined || context.secrets.size === 0) return undefined
  const out: Record<string, { latest: number, tracked: number, label: string }> = {}
  let any = false
  forEachTableEntry(context.secrets, (id, secret) => {
    const consumer = secret.consumers[unit]
    if (consumer === undefined) return
    out[id] = { latest: secret.latestRevision, tracked: consumer.revision, label: consumer.label }
    any = true
  })
  return any ? out : undefined
}

function applicationOf (unit: UnitName): ApplicationName {
  return unit.slice(0, unit.lastIndexOf('/'))
}

function relationView (reader: ModelReader, relation: RelationRecord, unit: UnitRecord): RemoteRelationView | undefined {
  const own = relation.endpoints.find(ep => ep.application === unit.application)
  if (own === undefined) return undefined
  const remote = relation.peer ? own : relation.endpoints.find(ep => ep !== own)!
  // A subordinate relates only to its own principal, a principal only to its own subordinates.
  if (!relationVisibleTo(reader, relation, { name: unit.name, application: unit.application, machine: unit.machine })) return undefined
  const members: Record<UnitName, number> = {}
  for (const [member, info] of tableEntries(relation.members)) {
    if (!info.inScope || member === unit.name || applicationOf(member) !== remote.application) continue
    if (relation.containerScoped && info.machine !== unit.machine) continue
    members[member] = reader.settings(keys.unitSettings(relation.id, member))?.version ?? 0
  }
  return {
    id: relation.id,
    endpoint: own.name,
    remoteApplication: remote.application,
    life: relation.life,
    suspended: relation.suspended,
    peer: relation.peer,
    implicit: own.implicit,
    containerScoped: relation.containerScoped,
    members,
    applicationVersion: reader.settings(keys.applicationSettings(relation.id, remote.application))?.version ?? 0,
    selfInScope: tableGet(relation.members, unit.name)?.inScope === true
  }
}
