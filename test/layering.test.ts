/**
 * Enforces DESIGN.md §3: who may import whom, and which globals pure code may not
 * touch. Pure code (actors/, runtime/) gets time, randomness, processes and I/O only
 * through the injected contracts, which is what lets the simulator run the code that
 * ships. Every violation is reported as `file:line: rule`.
 *
 * The scanner is a small lexer rather than the TypeScript compiler API so it keeps
 * working if the project moves to TypeScript 7, which has no compiler API.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'

const test = suite('layering')

/** `bin` holds the executables' composition roots: the one place that may put agent/ and sim/ together. */
type Layer = 'actors' | 'runtime' | 'providers' | 'agent' | 'sim' | 'bin'
const layers: readonly Layer[] = ['runtime', 'actors', 'providers', 'agent', 'sim', 'bin']

/** Folders each layer may import from (relative imports). */
const importableFolders: Readonly<Record<Layer, readonly string[]>> = {
  actors: ['actors', 'runtime'],
  runtime: ['runtime'],
  providers: ['providers', 'runtime'],
  agent: ['agent', 'runtime', 'actors', 'providers'],
  sim: ['sim', 'runtime', 'actors', 'providers'],
  bin: ['bin', 'agent', 'sim', 'runtime', 'actors', 'providers']
}

/** Packages each layer may import; undefined means any. */
const importablePackages: Readonly<Record<Layer, readonly string[] | undefined>> = {
  actors: ['xstate', '@xstate/store'],
  runtime: ['xstate', '@xstate/store', 'msgpackr'],
  providers: [],
  agent: undefined,
  sim: undefined,
  bin: undefined
}

/**
 * Single files a layer may import only for their types (`import type`), although their
 * folder is otherwise closed to it: the provisioner in actors/ drives a Provider, and the
 * contract lives with its implementations in providers/ (DESIGN.md §3).
 */
const typeOnlyFiles: Readonly<Record<Layer, readonly string[]>> = {
  actors: ['providers/provider-contract.ts'],
  runtime: [],
  providers: [],
  agent: [],
  sim: [],
  bin: []
}

const nodeBuiltinsAllowed: Readonly<Record<Layer, boolean>> = {
  actors: false, runtime: false, providers: false, agent: true, sim: true, bin: true
}

/** Layers whose code must be pure: no ambient time, randomness, process or timers. */
const pureLayers: ReadonlySet<Layer> = new Set(['actors', 'runtime'])

/** The one file allowed to patch a global: Node 20 lacks Promise.withResolvers. */
const globalPatchAllowed = new Set(['runtime/polyfill.ts'])

interface SourceFile { path: string, text: string }

// ---------------------------------------------------------------------------------
// Lexing: blank out comments (and, for the globals scan, literal contents) while
// keeping every newline, so offsets still map to the right line.

interface Blanked {
  /** Comments replaced by spaces; strings intact (import specifiers live in them). */
  code: string
  /** Also string, template and regex literal contents replaced by spaces. */
  bare: string
}

const regexAfterWords = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'instanceof', 'yield', 'await'])

function blank (text: string): Blanked {
  const code: string[] = []
  const bare: string[] = []
  const keep = (ch: string): void => { code.push(ch); bare.push(ch) }
  const comment = (ch: string): void => { const c = ch === '\n' ? '\n' : ' '; code.push(c); bare.push(c) }
  const literal = (ch: string): void => { code.push(ch); bare.push(ch === '\n' ? '\n' : ' ') }
  /** Brace depth inside each open `${`; empty when not inside a template expression. */
  const templateDepths: number[] = []
  let lastSignificant = ''
  let lastWord = ''
  let i = 0
  const n = text.length

  const readTemplate = (): void => {
    // At the character after ` or after the closing } of a ${...}.
    while (i < n) {
      const ch = text[i]!
      if (ch === '\\') { literal(ch); if (i + 1 < n) literal(text[i + 1]!); i += 2; continue }
      if (ch === '`') { keep(ch); i++; lastSignificant = '`'; return }
      if (ch === '$' && text[i + 1] === '{') { keep('$'); keep('{'); i += 2; templateDepths.push(0); lastSignificant = '{'; return }
      literal(ch); i++
    }
  }

  while (i < n) {
    const ch = text[i]!
    const next = text[i + 1]
    if (ch === '/' && next === '/') {
      while (i < n && text[i] !== '\n') comment(text[i++]!)
      continue
    }
    if (ch === '/' && next === '*') {
      comment(ch); comment(next); i += 2
      while (i < n && !(text[i] === '*' && text[i + 1] === '/')) comment(text[i++]!)
      if (i < n) { comment('*'); comment('/'); i += 2 }
      continue
    }
    if (ch === '\'' || ch === '"') {
      keep(ch); i++
      while (i < n && text[i] !== ch && text[i] !== '\n') {
        if (text[i] === '\\' && i + 1 < n) { literal(text[i]!); i++ }
        literal(text[i]!); i++
      }
      if (i < n) { keep(text[i]!); i++ }
      lastSignificant = ch
      continue
    }
    if (ch === '`') {
      keep(ch); i++
      readTemplate()
      continue
    }
    if (ch === '/' && (lastSignificant === '' || '(,=:[!&|?{};+-*%<>~^'.includes(lastSignificant) || (/[\w$]/.test(lastSignificant) && regexAfterWords.has(lastWord)))) {
      keep(ch); i++
      let inClass = false
      while (i < n && text[i] !== '\n') {
        const c = text[i]!
        if (c === '\\' && i + 1 < n) { literal(c); literal(text[i + 1]!); i += 2; continue }
        if (c === '[') inClass = true
        else if (c === ']') inClass = false
        else if (c === '/' && !inClass) break
        literal(c); i++
      }
      if (i < n && text[i] === '/') { keep('/'); i++ }
      while (i < n && /[a-z]/i.test(text[i]!)) keep(text[i++]!)
      lastSignificant = ')'
      continue
    }
    if (templateDepths.length > 0) {
      if (ch === '{') templateDepths[templateDepths.length - 1]!++
      else if (ch === '}') {
        if (templateDepths[templateDepths.length - 1] === 0) {
          templateDepths.pop()
          keep(ch); i++
          readTemplate()
          continue
        }
        templateDepths[templateDepths.length - 1]!--
      }
    }
    keep(ch); i++
    if (/[\w$]/.test(ch)) {
      lastWord = /[\w$]/.test(lastSignificant) && !/\s/.test(text[i - 2] ?? '') ? lastWord + ch : ch
    }
    if (!/\s/.test(ch)) lastSignificant = ch
  }
  return { code: code.join(''), bare: bare.join('') }
}

function lineAt (text: string, offset: number): number {
  let line = 1
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

// ---------------------------------------------------------------------------------
// Rules.

const importPatterns = [
  // import … from '…' / export … from '…' (possibly over several lines)
  /(?:^|[;\n}])\s*(?:import|export)\b[^'"`;]*?\bfrom\s*(['"])([^'"\n]+)\1/g,
  // import '…'
  /(?:^|[;\n}])\s*import\s*(['"])([^'"\n]+)\1/g,
  // import('…') and require('…')
  /\b(?:import|require)\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g
]

function layerOf (path: string): Layer | undefined {
  const top = path.split('/')[0]
  return layers.find(layer => layer === top)
}

function packageName (specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
}

function isNodeBuiltin (specifier: string): boolean {
  return specifier.startsWith('node:') || builtinModules.includes(specifier) || builtinModules.includes(packageName(specifier))
}

interface Violation { path: string, line: number, rule: string }

function checkImports (file: SourceFile, layer: Layer, code: string): Violation[] {
  const violations: Violation[] = []
  const seen = new Set<number>()
  for (const pattern of importPatterns) {
    for (const match of code.matchAll(pattern)) {
      const specifier = match[2]!
      const offset = match.index + match[0].lastIndexOf(specifier)
      if (seen.has(offset)) continue
      seen.add(offset)
      const line = lineAt(code, offset)
      const typeOnly = /^[;\n}]?\s*(?:import|export)\s+type\b/.test(match[0])
      const problem = importProblem(file.path, layer, specifier, typeOnly)
      if (problem !== undefined) violations.push({ path: file.path, line, rule: problem })
    }
  }
  return violations
}

function importProblem (path: string, layer: Layer, specifier: string, typeOnly = false): string | undefined {
  const quoted = JSON.stringify(specifier)
  if (specifier.startsWith('.')) {
    const target = posix.normalize(posix.join(posix.dirname(path), specifier))
    const folder = target.split('/')[0]!
    if (typeOnlyFiles[layer].includes(target) && !importableFolders[layer].includes(folder)) {
      return typeOnly ? undefined : `${layer}/ may import ${target} only for its types (import type), got a value import (${quoted})`
    }
    if (target.startsWith('..') || !importableFolders[layer].includes(folder)) {
      return `${layer}/ may not import ${folder}/ (${quoted}); allowed: ${importableFolders[layer].map(f => `${f}/`).join(', ')}`
    }
    return undefined
  }
  if (isNodeBuiltin(specifier)) {
    return nodeBuiltinsAllowed[layer] ? undefined : `${layer}/ may not import the node builtin ${quoted}; use the runtime/ contracts`
  }
  const allowed = importablePackages[layer]
  if (allowed !== undefined && !allowed.includes(packageName(specifier))) {
    return `${layer}/ may not import the package ${quoted}; allowed: ${allowed.length === 0 ? 'none' : allowed.join(', ')}`
  }
  return undefined
}

const timerNames = 'setTimeout|setInterval|setImmediate|clearTimeout|clearInterval|clearImmediate'

const globalRules: ReadonlyArray<{ pattern: RegExp, rule: string }> = [
  { pattern: /(?<![\w$.])Date\b/g, rule: 'uses Date; take time from the injected Clock' },
  { pattern: /(?<![\w$.])Math\s*\.\s*random\b/g, rule: 'uses Math.random; use the injected Random' },
  { pattern: new RegExp(`(?<![\\w$.])(?:${timerNames})\\b(?!\\s*\\??\\s*:)`, 'g'), rule: 'uses a global timer; use the injected Clock' },
  { pattern: /(?<![\w$.])process\s*\./g, rule: 'uses process.; pass what is needed in from agent/' },
  { pattern: /(?<![\w$.])performance\s*\./g, rule: 'uses performance.; take time from the injected Clock' },
  { pattern: new RegExp(`\\b(?:globalThis|global|window|self)\\s*\\.\\s*(?:${timerNames}|Date|Math|process|performance)\\b`, 'g'), rule: 'reaches a banned global through globalThis' }
]

const promisePatch = /(?<![\w$.])Promise\s*\.\s*(?:prototype\b|[\w$]+\s*=(?![=>]))/g

/**
 * `setTimeout (cb: () => void, ms: number): TimerHandle` in an interface, or a method
 * `setTimeout (cb, ms) { … }`, declares a member; it is not the global. Whatever follows
 * the parameter list decides: a type annotation or a body.
 */
function isMemberDeclaration (bare: string, nameEnd: number): boolean {
  let i = nameEnd
  while (i < bare.length && /\s/.test(bare[i]!)) i++
  if (bare[i] !== '(') return false
  let depth = 0
  for (; i < bare.length; i++) {
    if (bare[i] === '(') depth++
    else if (bare[i] === ')' && --depth === 0) break
  }
  i++
  while (i < bare.length && /\s/.test(bare[i]!)) i++
  return bare[i] === ':' || bare[i] === '{'
}

function checkGlobals (file: SourceFile, bare: string): Violation[] {
  const violations: Violation[] = []
  for (const { pattern, rule } of globalRules) {
    for (const match of bare.matchAll(pattern)) {
      if (rule.includes('timer') && isMemberDeclaration(bare, match.index + match[0].length)) continue
      violations.push({ path: file.path, line: lineAt(bare, match.index), rule })
    }
  }
  if (!globalPatchAllowed.has(file.path)) {
    for (const match of bare.matchAll(promisePatch)) {
      violations.push({ path: file.path, line: lineAt(bare, match.index), rule: 'patches Promise; only runtime/polyfill.ts may' })
    }
  }
  return violations
}

function scan (file: SourceFile): Violation[] {
  const layer = layerOf(file.path)
  if (layer === undefined) return []
  const { code, bare } = blank(file.text)
  const violations = checkImports(file, layer, code)
  if (pureLayers.has(layer)) violations.push(...checkGlobals(file, bare))
  return violations.sort((a, b) => a.line - b.line)
}

const format = (v: Violation): string => `${v.path}:${v.line}: ${v.rule}`

function sourceFiles (root: string): SourceFile[] {
  const files: SourceFile[] = []
  const walk = (relative: string): void => {
    let entries: string[]
    try {
      entries = readdirSync(posix.join(root, relative))
    } catch {
      return
    }
    for (const entry of entries.sort()) {
      if (entry === 'node_modules' || entry.startsWith('.')) continue
      const path = posix.join(relative, entry)
      if (statSync(posix.join(root, path)).isDirectory()) walk(path)
      else if (entry.endsWith('.ts')) files.push({ path, text: readFileSync(posix.join(root, path), 'utf8') })
    }
  }
  for (const layer of layers) walk(layer)
  return files
}

// ---------------------------------------------------------------------------------

test('the tree follows the layering rules of DESIGN.md §3', () => {
  const root = posix.join(posix.dirname(fileURLToPath(import.meta.url)), '..')
  const files = sourceFiles(root)
  assert.ok(files.some(f => f.path === 'runtime/clock.ts'), 'scanner found no runtime/ files')
  const violations = files.flatMap(scan).map(format)
  assert.ok(violations.length === 0, `${violations.length} layering violations:\n${violations.join('\n')}`)
})

// Issue 22: no source file in the layers over 800 lines (one concept per file), and no
// model command or API body forced through `unknown` (the typed tables carry them).
const linesMax = 800
const commandCast = /as unknown as (?:ModelCommand|CommandOf<|ApiRequests|ApiReplies)/

test('no source file in actors/, runtime/, agent/, providers/ or sim/ is over 800 lines; no command or API body is cast through unknown', () => {
  const root = posix.join(posix.dirname(fileURLToPath(import.meta.url)), '..')
  const files = sourceFiles(root)
  const long = files.map(f => ({ path: f.path, lines: f.text.split('\n').length - (f.text.endsWith('\n') ? 1 : 0) })).filter(f => f.lines > linesMax)
  assert.equal(long.map(f => `${f.path}: ${f.lines} lines`), [])
  const casts = files.filter(f => commandCast.test(f.text)).map(f => f.path)
  assert.equal(casts, [])
})

test('self-test: violations are reported with file and line; comments and strings are not', () => {
  const text = [
    "import { readFile } from 'node:fs'", // 1
    "import { thing } from '../../agent/thing.ts'", // 2
    '// Date.now() in a comment is fine', // 3
    "const s = 'setTimeout( and process.env in a string' // Math.random()", // 4
    'const t = Date.now()', // 5
    '/* Math.random()', // 6
    ' */ const r = Math.random()', // 7
    'setTimeout(() => {}, 1)', // 8
    'export const y = process.env.X', // 9
    "import level from 'level'", // 10
    'const re = /\'\\/\\/"/g; const when = `at ${new Date()}`', // 11
    "import { createMachine } from 'xstate'", // 12
    "import type { Clock } from '../../runtime/clock.ts'", // 13
    'const p = performance.now(); globalThis.setInterval(() => {}, 5)', // 14
    'import fs from "fs"', // 15
    'const late = await import(\'../../sim/sim-clock.ts\')', // 16
    'Promise.withResolvers = undefined' // 17
  ].join('\n')
  const found = scan({ path: 'actors/unit/bad.ts', text }).map(format)
  assert.equal(found, [
    'actors/unit/bad.ts:1: actors/ may not import the node builtin "node:fs"; use the runtime/ contracts',
    'actors/unit/bad.ts:2: actors/ may not import agent/ ("../../agent/thing.ts"); allowed: actors/, runtime/',
    'actors/unit/bad.ts:5: uses Date; take time from the injected Clock',
    'actors/unit/bad.ts:7: uses Math.random; use the injected Random',
    'actors/unit/bad.ts:8: uses a global timer; use the injected Clock',
    'actors/unit/bad.ts:9: uses process.; pass what is needed in from agent/',
    'actors/unit/bad.ts:10: actors/ may not import the package "level"; allowed: xstate, @xstate/store',
    'actors/unit/bad.ts:11: uses Date; take time from the injected Clock',
    'actors/unit/bad.ts:14: uses performance.; take time from the injected Clock',
    'actors/unit/bad.ts:14: reaches a banned global through globalThis',
    'actors/unit/bad.ts:15: actors/ may not import the node builtin "fs"; use the runtime/ contracts',
    'actors/unit/bad.ts:16: actors/ may not import sim/ ("../../sim/sim-clock.ts"); allowed: actors/, runtime/',
    'actors/unit/bad.ts:17: patches Promise; only runtime/polyfill.ts may'
  ])
})

test('self-test: member declarations and method calls named like timers are allowed', () => {
  const text = [
    'export interface Clock {',
    '  setTimeout (callback: () => void, delayMs: number): TimerHandle',
    '  clearTimeout?: (handle: unknown) => void',
    '}',
    'const clock = { setTimeout (cb: () => void, ms: number) { return 1 }, clearTimeout: (h: unknown) => {} }',
    'clock.setTimeout(() => {}, 5)',
    'const value = { update: 1 }.update // not Date',
    'const text = `${clock.setTimeout(() => {}, 1)} and ${"Date"}`'
  ].join('\n')
  assert.equal(scan({ path: 'runtime/clock-like.ts', text }).map(format), [])
})

test('self-test: each layer has its own import rules', () => {
  const check = (path: string, specifier: string): string[] =>
    scan({ path, text: `import x from '${specifier}'\n` }).map(v => v.rule)
  assert.equal(check('runtime/x.ts', '../actors/unit/unit-machine.ts').length, 1)
  assert.equal(check('runtime/x.ts', 'msgpackr'), [])
  assert.equal(check('actors/x.ts', 'msgpackr').length, 1)
  assert.equal(check('providers/local/x.ts', '../../runtime/clock.ts'), [])
  assert.equal(check('providers/local/x.ts', '../other.ts'), [])
  assert.equal(check('providers/x.ts', 'node:child_process').length, 1)
  assert.equal(check('providers/x.ts', '../agent/x.ts').length, 1)
  assert.equal(check('agent/x.ts', 'node:child_process'), [])
  assert.equal(check('agent/x.ts', 'libp2p'), [])
  assert.equal(check('agent/x.ts', '../sim/sim-clock.ts').length, 1)
  assert.equal(check('sim/x.ts', '../agent/system-clock.ts').length, 1)
  assert.equal(check('sim/x.ts', '../actors/unit/unit-machine.ts'), [])
  assert.equal(check('sim/x.ts', '../test/support/x.ts').length, 1)
  assert.equal(check('runtime/polyfill.ts', 'xstate'), [])
  assert.equal(scan({ path: 'runtime/polyfill.ts', text: 'Promise.withResolvers = function () {}' }), [])
  assert.equal(scan({ path: 'agent/x.ts', text: 'setTimeout(() => {}, Date.now())' }), [])
})

test('self-test: actors/ may import the provider contract for its types only, and nothing else of providers/', () => {
  const rules = (path: string, text: string): string[] => scan({ path, text }).map(v => v.rule)
  assert.equal(rules('actors/provisioner/x.ts', "import type { Provider } from '../../providers/provider-contract.ts'\n"), [])
  assert.equal(rules('actors/provisioner/x.ts', "import { ProviderError } from '../../providers/provider-contract.ts'\n"),
    ['actors/ may import providers/provider-contract.ts only for its types (import type), got a value import ("../../providers/provider-contract.ts")'])
  assert.equal(rules('actors/x.ts', "import type { LocalProvider } from '../providers/local-provider.ts'\n"),
    ['actors/ may not import providers/ ("../providers/local-provider.ts"); allowed: actors/, runtime/'])
  assert.equal(rules('runtime/x.ts', "import type { Provider } from '../providers/provider-contract.ts'\n").length, 1)
})

test.run()
