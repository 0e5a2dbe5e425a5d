import type { ConfigOptionType, ConfigValue } from './model-types.ts'

/**
 * What the model keeps of a charm (juju-semantics.md §6): its endpoints, config options,
 * storage, resources and the summary the controllers check commands against; and a
 * charm's record in the model, by URL and content hash. Plain data, as model-types.ts.
 */

export interface CharmEndpoint {
  readonly interface: string
  readonly scope: 'global' | 'container'
}

export interface CharmConfigOption {
  readonly type: ConfigOptionType
  /** null: no default; the option is unset until the user sets it. */
  readonly default: ConfigValue | null
}

export interface CharmStorage {
  readonly type: 'filesystem' | 'block'
  /** Filesystem mount point from metadata; null for the default location. */
  readonly location: string | null
  /** `multiple.range`: instances per unit, at least `countMin`; `countMax` -1 when unbounded. A singleton is 1..1. */
  readonly countMin: number
  readonly countMax: number
  /** `minimum-size` in MiB; 0 when the charm names none. */
  readonly minimumSizeMiB: number
}

/** A directive as a command carries it: either part may be left to the charm's default. */
export interface StorageDirectiveInput {
  readonly count?: number
  readonly sizeMiB?: number
}

/** A storage directive (`--storage data=2,10G`) as the model keeps it per application. */
export interface StorageDirective {
  readonly count: number
  readonly sizeMiB: number
}

/** What the model needs of a charm's metadata.yaml / config.yaml / actions.yaml. */
export interface CharmSummary {
  readonly name: string
  readonly subordinate: boolean
  readonly provides: Readonly<Record<string, CharmEndpoint>>
  readonly requires: Readonly<Record<string, CharmEndpoint>>
  readonly peers: Readonly<Record<string, CharmEndpoint>>
  readonly config: Readonly<Record<string, CharmConfigOption>>
  readonly storage: Readonly<Record<string, CharmStorage>>
  /** `schema`: the action's JSON-Schema, so a controller checks parameters before queueing (absent in older records). */
  readonly actions: Readonly<Record<string, { readonly description: string, readonly schema?: Readonly<Record<string, unknown>> }>>
  /** metadata.yaml `resources:`, when the charm declares any (left out otherwise, so older records read the same). */
  readonly resources?: Readonly<Record<string, CharmResource>>
}

/** A resource a charm declares: its type and, for a file, the name the unit's copy takes. */
export interface CharmResource {
  readonly type: 'file' | 'oci-image'
  /** The file name of the unit's copy (`resources/<name>/<filename>`); '' for an oci-image. */
  readonly filename: string
}

/** The content an operator supplied for one resource (`deploy --resource`, `attach-resource`). */
export interface ResourceRecord {
  /** 1 for the first upload, bumped by each attach-resource. */
  readonly revision: number
  /** Content address (sha256 hex) in the controllers' store. */
  readonly hash: string
  readonly size: number
}

/** The form `add-charm` accepts: short endpoint forms (`db: mysql`) and omitted sections. */
export interface CharmSummaryInput {
  name: string
  subordinate?: boolean
  provides?: Record<string, string | { interface: string, scope?: 'global' | 'container' }>
  requires?: Record<string, string | { interface: string, scope?: 'global' | 'container' }>
  peers?: Record<string, string | { interface: string, scope?: 'global' | 'container' }>
  config?: Record<string, { type?: ConfigOptionType, default?: ConfigValue | null }>
  storage?: Record<string, { type: 'filesystem' | 'block', location?: string | null, countMin?: number, countMax?: number, minimumSizeMiB?: number }>
  actions?: Record<string, { description?: string } & Record<string, unknown>>
  resources?: Record<string, { type: 'file' | 'oci-image', filename?: string | null }>
}

export interface CharmRecord {
  readonly url: string
  /** Content address (hex digest of the charm archive). */
  readonly hash: string
  readonly metadata: CharmSummary
}
