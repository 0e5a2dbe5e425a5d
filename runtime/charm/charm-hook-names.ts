import type { CharmSummaryInput } from '../model/model-types.ts'

/**
 * Every hook name Juju knows for a charm (Juju's internal/charm meta.go `Meta.Hooks` over
 * hooks/hooks.go): the unit hooks, the secret hooks, five relation hooks per endpoint
 * and two storage hooks per storage. Packing a charm directory makes exactly these files
 * in `hooks/` executable.
 */
const unitHooks = [
  'install', 'start', 'config-changed', 'upgrade-charm', 'stop', 'remove',
  'leader-elected', 'leader-deposed', 'leader-settings-changed', 'update-status'
] as const
const secretHooks = ['secret-changed', 'secret-expired', 'secret-remove', 'secret-rotate'] as const
const relationHookKinds = ['relation-created', 'relation-joined', 'relation-changed', 'relation-departed', 'relation-broken'] as const
const storageHookKinds = ['storage-attached', 'storage-detaching'] as const

export function charmHookNames (summary: Pick<CharmSummaryInput, 'provides' | 'requires' | 'peers' | 'storage'>): ReadonlySet<string> {
  const names = new Set<string>([...unitHooks, ...secretHooks])
  const endpoints = [summary.provides, summary.requires, summary.peers].flatMap(group => Object.keys(group ?? {}))
  for (const endpoint of endpoints) for (const kind of relationHookKinds) names.add(`${endpoint}-${kind}`)
  for (const storage of Object.keys(summary.storage ?? {})) for (const kind of storageHookKinds) names.add(`${storage}-${kind}`)
  return names
}
