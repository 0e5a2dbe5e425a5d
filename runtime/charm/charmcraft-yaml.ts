import { InvalidCharmError } from './charm-error.ts'

/**
 * The unified `charmcraft.yaml` read as the three files Juju reads. Juju itself reads
 * only metadata.yaml, config.yaml and actions.yaml (juju/juju internal/charm/charmdir.go
 * ReadCharmDir: metadata.yaml is required); `charmcraft pack` writes those three into
 * the .charm from charmcraft.yaml when the project has none of its own
 * (canonical/charmcraft: charmcraft/metafiles, the metadata keys of
 * charmcraft/models/metadata.py CharmMetadataLegacy). cantrip does the same for a charm
 * directory or archive that has a charmcraft.yaml but lacks one of the three: the file is
 * derived here and added to the archive, so the unit's charm directory looks as a packed
 * charm's does. Pure: the caller parses the YAML (agent/charm/charm-yaml.ts).
 */

/** Top-level charmcraft.yaml keys that charmcraft copies into metadata.yaml. */
const metadataKeys = [
  'assumes', 'containers', 'description', 'devices', 'display-name', 'docs', 'extra-bindings', 'issues',
  'maintainers', 'name', 'peers', 'provides', 'requires', 'resources', 'source', 'storage', 'subordinate',
  'summary', 'terms', 'website'
] as const

export interface CharmcraftFiles {
  readonly metadata: Record<string, unknown>
  /** `config:` as config.yaml holds it (`options:`), when charmcraft.yaml has one. */
  readonly config?: unknown
  /** `actions:` as actions.yaml holds it, when charmcraft.yaml has one. */
  readonly actions?: unknown
}

export function charmcraftFiles (parsed: unknown, label: string): CharmcraftFiles {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidCharmError(label, 'charmcraft.yaml', undefined, 'a map', parsed === null ? 'an empty file' : Array.isArray(parsed) ? 'a list' : typeof parsed)
  }
  const top = parsed as Record<string, unknown>
  if (top.type !== undefined && top.type !== 'charm') {
    throw new InvalidCharmError(label, 'charmcraft.yaml', 'type', '"charm"', JSON.stringify(top.type))
  }
  const metadata: Record<string, unknown> = {}
  for (const key of metadataKeys) if (top[key] !== undefined) metadata[key] = top[key]
  // charmcraft's `title` is metadata.yaml's `display-name`.
  if (metadata['display-name'] === undefined && top.title !== undefined) metadata['display-name'] = top.title
  return {
    metadata,
    ...(top.config === undefined ? {} : { config: top.config }),
    ...(top.actions === undefined ? {} : { actions: top.actions })
  }
}
