import type { Operation } from '../operation.ts'
import type { ResolverInput } from '../resolver-types.ts'

/**
 * Secrets (§1.4 item 9), after Juju's internal/worker/uniter/secrets/resolver.go: only
 * once installed, while alive and idle. A consumed secret whose latest revision is newer
 * than both the revision the unit tracks and the last one a committed `secret-changed`
 * told it of runs `secret-changed` (secrets in id order, one hook at a time). A first
 * read tracks the latest revision, so reading a secret never fires the hook by itself.
 */
export function secretsOp ({ local, remote }: ResolverInput): Operation | undefined {
  if (!local.installed || remote.life !== 'alive' || local.operation.kind !== 'continue') return undefined
  const consumed = remote.secretsConsumed
  if (consumed === undefined) return undefined
  for (const id of Object.keys(consumed).sort()) {
    const info = consumed[id]!
    const told = Math.max(local.secretRevisions?.[id] ?? 0, info.tracked)
    if (info.latest > told) {
      return {
        kind: 'run-hook',
        hook: { kind: 'secret-changed', secretId: id, secretRevision: info.latest, ...(info.label === '' ? {} : { secretLabel: info.label }) },
        source: 'resolver'
      }
    }
  }
  return undefined
}
