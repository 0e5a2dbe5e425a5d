/**
 * Every hook tool cantrip serves, by name: the classic, bash-relevant catalogue of
 * juju-semantics §5.3. goal-state, credential-get, resource-get, secret-*, payload-*,
 * add-metric, relation-model-get and k8s-* are out of scope.
 */
import { actionFail, actionGet, actionLog, actionSet } from './action.ts'
import { applicationVersionSet } from './application-version-set.ts'
import { configGet } from './config-get.ts'
import type { HookTool } from './hook-tool.ts'
import { jujuLog } from './juju-log.ts'
import { jujuReboot } from './juju-reboot.ts'
import { isLeader, leaderGet, leaderSet } from './leader.ts'
import { networkGet } from './network-get.ts'
import { closePort, openedPorts, openPort } from './ports.ts'
import { relationGet } from './relation-get.ts'
import { relationIds } from './relation-ids.ts'
import { relationList } from './relation-list.ts'
import { relationSet } from './relation-set.ts'
import { stateDelete, stateGet, stateSet } from './state.ts'
import { statusGet, statusSet } from './status.ts'
import { storageAdd, storageGet, storageList } from './storage.ts'
import { unitGet } from './unit-get.ts'

const all: readonly HookTool[] = [
  actionFail, actionGet, actionLog, actionSet,
  applicationVersionSet, closePort, configGet, isLeader, jujuLog, jujuReboot,
  leaderGet, leaderSet, networkGet, openPort, openedPorts,
  relationGet, relationIds, relationList, relationSet,
  stateDelete, stateGet, stateSet, statusGet, statusSet, storageAdd, storageGet, storageList, unitGet
]

export const hookTools: ReadonlyMap<string, HookTool> = new Map(all.map(tool => [tool.name, tool]))

/** The names the tools directory should hold symlinks for, sorted. */
export const hookToolNames: readonly string[] = [...hookTools.keys()].sort()
