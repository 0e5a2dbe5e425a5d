/**
 * The tokens of wait-for's query language, after Juju's cmd/juju/waitfor/query/lexer.go:
 * names may hold letters, digits, `-` and `_` (`workload-status`), strings are in double
 * quotes on one line, numbers are integers or decimals, `true` and `false` are booleans,
 * and the operators are `==` `!=` `<` `<=` `>` `>=` `&&` `||` `!` `=>` `.` `,` `(` `)`.
 * Columns are 1-based so an error can point at the character.
 */
import { QuerySyntaxError } from './query-errors.ts'

export type QueryTokenType = 'name' | 'string' | 'number' | 'bool' | 'operator' | 'end'

export interface QueryToken {
  readonly type: QueryTokenType
  /** The name, the string's content, the number's or boolean's text, or the operator. */
  readonly text: string
  readonly column: number
}

/** Longest first, so `==` is not read as `=` then `=`. */
const operators = ['==', '!=', '<=', '>=', '&&', '||', '=>', '<', '>', '!', '.', ',', '(', ')']

const nameStart = /[A-Za-z_]/
const namePart = /[A-Za-z0-9_-]/
const digit = /[0-9]/

export function lexQuery (component: string, source: string): QueryToken[] {
  const tokens: QueryToken[] = []
  let at = 0
  while (at < source.length) {
    const char = source[at]!
    if (/\s/.test(char)) { at++; continue }
    const token = nextToken(component, source, at)
    tokens.push(token.token)
    at = token.next
  }
  tokens.push({ type: 'end', text: '', column: source.length + 1 })
  return tokens
}

function nextToken (component: string, source: string, at: number): { token: QueryToken, next: number } {
  const char = source[at]!
  const column = at + 1
  if (char === '"') return readString(component, source, at)
  if (digit.test(char)) return readNumber(source, at)
  if (nameStart.test(char)) {
    let end = at + 1
    while (end < source.length && namePart.test(source[end]!)) end++
    const text = source.slice(at, end)
    return { token: { type: text === 'true' || text === 'false' ? 'bool' : 'name', text, column }, next: end }
  }
  const operator = operators.find(op => source.startsWith(op, at))
  if (operator !== undefined) return { token: { type: 'operator', text: operator, column }, next: at + operator.length }
  const hint = char === '=' ? '"==" or "=>"' : char === '&' ? '"&&"' : char === '|' ? '"||"' : 'a name, a value or an operator'
  throw new QuerySyntaxError(component, column, hint, JSON.stringify(char))
}

function readString (component: string, source: string, at: number): { token: QueryToken, next: number } {
  const close = source.indexOf('"', at + 1)
  const newline = source.indexOf('\n', at + 1)
  if (close < 0 || (newline >= 0 && newline < close)) {
    throw new QuerySyntaxError(component, at + 1, 'a closing quote for the string', 'the end of the line')
  }
  return { token: { type: 'string', text: source.slice(at + 1, close), column: at + 1 }, next: close + 1 }
}

function readNumber (source: string, at: number): { token: QueryToken, next: number } {
  let end = at
  while (end < source.length && digit.test(source[end]!)) end++
  // A decimal point only counts when a digit follows it.
  if (source[end] === '.' && digit.test(source[end + 1] ?? '')) {
    end++
    while (end < source.length && digit.test(source[end]!)) end++
  }
  return { token: { type: 'number', text: source.slice(at, end), column: at + 1 }, next: end }
}
