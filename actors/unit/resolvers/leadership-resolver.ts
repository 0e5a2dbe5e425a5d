import type { Operation } from '../operation.ts'
import type { ResolverInput } from '../resolver-types.ts'

/**
 * Leadership (§1.4 item 8, §2.9): accept only when idle and alive; resign (no hook)
 * whenever the lease is gone or the unit is dying; non-leaders run
 * leader-settings-changed when idle and the settings version moved. The leader never
 * records a settings version, so it runs leader-settings-changed right after losing
 * leadership, as Juju 3.x does.
 */
export function leadershipOp ({ local, memory, remote }: ResolverInput): Operation | undefined {
  if (!local.installed) return undefined
  const idle = local.operation.kind === 'continue'
  const dying = remote.life !== 'alive'
  if (remote.leader && !local.leader && !dying && idle) return { kind: 'accept-leadership' }
  if (local.leader && (!remote.leader || dying)) return { kind: 'resign-leadership' }
  if (idle && !local.leader && !dying && memory.leaderSettingsVersion !== remote.leaderSettingsVersion) {
    return { kind: 'run-hook', hook: { kind: 'leader-settings-changed' }, source: 'resolver' }
  }
  return undefined
}
