import { assertNever } from '../../runtime/assert.ts'
import { inHookError, type LocalState } from './local-state.ts'
import type { Operation } from './operation.ts'
import { actionsOp, commandsOp } from './resolvers/actions-resolver.ts'
import { leadershipOp } from './resolvers/leadership-resolver.ts'
import { createdRelationsOp, relationsOp } from './resolvers/relations-resolver.ts'
import { secretsOp } from './resolvers/secrets-resolver.ts'
import { storageOp, storageRemovals } from './resolvers/storage-resolver.ts'
import type { Decision, RemoteSnapshot, Resolution, ResolverEffect, ResolverInput } from './resolver-types.ts'

/**
 * The uniter's resolver chain as one pure function (juju-semantics §1.4): given what the
 * unit has done and what the controllers want, the single next operation, plus the
 * requests (clear resolved, retry timer) that go with it. It calls nothing itself.
 */
export function nextOp (input: ResolverInput): Resolution {
  const effects: ResolverEffect[] = []
  const decision = decide(input, effects)
  return { decision, effects }
}

/** The agent status message of a uniter whose loop failed (Juju's reportAgentError). */
export const loopErrorMessage = 'resolver loop error'

function run (op: Operation): Decision {
  return { kind: 'run', op }
}

function charmModified (local: LocalState, remote: RemoteSnapshot): boolean {
  return local.charm !== undefined &&
    (local.charm.url !== remote.charm.url || local.charm.modifiedVersion !== remote.charm.modifiedVersion)
}

function remoteCharm (remote: RemoteSnapshot): { url: string, modifiedVersion: number } {
  return { url: remote.charm.url, modifiedVersion: remote.charm.modifiedVersion }
}

/** The resolved mode, treating one we already consumed as cleared until the controller says so. */
function resolvedMode (input: ResolverInput): RemoteSnapshot['resolvedMode'] {
  return input.memory.resolvedConsumed ? 'none' : input.remote.resolvedMode
}

function decide (input: ResolverInput, effects: ResolverEffect[]): Decision {
  const { local, memory, remote } = input
  // 1. Dead or removed: terminate (once subordinates are gone).
  if (remote.life === 'dead' || local.removed) return terminateOrWait(input)
  // 3. Reboot: one start for a unit that had started.
  if (memory.rebootPending && local.started && !local.stopped && local.operation.kind === 'continue' && remote.life === 'alive') {
    return run({ kind: 'run-hook', hook: { kind: 'start' }, source: 'resolver' })
  }
  // 4. An interrupted charm deploy resumes (or waits on a conflict).
  const deploying = local.operation.kind === 'install' || local.operation.kind === 'upgrade'
  if (deploying) return resumeDeploy(input, effects)
  // 5. A charm upgrade just committed: rebuild the loop.
  if (memory.restart) return { kind: 'restart' }
  // 6. Leaving hook error stops and resets the retry back-off.
  if (!inHookError(local) && (input.retryTimer.armed || input.retryTimer.attempt > 0)) effects.push({ type: 'stop-retry-timer' })
  selfDestruction(input, effects)
  storageRemovals(input, effects)
  // 7–11. created relations, leadership, secrets, actions, commands.
  for (const resolver of [createdRelationsOp, leadershipOp, secretsOp, actionsOp, commandsOp]) {
    const op = resolver(input)
    if (op !== undefined) return run(op)
  }
  // 12. Storage.
  const storage = storageOp(input)
  if (storage !== undefined) return 'waiting' in storage ? { kind: 'waiting', reason: storage.waiting } : run(storage)
  // 14. The current operation.
  const op = local.operation
  if (op.kind === 'run-hook') {
    const hook = op.hook
    if (hook === undefined) return { kind: 'waiting', reason: 'hook operation without hook info' }
    switch (op.step) {
      case 'pending': return hookError(input, effects)
      case 'queued': return hook.kind === 'install' ? idleSequence(input) : run({ kind: 'run-hook', hook, source: 'queued' })
      case 'done': return run({ kind: 'skip-hook', hook, reason: 'done' })
      default: return assertNever(op.step, 'uniter operation step')
    }
  }
  if (op.kind === 'run-action') return { kind: 'none' }
  // 15. Idle.
  return idleSequence(input)
}

function terminateOrWait ({ remote }: ResolverInput): Decision {
  if (remote.subordinates.length > 0) return { kind: 'waiting', reason: `waiting for subordinates ${remote.subordinates.join(', ')} to be removed` }
  return { kind: 'terminate' }
}

function resumeDeploy (input: ResolverInput, effects: ResolverEffect[]): Decision {
  const { local, memory, remote } = input
  const op = local.operation
  const charm = op.charm ?? remoteCharm(remote)
  const mode = op.kind === 'install' ? 'install' : 'upgrade'
  // Juju's uniter exits on a download error ("resolver loop error") and is restarted after a delay.
  if (memory.loopFailed) {
    effects.push({ type: 'start-restart-timer' })
    return { kind: 'waiting', reason: loopErrorMessage }
  }
  if (!memory.conflicted) return run({ kind: 'deploy', mode, charm })
  if (resolvedMode(input) !== 'none') {
    effects.push({ type: 'clear-resolved' })
    return run({ kind: 'deploy', mode, charm, resolvedRetry: true })
  }
  if (remote.charm.forceUpgrade && (charm.url !== remote.charm.url || charm.modifiedVersion !== remote.charm.modifiedVersion)) {
    return run({ kind: 'deploy', mode, charm: remoteCharm(remote) })
  }
  return { kind: 'waiting', reason: 'upgrade failed' }
}

/** §6: report the error; retry on the back-off timer, on `resolved`, or skip on `--no-retry`. */
function hookError (input: ResolverInput, effects: ResolverEffect[]): Decision {
  const { local, remote, memory } = input
  const hook = local.operation.hook!
  if (remote.charm.forceUpgrade && charmModified(local, remote)) {
    return run({ kind: 'deploy', mode: 'upgrade', charm: remoteCharm(remote) })
  }
  const mode = resolvedMode(input)
  switch (mode) {
    case 'none':
      if (remote.retryHookVersion > memory.retryHookVersion) return run({ kind: 'run-hook', hook, source: 'retry-timer' })
      if (!input.retryTimer.armed && input.automaticallyRetryHooks) effects.push({ type: 'start-retry-timer' })
      return { kind: 'hook-error', hook }
    case 'retry-hooks':
      effects.push({ type: 'stop-retry-timer' }, { type: 'clear-resolved' })
      return run({ kind: 'run-hook', hook, source: 'resolved-retry' })
    case 'no-hooks':
      effects.push({ type: 'stop-retry-timer' }, { type: 'clear-resolved' })
      return run({ kind: 'skip-hook', hook, reason: 'resolved-no-hooks' })
    default:
      return assertNever(mode, 'resolved mode')
  }
}

/** §1.4 item 15: teardown when dying, else install, upgrade, config, relations, update-status. */
function idleSequence (input: ResolverInput): Decision {
  const { local, memory, remote } = input
  if (remote.life !== 'alive') {
    const relationOp = relationsOp(input)
    if (relationOp !== undefined) return run(relationOp)
    if (local.started && !local.stopped) return run({ kind: 'run-hook', hook: { kind: 'stop' }, source: 'resolver' })
    if (local.installed && !local.removed) return run({ kind: 'run-hook', hook: { kind: 'remove' }, source: 'resolver' })
    return terminateOrWait(input)
  }
  if (!local.installed) {
    if (local.charm === undefined) return run({ kind: 'deploy', mode: 'install', charm: remoteCharm(remote) })
    return run({ kind: 'run-hook', hook: { kind: 'install' }, source: 'resolver' })
  }
  if (charmModified(local, remote)) return run({ kind: 'deploy', mode: 'upgrade', charm: remoteCharm(remote) })
  if (local.configHash !== remote.configHash || local.trustHash !== remote.trustHash || local.addressesHash !== remote.addressesHash) {
    return run({ kind: 'run-hook', hook: { kind: 'config-changed' }, source: 'resolver' })
  }
  const relationOp = relationsOp(input)
  if (relationOp !== undefined) return run(relationOp)
  if (memory.updateStatusVersion !== remote.updateStatusVersion) {
    return run({ kind: 'run-hook', hook: { kind: 'update-status' }, source: 'resolver' })
  }
  return { kind: 'none' }
}

/** §2.6: a subordinate with no alive container-scoped relation to its principal asks to be destroyed. */
function selfDestruction ({ remote }: ResolverInput, effects: ResolverEffect[]): void {
  const principal = remote.principalApplication
  if (principal === undefined || remote.life !== 'alive') return
  const attached = Object.values(remote.relations).some(rel =>
    rel.containerScoped && rel.remoteApplication === principal && rel.life === 'alive')
  if (!attached) effects.push({ type: 'destroy-unit' })
}
