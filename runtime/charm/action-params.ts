import { describeValue } from '../errors.ts'
import { limits } from '../limits.ts'

/**
 * Action parameters checked against the action's JSON-Schema (draft 4) and completed
 * with the schema's defaults, as Juju does before queueing an action
 * (juju-semantics.md §7.3): validate first, then insert defaults, so a required
 * parameter must be given even when it has a default.
 *
 * Supported: type (one name or a list), properties, required, additionalProperties
 * (boolean or schema), enum, minimum/maximum with draft-4 boolean exclusiveMinimum/
 * exclusiveMaximum, multipleOf, minLength/maxLength (in code points), pattern (ECMAScript,
 * unanchored), items (one schema or a list), additionalItems, minItems/maxItems,
 * uniqueItems, minProperties/maxProperties, default. Annotations (title, description,
 * format, definitions) are accepted and not enforced, and unknown keywords are ignored as
 * JSON Schema requires. Keywords whose meaning cantrip does not implement ($ref, $schema
 * and the combinators) are refused when the schema is checked, so nothing a charm asks for
 * is silently skipped.
 *
 * Everything here walks data with an explicit stack: schemas come from disk and
 * parameters from the network, so nothing recurses, and both are bounded in depth
 * (`actionParamsDepthMax`) and size (`actionParamsValuesMax`).
 */

/** An action's whole parameter schema: a JSON object schema (actions.yaml entry with `params` as `properties`). */
export type ActionSchema = Readonly<Record<string, unknown>>

export type ActionParamsResult =
  | { readonly ok: true, readonly params: Record<string, unknown> }
  | { readonly ok: false, readonly error: string }

/** Why a schema is not one cantrip can check; `path` is the keyword path from the schema's root. */
export interface ActionSchemaProblem {
  readonly path: readonly string[]
  readonly expected: string
  readonly got: unknown
}

const jsonTypeNames = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'] as const
type JsonTypeName = typeof jsonTypeNames[number]

/** Keywords with validation meaning that this subset does not implement. */
const unsupportedKeywords = ['$ref', '$schema', 'allOf', 'anyOf', 'oneOf', 'not', 'patternProperties', 'dependencies']
const countKeywords = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties']
const stringKeywords = ['title', 'description', 'format']
/** Longest rendering of a value in a message; Juju prints the whole value, which can be huge. */
const renderedValueCharsMax = 100

/** The first problem with `schema`, in sorted keyword order, or undefined when cantrip can check params against it. */
export function actionSchemaProblem (schema: unknown): ActionSchemaProblem | undefined {
  const stack: Array<{ node: unknown, path: string[], depth: number }> = [{ node: schema, path: [], depth: 0 }]
  let visited = 0
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop()!
    if (++visited > limits.actionParamsValuesMax) return { path, expected: `at most ${limits.actionParamsValuesMax} subschemas`, got: 'more' }
    if (depth > limits.actionParamsDepthMax) return { path, expected: `a schema nested at most ${limits.actionParamsDepthMax} deep`, got: node }
    if (!isJsonObject(node)) return { path, expected: 'a JSON schema (a map)', got: node }
    const has = (keyword: string): boolean => Object.hasOwn(node, keyword)
    const at = (...keys: string[]): string[] => [...path, ...keys]

    const unsupported = unsupportedKeywords.find(has)
    if (unsupported !== undefined) {
      return { path, expected: `only keywords of the draft-4 subset cantrip checks (not ${unsupportedKeywords.map(k => JSON.stringify(k)).join(', ')})`, got: unsupported }
    }
    if (has('type') && typeList(node.type) === undefined) {
      return { path: at('type'), expected: `a JSON type name (${jsonTypeNames.map(t => JSON.stringify(t)).join(', ')}) or a list of distinct ones`, got: node.type }
    }
    if (has('required')) {
      const required = node.required
      if (!Array.isArray(required) || !required.every(name => typeof name === 'string') || new Set(required).size !== required.length) {
        return { path: at('required'), expected: 'a list of distinct property names', got: required }
      }
    }
    if (has('enum')) {
      if (!Array.isArray(node.enum) || node.enum.length === 0) return { path: at('enum'), expected: 'a non-empty list of values', got: node.enum }
      const problem = jsonValueProblem(node.enum, limits.actionParamsDepthMax - depth)
      if (problem !== undefined) return { path: at('enum', ...problem.path), expected: problem.expected, got: problem.got }
    }
    if (has('default')) {
      const problem = jsonValueProblem(node.default, limits.actionParamsDepthMax - depth)
      if (problem !== undefined) return { path: at('default', ...problem.path), expected: problem.expected, got: problem.got }
    }
    for (const keyword of ['minimum', 'maximum'] as const) {
      if (has(keyword) && !isFiniteNumber(node[keyword])) return { path: at(keyword), expected: 'a number', got: node[keyword] }
    }
    for (const [keyword, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
      if (!has(keyword)) continue
      // Draft 4's form; draft 6 made these numbers, which cantrip does not read.
      if (typeof node[keyword] !== 'boolean') return { path: at(keyword), expected: 'true or false (draft 4)', got: node[keyword] }
      if (!has(bound)) return { path: at(keyword), expected: `${JSON.stringify(bound)} beside it`, got: node[keyword] }
    }
    if (has('multipleOf') && !(isFiniteNumber(node.multipleOf) && node.multipleOf > 0)) {
      return { path: at('multipleOf'), expected: 'a number greater than 0', got: node.multipleOf }
    }
    for (const keyword of countKeywords) {
      if (has(keyword) && !(Number.isSafeInteger(node[keyword]) && (node[keyword] as number) >= 0)) {
        return { path: at(keyword), expected: 'a whole number, 0 or more', got: node[keyword] }
      }
    }
    if (has('pattern') && compilePattern(node.pattern) === undefined) {
      return { path: at('pattern'), expected: 'an ECMAScript regular expression', got: node.pattern }
    }
    if (has('uniqueItems') && typeof node.uniqueItems !== 'boolean') return { path: at('uniqueItems'), expected: 'true or false', got: node.uniqueItems }
    for (const keyword of stringKeywords) {
      if (has(keyword) && typeof node[keyword] !== 'string') return { path: at(keyword), expected: 'a string', got: node[keyword] }
    }
    if (has('definitions') && !isJsonObject(node.definitions)) return { path: at('definitions'), expected: 'a map of schemas', got: node.definitions }

    const children: Array<{ node: unknown, path: string[], depth: number }> = []
    if (has('properties')) {
      if (!isJsonObject(node.properties)) return { path: at('properties'), expected: 'a map of property name to schema', got: node.properties }
      for (const key of sortedKeys(node.properties)) children.push({ node: node.properties[key], path: at('properties', key), depth: depth + 1 })
    }
    for (const keyword of ['additionalProperties', 'additionalItems'] as const) {
      if (!has(keyword) || typeof node[keyword] === 'boolean') continue
      if (!isJsonObject(node[keyword])) return { path: at(keyword), expected: 'true, false or a schema', got: node[keyword] }
      children.push({ node: node[keyword], path: at(keyword), depth: depth + 1 })
    }
    if (has('items')) {
      const items = node.items
      if (Array.isArray(items)) items.forEach((item, index) => children.push({ node: item, path: at('items', String(index)), depth: depth + 1 }))
      else if (isJsonObject(items)) children.push({ node: items, path: at('items'), depth: depth + 1 })
      else return { path: at('items'), expected: 'a schema or a list of schemas', got: items }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
  }
  return undefined
}

/**
 * Checks `params` against the action's schema and returns them with defaults filled in,
 * or Juju's message: `cannot run "snapshot" action: validation failed: (root).outfile :
 * must be of type string, given 2`. Several problems are joined with "; " as Juju does.
 */
export function validateActionParams (actionName: string, schema: unknown, params: unknown): ActionParamsResult {
  const prefix = `cannot run ${JSON.stringify(actionName)} action:`
  const schemaProblem = actionSchemaProblem(schema)
  if (schemaProblem !== undefined) {
    return { ok: false, error: `${prefix} invalid parameter schema: field ${JSON.stringify(schemaProblem.path.join('.'))}: expected ${schemaProblem.expected}, got ${describeValue(schemaProblem.got)}` }
  }
  const root = params ?? {}
  const valueProblem = jsonValueProblem(root, limits.actionParamsDepthMax)
  if (valueProblem !== undefined) {
    return { ok: false, error: `${prefix} validation failed: ${renderPath(valueProblem.path)} : must be ${valueProblem.expected}, given ${describeValue(valueProblem.got)}` }
  }
  if (!isJsonObject(root)) return { ok: false, error: `${prefix} validation failed: (root) : must be of type object, given ${renderJson(root)}` }
  const errors = validationErrors(schema as ActionSchema, root)
  if (errors.length > 0) return { ok: false, error: `${prefix} validation failed: ${errors.join('; ')}` }
  return { ok: true, params: withDefaults(schema as ActionSchema, root) }
}

/** Every problem, in document order (each value's own problems, then its children's in key order), up to `actionParamsErrorsMax`. */
function validationErrors (schema: ActionSchema, root: Record<string, unknown>): string[] {
  const errors: string[] = []
  const stack: Array<{ schema: Readonly<Record<string, unknown>>, value: unknown, path: string[] }> = [{ schema, value: root, path: [] }]
  const report = (path: readonly string[], message: string): void => { errors.push(`${renderPath(path)} : ${message}`) }
  while (stack.length > 0 && errors.length <= limits.actionParamsErrorsMax) {
    const { schema: node, value, path } = stack.pop()!
    const given = (): string => renderJson(value)

    const types = Object.hasOwn(node, 'type') ? typeList(node.type)! : undefined
    if (types !== undefined) {
      const actual = jsonTypeOf(value)
      if (!types.includes(actual) && !(actual === 'integer' && types.includes('number'))) {
        // Nothing else about a value of the wrong type is worth saying.
        report(path, `must be of type ${types.join(' or ')}, given ${given()}`)
        continue
      }
    }
    if (Array.isArray(node.enum) && !node.enum.some(allowed => jsonEqual(allowed, value))) {
      report(path, `must be one of the following: ${node.enum.map(allowed => renderJson(allowed)).join(', ')}, given ${given()}`)
    }

    if (typeof value === 'number') {
      if (isFiniteNumber(node.minimum)) {
        const exclusive = node.exclusiveMinimum === true
        if (exclusive ? !(value > node.minimum) : !(value >= node.minimum)) report(path, `must be greater than ${exclusive ? '' : 'or equal to '}${node.minimum}, given ${given()}`)
      }
      if (isFiniteNumber(node.maximum)) {
        const exclusive = node.exclusiveMaximum === true
        if (exclusive ? !(value < node.maximum) : !(value <= node.maximum)) report(path, `must be less than ${exclusive ? '' : 'or equal to '}${node.maximum}, given ${given()}`)
      }
      if (isFiniteNumber(node.multipleOf) && !isMultipleOf(value, node.multipleOf)) report(path, `must be a multiple of ${node.multipleOf}, given ${given()}`)
    }

    if (typeof value === 'string') {
      const length = codePointLength(value)
      if (Number.isSafeInteger(node.minLength) && length < (node.minLength as number)) report(path, `string length must be greater than or equal to ${node.minLength as number}, given ${given()}`)
      if (Number.isSafeInteger(node.maxLength) && length > (node.maxLength as number)) report(path, `string length must be less than or equal to ${node.maxLength as number}, given ${given()}`)
      const pattern = Object.hasOwn(node, 'pattern') ? compilePattern(node.pattern) : undefined
      if (pattern !== undefined && !pattern.test(value)) report(path, `does not match pattern ${JSON.stringify(node.pattern)}, given ${given()}`)
    }

    const children: Array<{ schema: Readonly<Record<string, unknown>>, value: unknown, path: string[] }> = []
    if (Array.isArray(value)) {
      if (Number.isSafeInteger(node.minItems) && value.length < (node.minItems as number)) report(path, `array must have at least ${node.minItems as number} items, given ${given()}`)
      if (Number.isSafeInteger(node.maxItems) && value.length > (node.maxItems as number)) report(path, `array must have at most ${node.maxItems as number} items, given ${given()}`)
      if (node.uniqueItems === true && new Set(value.map(item => canonicalJson(item))).size !== value.length) report(path, `array items must be unique, given ${given()}`)
      const items = node.items
      if (isJsonObject(items)) {
        value.forEach((item, index) => children.push({ schema: items, value: item, path: [...path, String(index)] }))
      } else if (Array.isArray(items)) {
        value.forEach((item, index) => {
          const positional = items[index]
          if (index < items.length) {
            if (isJsonObject(positional)) children.push({ schema: positional, value: item, path: [...path, String(index)] })
          } else if (node.additionalItems === false) {
            if (index === items.length) report(path, `additional items are not allowed (at most ${items.length}), given ${given()}`)
          } else if (isJsonObject(node.additionalItems)) {
            children.push({ schema: node.additionalItems, value: item, path: [...path, String(index)] })
          }
        })
      }
    }

    if (isJsonObject(value)) {
      if (Array.isArray(node.required)) {
        for (const name of node.required) {
          if (typeof name === 'string' && !Object.hasOwn(value, name)) report(path, `${JSON.stringify(name)} property is missing and required, given ${given()}`)
        }
      }
      const count = Object.keys(value).length
      if (Number.isSafeInteger(node.minProperties) && count < (node.minProperties as number)) report(path, `must have at least ${node.minProperties as number} properties, given ${given()}`)
      if (Number.isSafeInteger(node.maxProperties) && count > (node.maxProperties as number)) report(path, `must have at most ${node.maxProperties as number} properties, given ${given()}`)
      const properties = isJsonObject(node.properties) ? node.properties : {}
      for (const key of sortedKeys(value)) {
        const declared = Object.hasOwn(properties, key) ? properties[key] : undefined
        if (declared !== undefined) {
          if (isJsonObject(declared)) children.push({ schema: declared, value: value[key], path: [...path, key] })
        } else if (node.additionalProperties === false) {
          report(path, `additional property ${JSON.stringify(key)} is not allowed, given ${given()}`)
        } else if (isJsonObject(node.additionalProperties)) {
          children.push({ schema: node.additionalProperties, value: value[key], path: [...path, key] })
        }
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
  }
  if (errors.length > limits.actionParamsErrorsMax) {
    return [...errors.slice(0, limits.actionParamsErrorsMax), 'more problems not shown']
  }
  return errors
}

/**
 * A copy of `params` with the default of every missing property filled in, and objects
 * created where a nested property has a default (Juju's InsertDefaults). Only
 * `properties` are followed: defaults under items or additionalProperties do not apply.
 */
function withDefaults (schema: ActionSchema, params: Record<string, unknown>): Record<string, unknown> {
  // Both are finite JSON trees within actionParamsDepthMax (checked), so cloning is bounded.
  const result = structuredClone(params)
  const stack: Array<{ schema: Readonly<Record<string, unknown>>, target: Record<string, unknown> }> = [{ schema, target: result }]
  while (stack.length > 0) {
    const { schema: node, target } = stack.pop()!
    if (!isJsonObject(node.properties)) continue
    for (const key of sortedKeys(node.properties)) {
      const property = node.properties[key]
      if (!isJsonObject(property)) continue
      if (!Object.hasOwn(target, key)) {
        if (Object.hasOwn(property, 'default')) {
          defineProperty(target, key, structuredClone(property.default))
        } else if (hasNestedDefault(property)) {
          const created: Record<string, unknown> = {}
          defineProperty(target, key, created)
          stack.push({ schema: property, target: created })
        }
      } else if (isJsonObject(target[key])) {
        stack.push({ schema: property, target: target[key] })
      }
    }
  }
  return result
}

function hasNestedDefault (schema: Readonly<Record<string, unknown>>): boolean {
  const stack = [schema]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (!isJsonObject(node.properties)) continue
    for (const property of Object.values(node.properties)) {
      if (!isJsonObject(property)) continue
      if (Object.hasOwn(property, 'default')) return true
      stack.push(property)
    }
  }
  return false
}

/** An own, enumerable property even for "__proto__", which plain assignment would turn into a prototype change. */
function defineProperty (target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

// ---------------------------------------------------------------------------------
// JSON values

/** A map as JSON has them: a plain object, not a class instance (Date, Map, Buffer). */
function isJsonObject (value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value) as unknown
  return prototype === Object.prototype || prototype === null
}

function isFiniteNumber (value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value)
}

/** Why `value` is not a finite JSON tree within `depthMax` levels, or undefined. */
function jsonValueProblem (value: unknown, depthMax: number): ActionSchemaProblem | undefined {
  const stack: Array<{ value: unknown, path: string[], depth: number }> = [{ value, path: [], depth: 0 }]
  let visited = 0
  while (stack.length > 0) {
    const item = stack.pop()!
    if (++visited > limits.actionParamsValuesMax) return { path: item.path, expected: `at most ${limits.actionParamsValuesMax} values in all`, got: 'more' }
    const v = item.value
    if (v === null || typeof v === 'string' || typeof v === 'boolean' || isFiniteNumber(v)) continue
    const isContainer = Array.isArray(v) || isJsonObject(v)
    if (!isContainer) return { path: item.path, expected: 'a JSON value', got: v }
    if (item.depth >= depthMax) return { path: item.path, expected: `a value nested at most ${limits.actionParamsDepthMax} deep`, got: v }
    if (Array.isArray(v)) {
      v.forEach((element, index) => stack.push({ value: element, path: [...item.path, String(index)], depth: item.depth + 1 }))
    } else {
      for (const [key, element] of Object.entries(v as Record<string, unknown>)) stack.push({ value: element, path: [...item.path, key], depth: item.depth + 1 })
    }
  }
  return undefined
}

function typeList (type: unknown): JsonTypeName[] | undefined {
  const list = typeof type === 'string' ? [type] : Array.isArray(type) && type.length > 0 ? type : undefined
  if (list === undefined) return undefined
  if (!list.every(name => typeof name === 'string' && (jsonTypeNames as readonly string[]).includes(name))) return undefined
  if (new Set(list).size !== list.length) return undefined
  return list as JsonTypeName[]
}

function jsonTypeOf (value: unknown): JsonTypeName {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  if (typeof value === 'string') return 'string'
  if (typeof value === 'boolean') return 'boolean'
  return 'object'
}

function isMultipleOf (value: number, divisor: number): boolean {
  const quotient = value / divisor
  // Decimal divisors (0.01) are not exact in binary; allow the rounding error of one division.
  return Math.abs(quotient - Math.round(quotient)) <= Math.abs(quotient) * Number.EPSILON * 4
}

function codePointLength (text: string): number {
  let length = 0
  for (const _ of text) length++
  return length
}

const compiledPatterns = new Map<string, RegExp | null>()
/** Patterns are few per charm and reused on every action, so compiled ones are kept. */
const compiledPatternsMax = 1024

function compilePattern (pattern: unknown): RegExp | undefined {
  if (typeof pattern !== 'string') return undefined
  let compiled = compiledPatterns.get(pattern)
  if (compiled === undefined) {
    try {
      compiled = new RegExp(pattern, 'u')
    } catch {
      compiled = null
    }
    if (compiledPatterns.size >= compiledPatternsMax) compiledPatterns.clear()
    compiledPatterns.set(pattern, compiled)
  }
  return compiled ?? undefined
}

function sortedKeys (value: Record<string, unknown>): string[] {
  return Object.keys(value).sort((a, b) => a < b ? -1 : a > b ? 1 : 0)
}

function jsonEqual (a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b)
}

/**
 * JSON with map keys sorted (as Go's encoding/json writes maps, which is what Juju's
 * messages show), stopping once longer than `charsMax`. Callers pass checked JSON trees.
 */
function canonicalJson (value: unknown, charsMax = Number.POSITIVE_INFINITY): string {
  let out = ''
  const stack: Array<{ literal: string } | { value: unknown }> = [{ value }]
  while (stack.length > 0 && out.length <= charsMax) {
    const item = stack.pop()!
    if ('literal' in item) {
      out += item.literal
      continue
    }
    const v = item.value
    if (Array.isArray(v)) {
      out += '['
      stack.push({ literal: ']' })
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] })
        if (i > 0) stack.push({ literal: ',' })
      }
    } else if (isJsonObject(v)) {
      const keys = sortedKeys(v)
      out += '{'
      stack.push({ literal: '}' })
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push({ value: v[keys[i]!] })
        stack.push({ literal: `${JSON.stringify(keys[i])}:` })
        if (i > 0) stack.push({ literal: ',' })
      }
    } else {
      out += JSON.stringify(v) ?? describeValue(v)
    }
  }
  return out
}

function renderJson (value: unknown): string {
  const json = canonicalJson(value, renderedValueCharsMax)
  return json.length > renderedValueCharsMax ? `${json.slice(0, renderedValueCharsMax - 3)}...` : json
}

/** `(root).outfile` or `(root).servers.0.port`; keys that are not plain words are quoted so the message stays one line. */
function renderPath (path: readonly string[]): string {
  return ['(root)', ...path.map(key => /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key))].join('.')
}
