import { localRelationFromHook } from '../relation/relation-state.ts'
import type { HookInfo } from './hook-info.ts'
import type { LocalState } from './local-state.ts'

/**
 * The unit's relations as a hook's context sees them: the relations the uniter tracks,
 * and, while `<endpoint>-relation-created` runs, the relation being created with no
 * members yet.
 *
 * Juju's created-relations resolver joins the relation (its relationer enters scope and
 * the state tracker starts tracking it) before it runs `-relation-created`, and the hook
 * context is built from everything the tracker knows (getContextRelations in
 * internal/worker/uniter/runner/context/contextfactory.go; the factory refuses a relation
 * hook whose relation it does not know). So in `-created` `relation-ids` lists the
 * relation, `relation-list -r <id>` prints nothing, and relation-get/-set work on it.
 * cantrip records the relation in local state only when `-created` commits, so the
 * context adds it here for the run.
 */
export function hookContextLocal (local: LocalState, hook: HookInfo): LocalState {
  if (hook.kind !== 'relation-created' || hook.relationId === undefined) return local
  const key = String(hook.relationId)
  if (Object.hasOwn(local.relations, key)) return local
  return { ...local, relations: { ...local.relations, [key]: localRelationFromHook(hook) } }
}
