import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml'
import { gotValue, InvalidCharmError } from '../../runtime/charm/charm-error.ts'
import { limits } from '../../runtime/limits.ts'

/**
 * One charm file's YAML, parsed defensively: YAML 1.2 core schema only (no custom or
 * YAML 1.1 tags, so nothing turns into a Buffer, a Set or a Date), unique string keys,
 * one document, aliases capped with yaml's `maxAliasCount`, and the result bounded in
 * depth and size before anything walks it. A problem is an InvalidCharmError naming the
 * field path where there is one.
 *
 * YAML 1.2 differs from the YAML 1.1 that Juju's Go parser reads in a few corners:
 * `yes`/`no`/`on`/`off` are strings here, not booleans, and the checks that follow then
 * refuse them where a boolean is wanted, with a message saying so.
 */

/** Explicit tags a charm file may use: the core schema's own, which change nothing. */
const coreTags = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map(tag => `tag:yaml.org,2002:${tag}`))

export function parseCharmYaml (text: string, charm: string, file: string): unknown {
  const fail: (field: string | undefined, expected: string, got: string) => never = (field, expected, got) => {
    throw new InvalidCharmError(charm, file, field, expected, got)
  }
  const lineCounter = new LineCounter()
  const at = (offset: number | undefined): string => {
    if (offset === undefined) return ''
    const { line, col } = lineCounter.linePos(offset)
    return ` at line ${line}, column ${col}`
  }

  const doc = parseDocument(text, {
    version: '1.2',
    schema: 'core',
    merge: false,
    resolveKnownTags: false,
    uniqueKeys: false, // Checked below, where the field path is known.
    prettyErrors: false,
    strict: true,
    lineCounter
  })
  const error = doc.errors[0]
  if (error !== undefined) {
    // The yaml parser catches its own stack overflow on deep nesting and reports it here.
    const message = error.code === 'RESOURCE_EXHAUSTION' ? `nesting too deep to parse` : firstLine(error.message)
    fail(undefined, 'valid YAML', `${JSON.stringify(message)}${at(error.pos[0])}`)
  }

  // Walk the syntax tree (explicitly, no recursion) for what toJS would hide: tags,
  // duplicate and non-string keys, and nesting.
  const stack: Array<{ node: unknown, path: string, depth: number }> = [{ node: doc.contents, path: '', depth: 0 }]
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop()!
    if (node === null || node === undefined || isAlias(node)) continue
    const field = path === '' ? undefined : path
    const tag = (node as Node).tag
    if (tag !== undefined && !coreTags.has(tag)) fail(field, 'no YAML tags beyond the core schema', `${JSON.stringify(tag)}${at((node as Node).range?.[0])}`)
    if (depth > limits.charmYamlDepthMax) fail(field, `YAML nested at most ${limits.charmYamlDepthMax} deep`, `deeper nesting${at((node as Node).range?.[0])}`)
    if (isMap(node)) {
      const seen = new Set<string>()
      for (const pair of node.items) {
        if (!isPair(pair)) continue
        const key = pair.key
        if (!isScalar(key) || typeof key.value !== 'string') {
          const rendered = isScalar(key) ? gotValue(key.value) : isAlias(key) ? 'an alias' : key === null ? 'an empty key' : 'a collection'
          fail(field, 'map keys that are strings', `${rendered}${at((key as Node | null)?.range?.[0] ?? node.range?.[0])}`)
        }
        const keyPath = path === '' ? key.value : `${path}.${key.value}`
        if (key.tag !== undefined && !coreTags.has(key.tag)) fail(keyPath, 'no YAML tags beyond the core schema', `${JSON.stringify(key.tag)}${at(key.range?.[0])}`)
        if (seen.has(key.value)) fail(keyPath, 'each key once in its map', `a second ${JSON.stringify(key.value)}${at(key.range?.[0])}`)
        seen.add(key.value)
        stack.push({ node: pair.value, path: keyPath, depth: depth + 1 })
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => stack.push({ node: item, path: `${path}[${index}]`, depth: depth + 1 }))
    }
  }

  // Tag warnings were reported above with their field; anything else (an unknown or
  // unsupported directive) is refused too rather than half-understood.
  const warning = doc.warnings[0]
  if (warning !== undefined) fail(undefined, 'valid YAML without warnings', `${JSON.stringify(firstLine(warning.message))}${at(warning.pos[0])}`)

  let value: unknown
  try {
    value = doc.toJS({ maxAliasCount: limits.charmYamlAliasesMax })
  } catch (cause) {
    // yaml throws ReferenceError for an alias bomb and for an alias to an undefined anchor.
    const message = cause instanceof Error ? firstLine(cause.message) : String(cause)
    throw new InvalidCharmError(charm, file, undefined, `YAML whose aliases expand at most ${limits.charmYamlAliasesMax} times each and name earlier anchors`, JSON.stringify(message), { cause })
  }
  checkExpandedSize(value, charm, file)
  return value
}

/** After aliases are expanded the same subtree may be reached many times; bound the total work. */
function checkExpandedSize (value: unknown, charm: string, file: string): void {
  const stack: Array<{ value: unknown, depth: number }> = [{ value, depth: 0 }]
  let values = 0
  while (stack.length > 0) {
    const item = stack.pop()!
    if (++values > limits.charmYamlValuesMax) {
      throw new InvalidCharmError(charm, file, undefined, `at most ${limits.charmYamlValuesMax} YAML values once aliases are expanded`, 'more')
    }
    if (item.depth > limits.charmYamlDepthMax) {
      throw new InvalidCharmError(charm, file, undefined, `YAML nested at most ${limits.charmYamlDepthMax} deep once aliases are expanded`, 'deeper nesting')
    }
    if (Array.isArray(item.value)) {
      for (const element of item.value) stack.push({ value: element, depth: item.depth + 1 })
    } else if (typeof item.value === 'object' && item.value !== null) {
      for (const element of Object.values(item.value)) stack.push({ value: element, depth: item.depth + 1 })
    }
  }
}

function firstLine (message: string): string {
  return message.split('\n', 1)[0]!.replace(/:\s*$/, '')
}
