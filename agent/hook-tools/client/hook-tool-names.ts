/**
 * The tools a hook can run (juju-semantics §5.3, and the Juju 3.5 tools the ops framework
 * calls): each is a symlink to the one client binary in the unit's tools directory. Tools
 * cantrip does not serve (payloads, k8s, ...) are left out, so running one fails
 * with "command not found" rather than reaching the agent.
 */
export const hookToolNames = [
  'config-get',
  'relation-get',
  'relation-set',
  'relation-ids',
  'relation-list',
  'relation-model-get',
  'unit-get',
  'network-get',
  'open-port',
  'close-port',
  'opened-ports',
  'status-set',
  'status-get',
  'is-leader',
  'leader-get',
  'leader-set',
  'juju-log',
  'application-version-set',
  'action-get',
  'action-set',
  'action-fail',
  'action-log',
  'state-get',
  'state-set',
  'state-delete',
  'storage-get',
  'storage-list',
  'storage-add',
  'juju-reboot',
  'goal-state',
  'credential-get',
  'resource-get',
  'secret-add',
  'secret-get',
  'secret-set',
  'secret-remove',
  'secret-grant',
  'secret-revoke',
  'secret-ids',
  'secret-info-get'
] as const

export type HookToolName = typeof hookToolNames[number]
