import { assert } from '../../runtime/assert.ts'
import { stringCompare, type UnitName } from '../../runtime/ids.ts'
import { limits } from '../../runtime/limits.ts'
import type { HookInfo } from '../unit/hook-info.ts'
import type { LocalRelation } from '../unit/local-state.ts'
import type { RemoteRelation } from '../unit/remote-state.ts'

/**
 * One relation as one unit sees it: which relation hook is due next, which hooks are
 * legal, and what committing each one records (juju-semantics §3). Pure functions shared
 * by the unit's resolver and the relation actor.
 */

export interface RelationView {
  /** This unit's name, the departee when it is itself dying. */
  unit: UnitName
  unitDying: boolean
  /** This unit leads its application (peer app-bag writes of its own are not announced). */
  leader: boolean
}

export function newLocalRelation (remote: RemoteRelation): LocalRelation {
  return {
    id: remote.id,
    endpoint: remote.endpoint,
    remoteApplication: remote.remoteApplication,
    peer: remote.peer,
    implicit: remote.implicit,
    containerScoped: remote.containerScoped,
    members: {},
    applicationMembers: {}
  }
}

/** Local state for a relation known only from its `-created` hook (the relation has since gone). */
export function localRelationFromHook (hook: HookInfo): LocalRelation {
  assert(hook.relationId !== undefined && hook.endpoint !== undefined && hook.remoteApplication !== undefined && hook.relationKind !== undefined,
    `relation hook "${hook.kind}" lacks the relation it belongs to`)
  return {
    id: hook.relationId,
    endpoint: hook.endpoint,
    remoteApplication: hook.remoteApplication,
    ...hook.relationKind,
    members: {},
    applicationMembers: {}
  }
}

function relationHook (local: LocalRelation, kind: HookInfo['kind'], extra: Partial<HookInfo>): HookInfo {
  return { kind, relationId: local.id, endpoint: local.endpoint, remoteApplication: local.remoteApplication, ...extra }
}

/** True when, from this unit's point of view, the relation is going away. */
export function relationBroken (remote: RemoteRelation | undefined, view: RelationView): boolean {
  return view.unitDying || remote === undefined || remote.life !== 'alive' || remote.suspended
}

/** The next hook this relation needs, or undefined when it is up to date (§3 steps 1–7). */
export function nextRelationHook (local: LocalRelation, remote: RemoteRelation | undefined, view: RelationView): HookInfo | undefined {
  if (local.changedPending !== undefined) {
    const unit = local.changedPending
    const version = remote?.members[unit] ?? local.members[unit] ?? 0
    return relationHook(local, 'relation-changed', { remoteUnit: unit, changeVersion: version })
  }
  const broken = relationBroken(remote, view)
  const remoteMembers: Readonly<Record<UnitName, number>> = broken || remote === undefined ? {} : remote.members
  for (const unit of Object.keys(local.members).sort(stringCompare)) {
    if (!(unit in remoteMembers)) {
      return relationHook(local, 'relation-departed', { remoteUnit: unit, departee: view.unitDying ? view.unit : unit })
    }
  }
  if (broken) return local.peer ? undefined : relationHook(local, 'relation-broken', {})
  assert(remote !== undefined, `relation ${local.id}: remote state missing while not broken`)
  const seenAppVersion = local.applicationMembers[local.remoteApplication] ?? 0
  const ownPeerBag = local.peer && view.leader
  if (remote.applicationVersion !== seenAppVersion && remote.applicationVersion !== 0 && !ownPeerBag) {
    return relationHook(local, 'relation-changed', { changeVersion: remote.applicationVersion })
  }
  const remoteUnits = Object.keys(remoteMembers).sort(stringCompare)
  for (const unit of remoteUnits) {
    if (!(unit in local.members)) {
      return relationHook(local, 'relation-joined', { remoteUnit: unit, changeVersion: remoteMembers[unit]! })
    }
  }
  for (const unit of remoteUnits) {
    if (remoteMembers[unit] !== local.members[unit]) {
      return relationHook(local, 'relation-changed', { remoteUnit: unit, changeVersion: remoteMembers[unit]! })
    }
  }
  return undefined
}

/** Why a relation hook may not run against this state, or undefined when it may (§3 "Validation refuses"). */
export function relationHookRefusal (local: LocalRelation, hook: HookInfo): string | undefined {
  const unit = hook.remoteUnit
  if (local.changedPending !== undefined && !(hook.kind === 'relation-changed' && unit === local.changedPending)) {
    return `relation ${local.id}: "${hook.kind}" while "-changed ${local.changedPending}" is pending`
  }
  switch (hook.kind) {
    case 'relation-created':
      return undefined
    case 'relation-joined':
      if (unit === undefined) return `relation ${local.id}: joined without a remote unit`
      return unit in local.members ? `relation ${local.id}: "${unit}" already joined` : undefined
    case 'relation-changed':
      if (unit === undefined) return undefined
      return unit in local.members ? undefined : `relation ${local.id}: changed for non-member "${unit}"`
    case 'relation-departed':
      if (unit === undefined) return `relation ${local.id}: departed without a remote unit`
      return unit in local.members ? undefined : `relation ${local.id}: departed for non-member "${unit}"`
    case 'relation-broken':
      return Object.keys(local.members).length > 0 ? `relation ${local.id}: broken while members remain` : undefined
    default:
      return `relation ${local.id}: "${hook.kind}" is not a relation hook`
  }
}

/**
 * The relation state after a relation hook committed. Returns undefined when the relation
 * state is deleted (broken). Idempotent, because a crash between commit and the next
 * persisted step makes the uniter commit the same hook again.
 */
export function commitRelationHook (local: LocalRelation, hook: HookInfo): LocalRelation | undefined {
  const unit = hook.remoteUnit
  const version = hook.changeVersion ?? 0
  switch (hook.kind) {
    case 'relation-created':
      return local
    case 'relation-joined': {
      assert(unit !== undefined, `relation ${local.id}: joined without a remote unit`)
      assert(Object.keys(local.members).length < limits.relationMembersMax || unit in local.members,
        `relation ${local.id}: more than ${limits.relationMembersMax} members`)
      return { ...local, members: { ...local.members, [unit]: version }, changedPending: unit }
    }
    case 'relation-changed': {
      if (unit === undefined) {
        return { ...local, applicationMembers: { ...local.applicationMembers, [local.remoteApplication]: version } }
      }
      const { changedPending: _cleared, ...rest } = local
      return { ...rest, members: { ...local.members, [unit]: version } }
    }
    case 'relation-departed': {
      assert(unit !== undefined, `relation ${local.id}: departed without a remote unit`)
      const members = { ...local.members }
      delete members[unit]
      return { ...local, members }
    }
    case 'relation-broken':
      return undefined
    default:
      throw new Error(`relation ${local.id}: cannot commit "${hook.kind}"`)
  }
}
