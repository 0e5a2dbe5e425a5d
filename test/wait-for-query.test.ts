/**
 * wait-for's query language (runtime/query/): tokens, the tree the parser builds, what a
 * query evaluates to over a scope, and the one-line error for each kind of bad query.
 * The expressions are Juju's own, from cmd/juju/waitfor/query/parser_test.go and
 * query_test.go, the commands' SetFlags defaults and examples (application.go, unit.go,
 * machine.go, model.go) and the `juju wait-for` reference pages; where cantrip differs
 * (`!`, one expression per query) the test says so.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { limits } from '../runtime/limits.ts'
import { closestName } from '../runtime/query/closest-name.ts'
import { evaluateQuery } from '../runtime/query/query-evaluator.ts'
import { lexQuery } from '../runtime/query/query-lexer.ts'
import { parseQuery } from '../runtime/query/query-parser.ts'
import { queryList, queryScope, type QueryScope } from '../runtime/query/query-scope.ts'

const component = 'cantrip wait-for'

function unit (name: string, workload: string, agent: string): QueryScope {
  return queryScope(`unit "${name}"`, { name, life: 'alive', 'workload-status': workload, 'agent-status': agent }, { collection: 'units', key: name })
}

function app (units: QueryScope[]): QueryScope {
  return queryScope('application "ubuntu"', {
    name: 'ubuntu', life: 'alive', status: 'active', exposed: false, 'min-units': 0, 'workload-version': '1.2.3', units: queryList(units), machines: queryList([])
  })
}

const two = app([unit('ubuntu/0', 'active', 'idle'), unit('ubuntu/1', 'active', 'executing')])

function run (source: string, scope: QueryScope = two): boolean {
  return evaluateQuery(component, parseQuery(component, source), scope).reached
}

function failure (action: () => unknown): string {
  try { action() } catch (error) { return (error as Error).message }
  throw new Error('expected a failure')
}

test('lexer: names keep "-", strings, numbers, booleans, two-character operators first (Juju lexer.go)', () => {
  const tokens = lexQuery(component, 'workload-status=="active" && len(units)>=2.5 || !true')
  assert.equal(tokens.map(t => `${t.type}:${t.text}@${t.column}`), [
    'name:workload-status@1', 'operator:==@16', 'string:active@18', 'operator:&&@27', 'name:len@30', 'operator:(@33',
    'name:units@34', 'operator:)@39', 'operator:>=@40', 'number:2.5@42', 'operator:||@46', 'operator:!@49', 'bool:true@50', 'end:@54'
  ])
  assert.equal(lexQuery(component, 'x => x.name').map(t => t.text), ['x', '=>', 'x', '.', 'name', ''])
})

test('parser: the trees of Juju\'s parser_test.go cases, with its precedence (|| below &&)', () => {
  assert.equal(parseQuery(component, 'life'), { type: 'name', name: 'life', column: 1 })
  assert.equal(parseQuery(component, '"abc"'), { type: 'literal', value: 'abc', column: 1 })
  assert.equal(parseQuery(component, '1'), { type: 'literal', value: 1, column: 1 })
  assert.equal(parseQuery(component, '1.1'), { type: 'literal', value: 1.1, column: 1 })
  assert.equal(parseQuery(component, '(abc)'), { type: 'name', name: 'abc', column: 2 })
  assert.equal(parseQuery(component, 'true && true'), {
    type: 'binary', operator: '&&', column: 6, left: { type: 'literal', value: true, column: 1 }, right: { type: 'literal', value: true, column: 9 }
  })
  const mixed = parseQuery(component, 'a || b && c == "x"')
  assert.is(mixed.type === 'binary' && mixed.operator, '||')
  assert.is(mixed.type === 'binary' && mixed.right.type === 'binary' && mixed.right.operator, '&&')
  const lambda = parseQuery(component, 'forEach(units, unit => unit.workload-status == "active")')
  assert.equal(lambda, {
    type: 'call', callee: 'forEach', column: 1, args: [
      { type: 'name', name: 'units', column: 9 },
      {
        type: 'lambda', parameter: 'unit', column: 16, body: {
          type: 'binary', operator: '==', column: 45,
          left: { type: 'member', object: { type: 'name', name: 'unit', column: 24 }, name: 'workload-status', column: 29 },
          right: { type: 'literal', value: 'active', column: 48 }
        }
      }
    ]
  })
})

test('evaluation: Juju\'s defaults, documented examples and query_test.go cases', () => {
  // query_test.go TestQueryScope.
  assert.ok(run('life == "death" || life == "alive"'))
  // The default queries (SetFlags in application.go and unit.go).
  assert.ok(run('life=="alive" && status=="active"'))
  assert.ok(run('life=="alive" && workload-status=="active"', unit('ubuntu/0', 'active', 'idle')))
  // `juju wait-for` reference: application, unit and model examples.
  assert.ok(run('name=="ubuntu" && (status=="active" || status=="idle")'))
  assert.not.ok(run('len(units) == 4'))
  assert.ok(run('len(units) == 2'))
  assert.ok(run('forEach(units, unit => startsWith(unit.name, "ubuntu"))'))
  assert.ok(run('forEach(units, unit => unit.workload-status == "active")'))
  assert.not.ok(run('forEach(units, unit => unit.agent-status == "idle")'), 'ubuntu/1 is executing')
  assert.ok(run('len(machines) == 0 && endsWith(name, "untu")'))
})

test('evaluation: comparisons by type, truthiness, short-circuit, forEach over nothing is false (Juju funcs.go)', () => {
  assert.not.ok(run('min-units == "0"'), 'a number never equals a string')
  assert.ok(run('min-units == 0 && min-units < 1 && min-units >= 0 && 1.5 > 1'))
  assert.ok(run('"a" < "b" && !("b" <= "a")'), '`!` is cantrip\'s own; Juju has no prefix operator')
  assert.not.ok(run('status < 3'), 'mixed types do not order')
  assert.ok(run('name'), 'a non-empty string holds')
  assert.not.ok(run('0'))
  assert.ok(run('true || nosuchname'), '|| stops at true without reading the right side')
  assert.not.ok(run('false && nosuchname'))
  assert.not.ok(run('forEach(units, u => true)', app([])), 'an empty list does not satisfy forEach')
  assert.ok(run('int("42") == 42'))
})

test('reads are recorded for the summary: the scope\'s own, then each unit forEach visited', () => {
  const outcome = evaluateQuery(component, parseQuery(component, 'status=="active" && forEach(units, unit => unit.workload-status == "active")'), two)
  assert.ok(outcome.reached)
  assert.equal(outcome.reads.map(r => `${r.scope.entry?.key ?? '-'} ${r.name}=${String(r.value)}`), [
    '- status=active', 'ubuntu/0 workload-status=active', 'ubuntu/1 workload-status=active'
  ])
})

test('syntax errors: one line naming cantrip wait-for, the column, what was expected and what came', () => {
  const cases: Array<[string, string]> = [
    ['status==', 'cannot parse query at column 9: expected a value (a name, a "string", a number, true, false, "(" or "!"), got the end of the query'],
    ['status=="active', 'cannot parse query at column 9: expected a closing quote for the string, got the end of the line'],
    ['status="active"', 'cannot parse query at column 7: expected "==" or "=>", got "="'],
    ['a & b', 'cannot parse query at column 3: expected "&&", got "&"'],
    ['(status=="active"', 'cannot parse query at column 18: expected a closing ")", got the end of the query'],
    ['status=="active" life', 'cannot parse query at column 18: expected an operator ("&&", "||", "==" …) or the end of the query, got "life"'],
    // Juju's parser accepts `life; abc;` and `true false` (several expressions, the first decides); cantrip takes one.
    ['true false', 'cannot parse query at column 6: expected an operator ("&&", "||", "==" …) or the end of the query, got "false"'],
    ['units.', 'cannot parse query at column 7: expected a name after ".", got the end of the query'],
    ['status # 1', 'cannot parse query at column 8: expected a name, a value or an operator, got "#"'],
    ['len(units', 'cannot parse query at column 10: expected a "," or a closing ")" after the argument, got the end of the query']
  ]
  for (const [source, message] of cases) {
    const got = failure(() => parseQuery(component, source))
    assert.is(got, `cantrip wait-for: ${message}`, source)
    assert.not.match(got, '\n')
  }
})

test('evaluation errors: an unknown name lists the scope\'s names and the closest; wrong types say what was expected', () => {
  assert.is(failure(() => run('statuss=="active"')),
    'cantrip wait-for: cannot run query at column 1: expected a name of application "ubuntu" (exposed, life, machines, min-units, name, status, units, workload-version), got "statuss" (did you mean "status"?)')
  // Juju's reference page example reads unit.status, which its unit scope (unit.go) does not have either.
  assert.is(failure(() => run('forEach(units, unit => unit.life=="alive" && unit.status=="available")')),
    'cantrip wait-for: cannot run query at column 51: expected a name of unit "ubuntu/0" (agent-status, life, name, workload-status), got "status"')
  assert.is(failure(() => run('status && true')), 'cantrip wait-for: cannot run query at column 1: expected true or false for "&&", got "active"')
  assert.is(failure(() => run('nope(units)')), 'cantrip wait-for: cannot run query at column 1: expected a name of a function (endsWith, forEach, int, len, startsWith), got "nope"')
  assert.is(failure(() => run('forEach(status, u => true)')), 'cantrip wait-for: cannot run query at column 1: expected a list (units, machines or applications) as forEach\'s first argument, got "active"')
  assert.is(failure(() => run('len(units, 1)')), 'cantrip wait-for: cannot run query at column 1: expected 1 arguments for len, got 2')
  assert.is(failure(() => run('status.name')), 'cantrip wait-for: cannot run query at column 8: expected an application, unit, machine or model before ".name", got "active"')
})

test('bounds: a query past limits.queryLengthMax or nested past queryDepthMax is refused, not recursed into', () => {
  assert.match(failure(() => parseQuery(component, 'a'.repeat(limits.queryLengthMax + 1))), `expected a query of at most ${limits.queryLengthMax} characters`)
  const deep = '('.repeat(limits.queryDepthMax + 1) + 'true' + ')'.repeat(limits.queryDepthMax + 1)
  assert.match(failure(() => parseQuery(component, deep)), `expected a query nested at most ${limits.queryDepthMax} deep`)
  const chain = Array.from({ length: limits.queryDepthMax + 2 }, () => 'true').join(' && ')
  assert.match(failure(() => parseQuery(component, chain)), 'nested at most')
  assert.ok(run(Array.from({ length: 10 }, () => 'true').join(' && ')))
})

test('closest name: near misses suggest, unrelated words do not', () => {
  assert.is(closestName('workload-stats', ['agent-status', 'workload-status']), 'workload-status')
  assert.is(closestName('lfe', ['life', 'name']), 'life')
  assert.is(closestName('banana', ['life', 'name', 'status']), undefined)
})

test.run()
