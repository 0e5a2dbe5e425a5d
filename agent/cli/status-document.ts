/**
 * `cantrip status` as data: the whole model (with the machines' presence) turned into
 * the document `juju status --format yaml|json` prints, with Juju's keys
 * (juju-semantics.md §8), and the tabular rendering of it. Pure: the command fetches the
 * model and prints what these return.
 *
 * Display rules from Juju: a unit whose hook failed shows workload `error` with the
 * hook's message and agent `idle`; a unit past install on a machine whose agent is not
 * heard from shows workload `unknown` "agent lost, see 'cantrip show-status-log <unit>'"
 * and agent `lost` (runtime/model/status-display.ts); an application's status is what its leader set, else the most
 * severe of its units' (error > blocked > maintenance > waiting > active > terminated >
 * unknown); the leader unit is starred and subordinates are listed under their principal.
 */
import type { FullModel } from './connection.ts'
import { modelAgentVersion } from '../../runtime/model/agent-binaries.ts'
import { cantripVersion } from '../version.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { MachineRecord, ModelContext, UnitRecord } from '../../runtime/model/model-types.ts'
import { displayedMachineAgent, displayedUnit } from '../../runtime/model/status-display.ts'
import { tableValues } from '../../runtime/model/table.ts'

/** Juju 3.6's formattedBase: the OS name and its channel (`ubuntu`, `22.04`). */
export interface StatusBase { name: string, channel: string }

/** Juju's statusInfoContents; `life` only while the entity is dying or dead (processLife: alive is omitted). */
export interface StatusValue { current: string, message?: string, since?: string, version?: string, life?: string }

export interface UnitStatus {
  'workload-status': StatusValue
  'juju-status': StatusValue
  leader?: true
  machine: string
  'open-ports'?: string[]
  'public-address'?: string
  subordinates?: Record<string, UnitStatus>
}

export interface StatusDocument {
  model: { name: string, type: string, controller: string, cloud: string, region: string, version: string, 'model-status': StatusValue, sla: string }
  machines: Record<string, {
    'juju-status': StatusValue
    /** The host's name as the machine's agent reported it (Juju 3's machineStatus.Hostname). */
    hostname?: string
    'dns-name'?: string
    'ip-addresses'?: string[]
    'instance-id': string
    'machine-status': StatusValue
    /** Juju 3's `base: {name, channel}` (`ubuntu@22.04` in the table), as the machine's agent reported its host. */
    base?: StatusBase
    /** Set when the agent runs another version than the model's, or its last upgrade failed: why. */
    'agent-version-message'?: string
    constraints?: string
  }>
  applications: Record<string, {
    charm: string
    base?: StatusBase
    'charm-origin': string
    'charm-name': string
    'charm-rev': number
    exposed: boolean
    life?: string
    'application-status': StatusValue
    relations?: Record<string, string[]>
    'subordinate-to'?: string[]
    units?: Record<string, UnitStatus>
    version?: string
  }>
  controller: { timestamp: string }
}

const severity = ['error', 'blocked', 'maintenance', 'waiting', 'active', 'terminated', 'unknown']

/** Juju's processLife: `dying` or `dead` shown, `alive` (the usual state) left out. */
function lifeOf (life: string): { life?: string } {
  return life === 'alive' ? {} : { life }
}

/** Flags a machine whose agent is not at the model's version, with why when an upgrade failed. */
function agentVersionNote (machine: MachineRecord, modelVersion: string): { 'agent-version-message'?: string } {
  if (machine.agentUpgradeError !== undefined) return { 'agent-version-message': machine.agentUpgradeError }
  if (machine.agentVersion === undefined || machine.agentVersion === modelVersion) return {}
  return { 'agent-version-message': `agent ${machine.agentVersion}, model ${modelVersion}` }
}

/** `ubuntu@22.04` as Juju's `{name: ubuntu, channel: "22.04"}`; nothing while unknown. */
function baseOf (base: string | undefined): { base?: StatusBase } {
  const at = base?.indexOf('@') ?? -1
  return base === undefined || at < 0 ? {} : { base: { name: base.slice(0, at), channel: base.slice(at + 1) } }
}

function since (ms: number | null): string | undefined {
  return ms === null ? undefined : new Date(ms).toISOString()
}

function value (current: string, message: string, at: number | null): StatusValue {
  const out: StatusValue = { current }
  if (message !== '') out.message = message
  const when = since(at)
  if (when !== undefined) out.since = when
  return out
}

function charmRevision (url: string): number {
  const match = /-(\d+)$/.exec(url)
  return match === null ? 0 : Number(match[1])
}

function ports (unit: UnitRecord): string[] {
  return unit.openedPorts.map(p => p.from === undefined ? p.protocol : p.to === undefined || p.to === p.from ? `${p.from}/${p.protocol}` : `${p.from}-${p.to}/${p.protocol}`)
}

export function statusDocument (full: FullModel, controller: string, now: number): StatusDocument {
  const model: ModelContext = full.model
  const reader = readerOf(model)
  // The model's agent-version; a model that never had one runs the controllers' (this client's as far as it knows).
  const modelVersion = modelAgentVersion(model) ?? cantripVersion
  const lost = (machine: string): boolean => full.presence[machine]?.status === 'lost'
  const machineAddress = (id: string): string | undefined => reader.machine(id)?.addresses[0]

  const unitStatus = (unit: UnitRecord): UnitStatus => {
    const shown = displayedUnit(unit, lost(unit.machine))
    // In formatted.go's unitStatus order: leader before machine.
    const out: UnitStatus = {
      'workload-status': value(shown.workload.status, shown.workload.message, shown.workload.since),
      'juju-status': { ...value(shown.agent.status, shown.agent.message, shown.agent.since), ...lifeOf(unit.life) },
      ...(reader.lease(unit.application)?.holder === unit.name ? { leader: true as const } : {}),
      machine: unit.machine
    }
    const open = ports(unit)
    if (open.length > 0) out['open-ports'] = open
    const address = machineAddress(unit.machine)
    if (address !== undefined) out['public-address'] = address
    const subordinates = unit.subordinates.map(name => reader.unit(name)).filter((u): u is UnitRecord => u !== undefined)
    if (subordinates.length > 0) out.subordinates = Object.fromEntries(subordinates.map(sub => [sub.name, unitStatus(sub)]))
    return out
  }

  const machines: StatusDocument['machines'] = {}
  for (const machine of tableValues(model.machines) as MachineRecord[]) {
    const agent = displayedMachineAgent(machine, lost(machine.id))
    machines[machine.id] = {
      'juju-status': { ...value(agent.status, agent.message, agent.since), ...(machine.agentVersion === undefined ? {} : { version: machine.agentVersion }), ...lifeOf(machine.life) },
      ...(machine.hostname === undefined ? {} : { hostname: machine.hostname }),
      ...agentVersionNote(machine, modelVersion),
      ...(machine.addresses[0] === undefined ? {} : { 'dns-name': machine.addresses[0], 'ip-addresses': [...machine.addresses] }),
      'instance-id': machine.instanceId ?? 'pending',
      'machine-status': value(machine.instance.status, machine.instance.message, machine.instance.since),
      ...baseOf(machine.base),
      ...(Object.keys(machine.constraints).length === 0 ? {} : { constraints: Object.entries(machine.constraints).map(([k, v]) => `${k}=${v}`).join(' ') })
    }
  }

  const applications: StatusDocument['applications'] = {}
  for (const app of tableValues(model.applications)) {
    const charm = reader.charm(app.charm)
    const principals = app.units.map(name => reader.unit(name)).filter((u): u is UnitRecord => u !== undefined)
    const shown = principals.map(unit => displayedUnit(unit, lost(unit.machine)).workload)
    const derived = shown.sort((a, b) => severity.indexOf(a.status) - severity.indexOf(b.status))[0]
    const status = app.status ?? derived ?? { status: 'unknown', message: '', since: null, data: null }
    const relations: Record<string, string[]> = {}
    const principalsOf = new Set<string>()
    for (const id of app.relations) {
      const relation = reader.relation(id)
      if (relation === undefined) continue
      const mine = relation.endpoints.find(e => e.application === app.name)
      if (mine === undefined) continue
      const others = relation.peer ? [app.name] : relation.endpoints.filter(e => e.application !== app.name).map(e => e.application)
      relations[mine.name] = [...new Set([...(relations[mine.name] ?? []), ...others])].sort()
      // Juju's subordinate-to: the principals a subordinate joins through a container-scoped relation.
      if (app.subordinate && !relation.peer) for (const other of others) if (reader.application(other)?.subordinate === false) principalsOf.add(other)
    }
    applications[app.name] = {
      charm: charm?.metadata.name ?? app.charm,
      // Juju's is the charm origin's base; here every unit runs on its machine's host, so the first one's.
      ...baseOf(principals.map(u => reader.machine(u.machine)?.base).find(b => b !== undefined)),
      'charm-origin': 'local',
      'charm-name': charm?.metadata.name ?? app.charm,
      'charm-rev': charmRevision(app.charm),
      exposed: app.exposed,
      ...lifeOf(app.life),
      'application-status': value(status.status, status.message, status.since),
      ...(Object.keys(relations).length === 0 ? {} : { relations }),
      ...(principalsOf.size === 0 ? {} : { 'subordinate-to': [...principalsOf].sort(naturalCompare) }),
      // Subordinate applications list their units under their principals only, as Juju does.
      ...(app.subordinate || principals.length === 0 ? {} : { units: Object.fromEntries(principals.filter(u => u.principal === null).map(u => [u.name, unitStatus(u)])) }),
      ...(app.workloadVersion === '' ? {} : { version: app.workloadVersion })
    }
  }

  return {
    // The local provider's cloud is Juju's `localhost` (region `localhost`), as `controllers`
    // shows it; no model has an SLA, which Juju 3 shows as `unsupported`.
    model: { name: full.modelName ?? 'default', type: 'iaas', controller, cloud: 'localhost', region: 'localhost', version: modelVersion, 'model-status': { current: 'available' }, sla: 'unsupported' },
    machines: sortKeys(machines),
    applications: sortKeys(applications),
    controller: { timestamp: new Date(now).toISOString().slice(11, 19) + 'Z' }
  }
}

/**
 * One collator for every comparison: `localeCompare` with options builds a new one per
 * call, which a status of a few dozen rows made a visible share of the command's CPU.
 */
let naturalCollator: Intl.Collator | undefined

/** Natural order: `kv/2` before `kv/10`, machine `2` before `10`. */
export function naturalCompare (a: string, b: string): number {
  naturalCollator ??= new Intl.Collator('en', { numeric: true })
  return naturalCollator.compare(a, b)
}

function sortKeys<T> (record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => naturalCompare(a, b)))
}
