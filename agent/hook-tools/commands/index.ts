/**
 * Every hook tool cantrip serves, by name: the classic catalogue of juju-semantics §5.3
 * and the tools Juju 3.5 has that the ops framework calls (goal-state, credential-get,
 * resource-get, relation-model-get, the secret-* tools). payload-*, add-metric and k8s-*
 * are not served.
 */
import { actionFail, actionGet, actionLog, actionSet } from './action.ts'
import { applicationVersionSet } from './application-version-set.ts'
import { configGet } from './config-get.ts'
import { credentialGet } from './credential-get.ts'
import { goalState } from './goal-state.ts'
import type { HookTool } from './hook-tool.ts'
import { jujuLog } from './juju-log.ts'
import { jujuReboot } from './juju-reboot.ts'
import { isLeader, leaderGet, leaderSet } from './leader.ts'
import { networkGet } from './network-get.ts'
import { closePort, openedPorts, openPort } from './ports.ts'
import { relationGet } from './relation-get.ts'
import { relationIds } from './relation-ids.ts'
import { relationList } from './relation-list.ts'
import { relationModelGet } from './relation-model-get.ts'
import { relationSet } from './relation-set.ts'
import { resourceGet } from './resource-get.ts'
import { secretAdd, secretGet, secretGrant, secretIds, secretInfoGet, secretRemove, secretRevoke, secretSet } from './secret.ts'
import { stateDelete, stateGet, stateSet } from './state.ts'
import { statusGet, statusSet } from './status.ts'
import { storageAdd, storageGet, storageList } from './storage.ts'
import { unitGet } from './unit-get.ts'

const all: readonly HookTool[] = [
  actionFail, actionGet, actionLog, actionSet,
  applicationVersionSet, closePort, configGet, credentialGet, goalState, isLeader, jujuLog, jujuReboot,
  leaderGet, leaderSet, networkGet, openPort, openedPorts,
  relationGet, relationIds, relationList, relationModelGet, relationSet, resourceGet,
  secretAdd, secretGet, secretGrant, secretIds, secretInfoGet, secretRemove, secretRevoke, secretSet,
  stateDelete, stateGet, stateSet, statusGet, statusSet, storageAdd, storageGet, storageList, unitGet
]

export const hookTools: ReadonlyMap<string, HookTool> = new Map(all.map(tool => [tool.name, tool]))

/** The names the tools directory should hold symlinks for, sorted. */
export const hookToolNames: readonly string[] = [...hookTools.keys()].sort()
