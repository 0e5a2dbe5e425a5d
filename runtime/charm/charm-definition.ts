import { normaliseCharmSummary } from '../model/charm-summary.ts'
import type { CharmSummaryInput } from '../model/model-types.ts'
import { parseMinimumSizeMiB } from '../model/storage-directives.ts'
import { parseCharmActions, type CharmActionSpec } from './charm-actions.ts'
import { parseCharmConfig, type CharmConfigOptionSpec } from './charm-config.ts'
import { InvalidCharmError } from './charm-error.ts'
import { parseCharmMetadata, type CharmMetadata, type CharmRelationSpec } from './charm-metadata.ts'

/**
 * A charm's three description files, checked together: the full detail an agent needs
 * (schemas, storage ranges, descriptions) plus the summary the model stores, ready for
 * the `add-charm` command. Pure, so the simulator can build charms from plain values.
 */
export interface CharmDefinition {
  readonly metadata: CharmMetadata
  readonly config: Readonly<Record<string, CharmConfigOptionSpec>>
  readonly actions: Readonly<Record<string, CharmActionSpec>>
  /** In canonical form (sorted keys, long endpoint form); `normaliseCharmSummary` accepts it. */
  readonly summary: CharmSummaryInput
}

/** The parsed (not yet checked) contents of the files; undefined for a file that is absent. */
export interface CharmFiles {
  readonly metadata: unknown
  readonly config?: unknown
  readonly actions?: unknown
}

export interface CharmDefinitionContext {
  /** Names the charm in messages until metadata.yaml's name is known (the directory name, say). */
  readonly label: string
  readonly hasManifest?: boolean
}

/** Checks metadata.yaml, then config.yaml, then actions.yaml; throws InvalidCharmError naming the first problem. */
export function charmDefinition (files: CharmFiles, context: CharmDefinitionContext): CharmDefinition {
  const metadata = parseCharmMetadata(files.metadata, context.hasManifest === undefined ? { label: context.label } : { label: context.label, hasManifest: context.hasManifest })
  const config = files.config === undefined ? {} : parseCharmConfig(metadata.name, files.config)
  const actions = files.actions === undefined ? {} : parseCharmActions(metadata.name, files.actions)
  const summary = charmSummaryInput(metadata, config, actions)
  // The checks above are stricter than the model's; this only fires if they drift apart.
  const normalised = normaliseCharmSummary(summary)
  if (typeof normalised === 'string') throw new InvalidCharmError(metadata.name, 'metadata.yaml', undefined, 'a charm the model accepts', normalised)
  return { metadata, config, actions, summary }
}

function charmSummaryInput (
  metadata: CharmMetadata,
  config: Readonly<Record<string, CharmConfigOptionSpec>>,
  actions: Readonly<Record<string, CharmActionSpec>>
): CharmSummaryInput {
  const endpoints = (section: Readonly<Record<string, CharmRelationSpec>>): Record<string, { interface: string, scope: 'global' | 'container' }> =>
    mapSorted(section, relation => ({ interface: relation.interface, scope: relation.scope }))
  return {
    name: metadata.name,
    subordinate: metadata.subordinate,
    provides: endpoints(metadata.provides),
    requires: endpoints(metadata.requires),
    peers: endpoints(metadata.peers),
    config: mapSorted(config, option => ({ type: option.type, default: option.default })),
    storage: mapSorted(metadata.storage, store => ({
      type: store.type,
      location: store.location,
      countMin: store.countMin,
      countMax: store.countMax,
      minimumSizeMiB: store.minimumSize === null ? 0 : parseMinimumSizeMiB(store.minimumSize) ?? 0
    })),
    // The schema travels too: a controller checks an action's parameters before queueing it.
    actions: mapSorted(actions, action => ({ ...action.schema, description: action.description })),
    ...(Object.keys(metadata.resources).length === 0 ? {} : { resources: mapSorted(metadata.resources, resource => ({ type: resource.type, filename: resource.filename })) })
  }
}

function mapSorted<T, U> (record: Readonly<Record<string, T>>, map: (value: T) => U): Record<string, U> {
  const out: Record<string, U> = {}
  for (const key of Object.keys(record).sort()) out[key] = map(record[key]!)
  return out
}
