import { nextRelationHook } from '../../relation/relation-state.ts'
import type { LocalRelation } from '../local-state.ts'
import type { Operation } from '../operation.ts'
import type { RemoteRelation } from '../remote-state.ts'
import type { ResolverInput } from '../resolver-types.ts'

/** Relations in the order the uniter visits them: non-peer before peer (3.4+), then by id. */
function visitOrder (a: { id: number, peer: boolean }, b: { id: number, peer: boolean }): number {
  if (a.peer !== b.peer) return a.peer ? 1 : -1
  return a.id - b.id
}

/**
 * `-relation-created` for every alive relation this unit has not seen yet (§1.4 item 7):
 * only once installed, only when idle, never while dying. Implicit relations (juju-info)
 * are entered without a hook.
 */
export function createdRelationsOp ({ local, remote }: ResolverInput): Operation | undefined {
  if (!local.installed || local.operation.kind !== 'continue' || remote.life !== 'alive') return undefined
  const unseen = Object.values(remote.relations)
    .filter(rel => rel.life === 'alive' && !(String(rel.id) in local.relations))
    .sort(visitOrder)
  const first = unseen[0]
  if (first === undefined) return undefined
  const hook = {
    kind: 'relation-created' as const,
    relationId: first.id,
    endpoint: first.endpoint,
    remoteApplication: first.remoteApplication,
    relationKind: { peer: first.peer, implicit: first.implicit, containerScoped: first.containerScoped }
  }
  return first.implicit ? { kind: 'skip-hook', hook, reason: 'implicit' } : { kind: 'run-hook', hook, source: 'resolver' }
}

/** The next joined/changed/departed/broken hook over all known relations (§3). */
export function relationsOp ({ unit, local, remote }: ResolverInput): Operation | undefined {
  const known: LocalRelation[] = Object.values(local.relations).sort(visitOrder)
  const view = { unit, unitDying: remote.life !== 'alive', leader: local.leader }
  for (const rel of known) {
    const remoteRel: RemoteRelation | undefined = remote.relations[String(rel.id)]
    const hook = nextRelationHook(rel, remoteRel, view)
    if (hook === undefined) continue
    return rel.implicit ? { kind: 'skip-hook', hook, reason: 'implicit' } : { kind: 'run-hook', hook, source: 'resolver' }
  }
  return undefined
}
