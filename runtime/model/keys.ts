import type { ApplicationName, MachineId, RelationId, UnitName } from '../ids.ts'

/**
 * Delta keys: the names of the things a watcher can be told changed. One key per
 * separately fetched piece, so a status report does not look like a config change.
 */
export const keys = {
  application: (name: ApplicationName): string => `application/${name}`,
  leadership: (application: ApplicationName): string => `leadership/${application}`,
  leaderSettings: (application: ApplicationName): string => `leader-settings/${application}`,
  charm: (url: string): string => `charm/${url}`,
  unit: (name: UnitName): string => `unit/${name}`,
  unitStatus: (name: UnitName): string => `unit/${name}/status`,
  /** The unit's opened ports: watched apart from the unit so a port change is not a unit change. */
  unitPorts: (name: UnitName): string => `unit/${name}/ports`,
  /** The unit's charm state (`state-get`): only the unit, its machine agent and admins see it. */
  unitState: (name: UnitName): string => `unit/${name}/state`,
  machine: (id: MachineId): string => `machine/${id}`,
  machineStatus: (id: MachineId): string => `machine/${id}/status`,
  relation: (id: RelationId): string => `relation/${id}`,
  unitSettings: (id: RelationId, unit: UnitName): string => `relation/${id}/settings/${unit}`,
  applicationSettings: (id: RelationId, application: ApplicationName): string => `relation/${id}/app-settings/${application}`,
  action: (id: string): string => `action/${id}`,
  controllerLease: (lease: string): string => `controller-lease/${lease}`,
  /** A secret's metadata: its owner's agents, its grantees' and its consumers' see it, never its content. */
  secret: (id: string): string => `secret/${id}`,
  /** The model's configuration: every agent of the model sees it. */
  modelConfig: (): string => 'model/config'
} as const

export type ParsedKey =
  | { kind: 'application', application: ApplicationName }
  | { kind: 'leadership', application: ApplicationName }
  | { kind: 'leader-settings', application: ApplicationName }
  | { kind: 'charm', url: string }
  | { kind: 'unit', unit: UnitName }
  | { kind: 'unit-status', unit: UnitName }
  | { kind: 'unit-ports', unit: UnitName }
  | { kind: 'unit-state', unit: UnitName }
  | { kind: 'machine', machine: MachineId }
  | { kind: 'machine-status', machine: MachineId }
  | { kind: 'relation', relationId: RelationId }
  | { kind: 'unit-settings', relationId: RelationId, unit: UnitName }
  | { kind: 'application-settings', relationId: RelationId, application: ApplicationName }
  | { kind: 'action', actionId: string }
  | { kind: 'controller-lease', lease: string }
  | { kind: 'model-config' }
  | { kind: 'secret', id: string }

const relationKey = /^relation\/(0|[1-9][0-9]*)(?:\/(settings|app-settings)\/(.+))?$/

/** The structure of a delta key; undefined for anything else. */
export function parseKey (key: string): ParsedKey | undefined {
  const slash = key.indexOf('/')
  if (slash <= 0) return undefined
  const head = key.slice(0, slash)
  const rest = key.slice(slash + 1)
  if (rest === '') return undefined
  switch (head) {
    case 'application': return { kind: 'application', application: rest }
    case 'leadership': return { kind: 'leadership', application: rest }
    case 'leader-settings': return { kind: 'leader-settings', application: rest }
    case 'charm': return { kind: 'charm', url: rest }
    case 'action': return { kind: 'action', actionId: rest }
    case 'controller-lease': return { kind: 'controller-lease', lease: rest }
    case 'model': return rest === 'config' ? { kind: 'model-config' } : undefined
    case 'secret': return { kind: 'secret', id: rest }
    case 'unit':
      // A unit name has exactly one slash (`web/0`), so a third segment is a sub-key.
      if (rest.endsWith('/status')) return { kind: 'unit-status', unit: rest.slice(0, -'/status'.length) }
      if (rest.endsWith('/ports')) return { kind: 'unit-ports', unit: rest.slice(0, -'/ports'.length) }
      if (rest.endsWith('/state')) return { kind: 'unit-state', unit: rest.slice(0, -'/state'.length) }
      return { kind: 'unit', unit: rest }
    case 'machine':
      return rest.endsWith('/status') ? { kind: 'machine-status', machine: rest.slice(0, -'/status'.length) } : { kind: 'machine', machine: rest }
    case 'relation': {
      const match = relationKey.exec(key)
      if (match === null) return undefined
      const relationId = Number(match[1])
      if (match[2] === undefined) return { kind: 'relation', relationId }
      return match[2] === 'settings'
        ? { kind: 'unit-settings', relationId, unit: match[3]! }
        : { kind: 'application-settings', relationId, application: match[3]! }
    }
    default: return undefined
  }
}
