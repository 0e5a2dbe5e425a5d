import { actionNamePattern, sectionEntriesMax } from '../model/charm-summary.ts'
import { actionSchemaProblem, type ActionSchema } from './action-params.ts'
import { CharmFieldChecker, fieldPath } from './charm-fields.ts'

/**
 * actions.yaml (juju-semantics.md §7.3): action name → `{description, params, required,
 * additionalProperties, title, parallel, execution-group, …}`. As in juju/charm's
 * ReadActionsYaml the whole entry becomes one JSON-Schema object schema: `params` turns
 * into `properties`, `title` defaults to the action name, `additionalProperties` to
 * false, and any other key is kept as a schema keyword. An empty file declares no actions.
 */

export interface CharmActionSpec {
  readonly description: string
  /** May run alongside other actions (Juju 3.1+); false runs it in the unit's queue. */
  readonly parallel: boolean
  /** Actions in the same non-empty group run one at a time. */
  readonly executionGroup: string
  readonly schema: ActionSchema
}

const file = 'actions.yaml'
/** Keys of an entry that describe the action rather than its parameters. */
const actionOnlyKeys = new Set(['description', 'params', 'parallel', 'execution-group'])

/** The checked actions; throws InvalidCharmError naming the first problem. */
export function parseCharmActions (charm: string, raw: unknown): Record<string, CharmActionSpec> {
  const check: CharmFieldChecker = new CharmFieldChecker(charm, file)
  const top = check.optionalMap(raw, undefined, 'a map of action name to action')
  const out: Record<string, CharmActionSpec> = {}
  for (const [action, spec] of check.entries(top, undefined, sectionEntriesMax)) {
    if (!actionNamePattern.test(action)) check.fail(action, 'an action name of lower case letters, digits and dashes, starting and ending with a letter or digit', action)
    if ((action === 'juju' || action.startsWith('juju-')) && !charm.startsWith('juju-')) {
      check.fail(action, 'an action name other than "juju" or "juju-*" (reserved)', action)
    }
    // `snapshot:` with nothing under it is an action without parameters, as in Juju.
    const entry = check.optionalMap(spec, action, 'a map with "description" and "params"')
    const description = check.optionalString(entry.description, fieldPath(action, 'description'), 'No description')
    const parallel = check.optionalBoolean(entry.parallel, fieldPath(action, 'parallel'), false)
    const executionGroup = check.optionalString(entry['execution-group'], fieldPath(action, 'execution-group'), '')
    // Juju: "params failed to parse as a map", also for `params:` with nothing under it.
    const params = Object.hasOwn(entry, 'params') ? check.map(entry.params, fieldPath(action, 'params'), 'a map of parameter name to JSON schema') : {}
    if (Object.hasOwn(entry, 'type') && entry.type !== 'object') check.fail(fieldPath(action, 'type'), '"object" (action parameters are a map)', entry.type)

    const schema: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(entry)) {
      if (!actionOnlyKeys.has(key)) Object.defineProperty(schema, key, { value, enumerable: true, writable: true, configurable: true })
    }
    schema.title = Object.hasOwn(entry, 'title') ? entry.title : action
    schema.description = description
    schema.type = 'object'
    schema.properties = params
    schema.additionalProperties = Object.hasOwn(entry, 'additionalProperties') ? entry.additionalProperties : false

    const problem = actionSchemaProblem(schema)
    if (problem !== undefined) {
      // The schema's `properties` is what the author wrote as `params`.
      const path = problem.path.length > 0 && problem.path[0] === 'properties' ? ['params', ...problem.path.slice(1)] : [...problem.path]
      check.fail([action, ...path].join('.'), problem.expected, problem.got)
    }
    out[action] = { description, parallel, executionGroup, schema }
  }
  return out
}
