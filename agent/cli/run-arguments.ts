/**
 * `cantrip run`'s arguments, read as Juju 3.6's run command reads them
 * (cmd/juju/action/run.go Init and enqueueActions): `<unit> [<unit> ...] <action-name>
 * [<key>[.<key> ...]=<value> ...]`. Leading words that name a unit (`kv/0`) or an
 * application's leader (`kv/leader`) are the receivers, all of one application; the first
 * word that is an action name ends them; the rest are parameters, read as YAML unless
 * `--string-args`, over a `--params` YAML file whose keys they override.
 */
import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import { InvalidInputError } from '../../runtime/errors.ts'
import { actionParameters } from './commands/model-common.ts'

/** Juju's unitOrLeaderSnippet: an application name, then a unit number or `leader`. */
const unitOrLeader = /^([a-z][a-z0-9]*(?:-[a-z0-9]*[a-z][a-z0-9]*)*)\/(\d+|leader)$/
/** An action name as the charm declares it (cantrip keeps the looser rule its charms use). */
const actionName = /^[a-z][a-z0-9_-]*$/i

export interface RunArguments {
  /** Units and `app/leader` receivers, in the order given. */
  readonly receivers: readonly string[]
  readonly application: string
  readonly action: string
  readonly parameters: Record<string, unknown>
}

export interface ParameterSources {
  /** `--params FILE`: a YAML map; arguments given on the command line override its keys. */
  readonly paramsFile?: string
  /** `--string-args`: keep each `key=value`'s value as text instead of reading it as YAML. */
  readonly stringArgs?: boolean
}

const component = 'cantrip run'

/** Splits the words into receivers, the action and its parameters; refuses what Juju's Init refuses. */
export function parseRunArguments (words: readonly string[], sources: ParameterSources = {}): RunArguments {
  const receivers: string[] = []
  const applications = new Set<string>()
  let action: string | undefined
  for (const word of words) {
    const unit = unitOrLeader.exec(word)
    if (unit !== null) {
      receivers.push(word)
      applications.add(unit[1]!)
    } else if (actionName.test(word)) {
      action = word
      break
    } else {
      throw new InvalidInputError(component, 'a unit like "kv/0" or "kv/leader", or an action name', word)
    }
  }
  if (receivers.length === 0) throw new InvalidInputError(component, 'a unit like "kv/0" or "kv/leader" before the action', words.join(' '))
  if (action === undefined) throw new InvalidInputError(component, 'an action name after the units', words.join(' '))
  if (applications.size > 1) throw new InvalidInputError(component, 'units of one application (all units must be of the same application)', [...applications].join(', '))
  const base = sources.paramsFile === undefined ? {} : readParamsFile(sources.paramsFile)
  const parameters = actionParameters(component, words.slice(receivers.length + 1), { base, strings: sources.stringArgs === true })
  return { receivers, application: [...applications][0]!, action, parameters }
}

/** `--params FILE`: its YAML must be a map with string keys, as Juju's ConformYAML requires. */
function readParamsFile (path: string): Record<string, unknown> {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new InvalidInputError(component, '--params to name a readable YAML file', `${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`)
  }
  let value: unknown
  try {
    value = parseYaml(text) as unknown
  } catch (error) {
    throw new InvalidInputError(component, `--params to hold YAML (${path})`, String((error as Error).message).split('\n')[0])
  }
  if (value === null || value === undefined) return {}
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidInputError(component, `--params to hold a YAML map with string keys (${path})`, value)
  return value as Record<string, unknown>
}
