import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { actionSchemaProblem, validateActionParams, type ActionParamsResult } from '../runtime/charm/action-params.ts'
import { parseCharmActions } from '../runtime/charm/charm-actions.ts'
import { limits } from '../runtime/limits.ts'

const test = suite('action params')

/** The schema juju/charm's actions tests use for "snapshot". */
const snapshot = {
  title: 'snapshot',
  description: 'Take a snapshot of the database.',
  type: 'object',
  properties: {
    outfile: { description: 'The file to write out to.', type: 'string' },
    quality: { description: 'Compression quality', type: 'integer', minimum: 0, maximum: 9 }
  },
  additionalProperties: false,
  required: ['outfile']
}

function ok (result: ActionParamsResult): Record<string, unknown> {
  if (!result.ok) assert.unreachable(result.error)
  return (result as { params: Record<string, unknown> }).params
}

function error (result: ActionParamsResult): string {
  if (result.ok) assert.unreachable(`expected a validation failure, got ${JSON.stringify(result.params)}`)
  const message = (result as { error: string }).error
  assert.not.match(message, /\n/, 'one line')
  return message
}

/** The schema parseCharmActions builds from an actions.yaml entry (as plain values). */
function schemaOf (entry: Record<string, unknown>, name = 'act'): Record<string, unknown> {
  return parseCharmActions('somecharm', { [name]: entry })[name]!.schema as Record<string, unknown>
}

// ---------------------------------------------------------------------------------
// Juju's own cases (juju/charm actions_test.go TestValidateOk / TestValidateFail)

test('valid params pass unchanged', () => {
  assert.equal(ok(validateActionParams('snapshot', snapshot, { outfile: 'out-2014-06-12.bz2' })), { outfile: 'out-2014-06-12.bz2' })
  assert.equal(ok(validateActionParams('snapshot', snapshot, { outfile: 'out.bz2', quality: 5 })), { outfile: 'out.bz2', quality: 5 })
  const open = { ...snapshot, required: [], additionalProperties: true }
  assert.equal(ok(validateActionParams('snapshot', open, { outfile: 'x', extraParam1: 1 })), { outfile: 'x', extraParam1: 1 })
  assert.equal(ok(validateActionParams('snapshot', { ...snapshot, required: [] }, undefined)), {}, 'no params is an empty map')
  assert.equal(ok(validateActionParams('snapshot', { ...snapshot, required: [] }, null)), {})
})

test('a wrong type, in Juju\'s words', () => {
  assert.is(error(validateActionParams('snapshot', snapshot, { outfile: 5 })),
    'cannot run "snapshot" action: validation failed: (root).outfile : must be of type string, given 5')
  assert.is(error(validateActionParams('snapshot', snapshot, { outfile: 'out-2014-06-12.bz2', quality: 'two' })),
    'cannot run "snapshot" action: validation failed: (root).quality : must be of type integer, given "two"')
})

test('an additional property, with the given object in sorted JSON as Go prints it', () => {
  assert.is(error(validateActionParams('snapshot', snapshot, { outfile: 'foo.bz', bar: 'foo' })),
    'cannot run "snapshot" action: validation failed: (root) : additional property "bar" is not allowed, given {"bar":"foo","outfile":"foo.bz"}')
})

test('a missing required property; several problems are joined with "; "', () => {
  assert.is(error(validateActionParams('snapshot', snapshot, { quality: 5 })),
    'cannot run "snapshot" action: validation failed: (root) : "outfile" property is missing and required, given {"quality":5}')
  const exec = { type: 'object', required: ['command', 'timeout'], properties: { command: { type: 'string' }, timeout: { type: 'number' } } }
  assert.is(error(validateActionParams('juju-exec', exec, {})),
    'cannot run "juju-exec" action: validation failed: (root) : "command" property is missing and required, given {}; (root) : "timeout" property is missing and required, given {}')
})

test('a required property is required even when it has a default: Juju validates before inserting defaults', () => {
  const schema = schemaOf({ params: { outfile: { type: 'string', default: 'out.bz2' } }, required: ['outfile'] })
  assert.is(error(validateActionParams('act', schema, {})),
    'cannot run "act" action: validation failed: (root) : "outfile" property is missing and required, given {}')
})

// ---------------------------------------------------------------------------------
// Defaults (juju/charm TestInsertDefaultValues)

test('defaults fill missing properties, create objects for nested defaults and never overwrite', () => {
  const simple = schemaOf({ params: { val: { type: 'string', default: 'somestr' } } })
  assert.equal(ok(validateActionParams('act', simple, undefined)), { val: 'somestr' })
  assert.equal(ok(validateActionParams('act', simple, {})), { val: 'somestr' })
  assert.equal(ok(validateActionParams('act', simple, { val: 'mine' })), { val: 'mine' })

  const complicated = schemaOf({
    params: {
      val: {
        type: 'object',
        properties: { foo: { type: 'string' }, bar: { type: 'object', properties: { baz: { type: 'string', default: 'boz' } } } }
      }
    }
  })
  assert.equal(ok(validateActionParams('act', complicated, {})), { val: { bar: { baz: 'boz' } } })
  assert.equal(ok(validateActionParams('act', complicated, { val: { foo: 'bar', bar: { faz: 'foz' } } })),
    { val: { foo: 'bar', bar: { baz: 'boz', faz: 'foz' } } }, 'interleaved into existing objects')

  const defaultObject = schemaOf({ params: { val: { type: 'object', default: { foo: 'bar', bar: { baz: 'woz' } } } } })
  assert.equal(ok(validateActionParams('act', defaultObject, {})), { val: { foo: 'bar', bar: { baz: 'woz' } } })

  const none = schemaOf({ params: { val: { type: 'object', properties: { var: { type: 'object', properties: { x: { type: 'string' } } } } } } })
  assert.equal(ok(validateActionParams('act', none, {})), {}, 'no default, no object created')
})

test('defaults are copies: neither the schema nor the caller\'s params change', () => {
  const schema = schemaOf({ params: { list: { type: 'array', default: [1, 2] }, nested: { type: 'object', properties: { n: { type: 'integer', default: 3 } } } } })
  const params = { nested: {} }
  const first = ok(validateActionParams('act', schema, params))
  ;(first.list as number[]).push(99)
  assert.equal(params, { nested: {} })
  assert.equal(ok(validateActionParams('act', schema, {})), { list: [1, 2], nested: { n: 3 } })
})

test('a property named __proto__ gets its default as an own property, not a prototype', () => {
  const properties = JSON.parse('{"__proto__": {"type": "object", "default": {"polluted": true}}}') as Record<string, unknown>
  const params = ok(validateActionParams('act', { type: 'object', properties }, {}))
  assert.ok(Object.hasOwn(params, '__proto__'))
  assert.is(({} as Record<string, unknown>).polluted, undefined)
  assert.is(Object.getPrototypeOf(params), Object.prototype)
})

// ---------------------------------------------------------------------------------
// Keywords

test('numbers: integer versus number, minimum, maximum, exclusive bounds and multipleOf', () => {
  const schema = schemaOf({
    params: {
      count: { type: 'integer', minimum: 1, maximum: 10 },
      ratio: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
      step: { type: 'number', multipleOf: 0.1 }
    }
  })
  assert.equal(ok(validateActionParams('act', schema, { count: 10, ratio: 0.5, step: 0.3 })), { count: 10, ratio: 0.5, step: 0.3 })
  assert.equal(ok(validateActionParams('act', schema, { ratio: 1e-9 })), { ratio: 1e-9 })
  assert.is(error(validateActionParams('act', schema, { count: 2.5 })), 'cannot run "act" action: validation failed: (root).count : must be of type integer, given 2.5')
  assert.is(error(validateActionParams('act', schema, { count: 0 })), 'cannot run "act" action: validation failed: (root).count : must be greater than or equal to 1, given 0')
  assert.is(error(validateActionParams('act', schema, { count: 11 })), 'cannot run "act" action: validation failed: (root).count : must be less than or equal to 10, given 11')
  assert.is(error(validateActionParams('act', schema, { ratio: 0 })), 'cannot run "act" action: validation failed: (root).ratio : must be greater than 0, given 0')
  assert.is(error(validateActionParams('act', schema, { ratio: 1 })), 'cannot run "act" action: validation failed: (root).ratio : must be less than 1, given 1')
  assert.is(error(validateActionParams('act', schema, { step: 0.25 })), 'cannot run "act" action: validation failed: (root).step : must be a multiple of 0.1, given 0.25')
  assert.equal(ok(validateActionParams('act', schema, { ratio: 0.5, count: 3 })), { ratio: 0.5, count: 3 }, 'an integer is a number')
})

test('strings: minLength and maxLength count characters, pattern is unanchored ECMAScript', () => {
  const schema = schemaOf({ params: { name: { type: 'string', minLength: 2, maxLength: 3, pattern: '^[a-zé😀]+$' } } })
  assert.equal(ok(validateActionParams('act', schema, { name: 'é😀' })), { name: 'é😀' }, 'two code points')
  assert.is(error(validateActionParams('act', schema, { name: 'a' })), 'cannot run "act" action: validation failed: (root).name : string length must be greater than or equal to 2, given "a"')
  assert.is(error(validateActionParams('act', schema, { name: 'abcd' })), 'cannot run "act" action: validation failed: (root).name : string length must be less than or equal to 3, given "abcd"')
  assert.is(error(validateActionParams('act', schema, { name: 'AB' })), 'cannot run "act" action: validation failed: (root).name : does not match pattern "^[a-zé😀]+$", given "AB"')
  const unanchored = schemaOf({ params: { name: { type: 'string', pattern: 'b' } } })
  assert.equal(ok(validateActionParams('act', unanchored, { name: 'abc' })), { name: 'abc' })
})

test('enum, and a list of types', () => {
  const schema = schemaOf({ params: { mode: { enum: ['fast', 'safe', 3, null] }, label: { type: ['string', 'null'] } } })
  assert.equal(ok(validateActionParams('act', schema, { mode: null, label: null })), { mode: null, label: null })
  assert.equal(ok(validateActionParams('act', schema, { mode: 3, label: 'x' })), { mode: 3, label: 'x' })
  assert.is(error(validateActionParams('act', schema, { mode: 'slow' })),
    'cannot run "act" action: validation failed: (root).mode : must be one of the following: "fast", "safe", 3, null, given "slow"')
  assert.is(error(validateActionParams('act', schema, { label: 5 })),
    'cannot run "act" action: validation failed: (root).label : must be of type string or null, given 5')
  const objects = schemaOf({ params: { pick: { enum: [{ a: 1, b: [2] }] } } })
  assert.equal(ok(validateActionParams('act', objects, { pick: { b: [2], a: 1 } })), { pick: { b: [2], a: 1 } }, 'enum compares values, not key order')
})

test('arrays: items, tuple items, additionalItems, minItems, maxItems, uniqueItems, with index paths', () => {
  const schema = schemaOf({
    params: {
      ports: { type: 'array', items: { type: 'integer', maximum: 65535 }, minItems: 1, maxItems: 3, uniqueItems: true },
      pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], additionalItems: false },
      servers: { type: 'array', items: { type: 'object', properties: { port: { type: 'integer' } }, required: ['port'] } }
    }
  })
  assert.equal(ok(validateActionParams('act', schema, { ports: [80, 443], pair: ['a', 1], servers: [{ port: 1 }] })), { ports: [80, 443], pair: ['a', 1], servers: [{ port: 1 }] })
  assert.is(error(validateActionParams('act', schema, { ports: [80, 70000] })), 'cannot run "act" action: validation failed: (root).ports.1 : must be less than or equal to 65535, given 70000')
  assert.is(error(validateActionParams('act', schema, { ports: [] })), 'cannot run "act" action: validation failed: (root).ports : array must have at least 1 items, given []')
  assert.is(error(validateActionParams('act', schema, { ports: [1, 2, 3, 4] })), 'cannot run "act" action: validation failed: (root).ports : array must have at most 3 items, given [1,2,3,4]')
  assert.is(error(validateActionParams('act', schema, { ports: [1, 1] })), 'cannot run "act" action: validation failed: (root).ports : array items must be unique, given [1,1]')
  assert.is(error(validateActionParams('act', schema, { pair: ['a', 'b'] })), 'cannot run "act" action: validation failed: (root).pair.1 : must be of type integer, given "b"')
  assert.is(error(validateActionParams('act', schema, { pair: ['a', 1, 2] })), 'cannot run "act" action: validation failed: (root).pair : additional items are not allowed (at most 2), given ["a",1,2]')
  assert.is(error(validateActionParams('act', schema, { servers: [{ port: 1 }, {}] })), 'cannot run "act" action: validation failed: (root).servers.1 : "port" property is missing and required, given {}')
})

test('objects: nested properties, additionalProperties as a schema, min/max properties', () => {
  const schema = schemaOf({
    params: {
      labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 2 },
      db: { type: 'object', properties: { host: { type: 'string' } }, additionalProperties: false, minProperties: 1 }
    }
  })
  assert.equal(ok(validateActionParams('act', schema, { labels: { a: 'x' }, db: { host: 'h' } })), { labels: { a: 'x' }, db: { host: 'h' } })
  assert.is(error(validateActionParams('act', schema, { labels: { a: 1 } })), 'cannot run "act" action: validation failed: (root).labels.a : must be of type string, given 1')
  assert.is(error(validateActionParams('act', schema, { labels: { a: 'x', b: 'y', c: 'z' } })),
    'cannot run "act" action: validation failed: (root).labels : must have at most 2 properties, given {"a":"x","b":"y","c":"z"}')
  assert.is(error(validateActionParams('act', schema, { db: {} })), 'cannot run "act" action: validation failed: (root).db : must have at least 1 properties, given {}')
  assert.is(error(validateActionParams('act', schema, { db: { host: 'h', 'odd key.': 1 } })),
    'cannot run "act" action: validation failed: (root).db : additional property "odd key." is not allowed, given {"host":"h","odd key.":1}')
  assert.is(error(validateActionParams('act', { type: 'object', additionalProperties: { type: 'string' } }, { 'a\nb': 1 })),
    'cannot run "act" action: validation failed: (root)."a\\nb" : must be of type string, given 1', 'odd keys are quoted so the message stays one line')
})

test('problems are reported in document order: a value before its children, children by key', () => {
  const schema = schemaOf({ params: { a: { type: 'string' }, b: { type: 'object', properties: { c: { type: 'string' } } } }, required: ['z'] })
  assert.is(error(validateActionParams('act', schema, { b: { c: 1 }, a: 1 })),
    'cannot run "act" action: validation failed: (root) : "z" property is missing and required, given {"a":1,"b":{"c":1}}; (root).a : must be of type string, given 1; (root).b.c : must be of type string, given 1')
})

test(`at most actionParamsErrorsMax problems are listed`, () => {
  const params = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${String(i).padStart(2, '0')}`, 1]))
  const message = error(validateActionParams('act', schemaOf({}), params))
  const problems = message.replace('cannot run "act" action: validation failed: ', '').split('; ')
  assert.is(problems.length, limits.actionParamsErrorsMax + 1)
  assert.is(problems[limits.actionParamsErrorsMax], 'more problems not shown')
  assert.match(problems[0]!, /^\(root\) : additional property "k00" is not allowed, given \{"k00":1,"k01":1,.*\.\.\.$/)
  assert.ok(problems[0]!.length < 200, 'long values are cut short')
})

test('params that are not a JSON object, or not JSON, or too deep, are refused', () => {
  const schema = schemaOf({ additionalProperties: true })
  assert.is(error(validateActionParams('act', schema, 5)), 'cannot run "act" action: validation failed: (root) : must be of type object, given 5')
  assert.is(error(validateActionParams('act', schema, [1])), 'cannot run "act" action: validation failed: (root) : must be of type object, given [1]')
  assert.is(error(validateActionParams('act', schema, { when: new Date(0) })),
    'cannot run "act" action: validation failed: (root).when : must be a JSON value, given an object with keys []')
  assert.is(error(validateActionParams('act', schema, { n: Number.NaN })), 'cannot run "act" action: validation failed: (root).n : must be a JSON value, given NaN')
  assert.is(error(validateActionParams('act', schema, { f: () => 1 })), 'cannot run "act" action: validation failed: (root).f : must be a JSON value, given function')
  let deep: unknown = 'bottom'
  for (let i = 0; i < limits.actionParamsDepthMax; i++) deep = { d: deep }
  assert.ok(validateActionParams('act', schema, deep).ok, 'actionParamsDepthMax levels of maps are fine')
  deep = { d: deep }
  assert.match(error(validateActionParams('act', schema, deep)),
    new RegExp(`^cannot run "act" action: validation failed: \\(root\\)(\\.d){${limits.actionParamsDepthMax}} : must be a value nested at most ${limits.actionParamsDepthMax} deep, given an object with keys \\["d"\\]$`))
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  assert.match(error(validateActionParams('act', schema, cyclic)), /must be a value nested at most \d+ deep/, 'a cycle is just too deep')
})

test(`params with more than actionParamsValuesMax values are refused`, () => {
  const shared = Array.from({ length: 1000 }, () => 0)
  const params = { a: Array.from({ length: 101 }, () => shared) }
  assert.match(error(validateActionParams('act', schemaOf({ additionalProperties: true }), params)),
    new RegExp(`: must be at most ${limits.actionParamsValuesMax} values in all, given "more"$`))
})

test('schemas cantrip cannot check faithfully are refused, naming the keyword path', () => {
  assert.equal(actionSchemaProblem({ type: 'object', properties: { a: { $ref: '#/definitions/x' } } }),
    { path: ['properties', 'a'], expected: 'only keywords of the draft-4 subset cantrip checks (not "$ref", "$schema", "allOf", "anyOf", "oneOf", "not", "patternProperties", "dependencies")', got: '$ref' })
  assert.equal(actionSchemaProblem({ properties: { a: { items: [{ type: 'string' }, { type: 'nope' }] } } })?.path, ['properties', 'a', 'items', '1', 'type'])
  assert.equal(actionSchemaProblem({ properties: { a: { minLength: -1 } } })?.expected, 'a whole number, 0 or more')
  assert.equal(actionSchemaProblem({ properties: { a: { multipleOf: 0 } } })?.expected, 'a number greater than 0')
  assert.equal(actionSchemaProblem({ properties: { a: { exclusiveMaximum: 5, maximum: 5 } } })?.expected, 'true or false (draft 4)')
  assert.equal(actionSchemaProblem({ properties: { a: { enum: [] } } })?.expected, 'a non-empty list of values')
  assert.equal(actionSchemaProblem({ properties: { a: { type: ['string', 'string'] } } })?.path, ['properties', 'a', 'type'])
  assert.equal(actionSchemaProblem({ properties: { a: { default: Number.POSITIVE_INFINITY } } })?.expected, 'a JSON value')
  assert.is(actionSchemaProblem({ format: 'uri', title: 't', definitions: {}, 'x-custom': [1] }), undefined, 'annotations and unknown keywords are fine')
  let deep: Record<string, unknown> = { type: 'string' }
  for (let i = 0; i <= limits.actionParamsDepthMax; i++) deep = { type: 'object', properties: { d: deep } }
  assert.match(actionSchemaProblem(deep)!.expected, /^a schema nested at most \d+ deep$/)
  assert.is(error(validateActionParams('act', { properties: { a: { oneOf: [] } } }, {})),
    'cannot run "act" action: invalid parameter schema: field "properties.a": expected only keywords of the draft-4 subset cantrip checks (not "$ref", "$schema", "allOf", "anyOf", "oneOf", "not", "patternProperties", "dependencies"), got "oneOf"')
})

test.run()
