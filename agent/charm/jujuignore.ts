/**
 * `.jujuignore` as Juju reads it when it packs a charm directory (Juju's
 * internal/charm/jujuignore.go and charmdir.go): gitignore-like lines, Juju's defaults
 * first, the charm's own rules after them, the last matching rule winning.
 *
 * - Blank lines and lines starting with `#` are skipped; leading blanks are dropped;
 *   trailing blanks too unless escaped; `\#`, `\!` and `\ ` stand for the character.
 * - `!pattern` keeps again what an earlier rule dropped.
 * - `pattern/` applies to directories only.
 * - `/pattern` is anchored at the charm root; any other pattern matches at any depth
 *   (a leading `**∕` is the same thing).
 * - Globs as gobwas/glob with `/` as separator: `*` and `?` stop at `/`, `**` does not,
 *   `[abc]`, `[!a-z]`, `{a,b}` and `\` escapes; `/**∕` also matches a single `/`.
 *
 * A path is matched as `/` plus its path relative to the root. An ignored directory is
 * not descended into, so nothing under it can be kept again (as in Juju's walk).
 */

/** Juju's defaultJujuIgnore: version control and build directories, and the files it writes itself. */
export const defaultJujuIgnore = ['.git', '.svn', '.hg', '.bzr', '.tox', '/build/', '/revision', '/version', '.jujuignore'].join('\n')

interface IgnoreRule {
  readonly pattern: RegExp
  readonly negate: boolean
  readonly dirOnly: boolean
}

/** A rule that is not a valid glob: where it is, what it says and why it cannot be read. */
export class JujuIgnoreError extends Error {
  override name = 'JujuIgnoreError'
  constructor (readonly source: string, readonly line: number, readonly rule: string, readonly reason: string, options?: { cause?: unknown }) {
    super(`${source} line ${line}: expected a glob pattern, got ${JSON.stringify(rule)} (${reason})`, options)
  }
}

export class JujuIgnore {
  readonly #rules: readonly IgnoreRule[]

  private constructor (rules: readonly IgnoreRule[]) {
    this.#rules = rules
  }

  /** Juju's defaults, then the rules of `text` (a charm's .jujuignore) if given. */
  static parse (text: string | undefined): JujuIgnore {
    const rules = parseRules(defaultJujuIgnore, 'default rules')
    if (text !== undefined) rules.push(...parseRules(text, '.jujuignore'))
    return new JujuIgnore(rules)
  }

  /** Whether `path` (relative to the charm root, `/`-separated) is left out of the archive. */
  ignores (path: string, isDir: boolean): boolean {
    const rooted = path.startsWith('/') ? path : `/${path}`
    let keep = true
    for (const rule of this.#rules) {
      if (rule.dirOnly && !isDir) continue
      if (!rule.pattern.test(rooted)) continue
      keep = rule.negate
    }
    return !keep
  }
}

function parseRules (text: string, source: string): IgnoreRule[] {
  const rules: IgnoreRule[] = []
  for (const [index, line] of text.split('\n').entries()) {
    const rule = line.replace(/\r$/, '').replace(/^\s+/, '')
    if (rule === '' || rule.startsWith('#')) continue
    try {
      rules.push(compileRule(rule))
    } catch (cause) {
      throw new JujuIgnoreError(source, index + 1, rule, (cause as Error).message, { cause })
    }
  }
  return rules
}

function compileRule (text: string): IgnoreRule {
  let rule = text
  const negate = rule.startsWith('!')
  if (negate) rule = rule.slice(1)
  rule = unescapePattern(rule)
  const dirOnly = rule.endsWith('/')
  if (dirOnly) rule = rule.slice(0, -1)
  if (rule.startsWith('**/')) rule = rule.slice(3)
  if (!rule.startsWith('/')) rule = `**/${rule}`
  return { pattern: globToRegExp(rule), negate, dirOnly }
}

/** Drops unescaped trailing spaces, then unescapes `\#`, `\!` and `\ ` (jujuignore.go unescapeIgnorePattern). */
function unescapePattern (pattern: string): string {
  let end = pattern.length
  while (end > 1 && pattern[end - 1] === ' ' && pattern[end - 2] !== '\\') end--
  return pattern.slice(0, end).replace(/\\([#! ])/g, '$1')
}

/** A gobwas/glob pattern with separator `/` as an anchored RegExp; iterative, braces by a depth count. */
function globToRegExp (glob: string): RegExp {
  let out = ''
  let braces = 0
  let i = 0
  while (i < glob.length) {
    const ch = glob[i]!
    if (glob.startsWith('/**/', i)) {
      // genIgnorePatternPermutations: each "/**/" also matches a single "/".
      out += '/(?:.*/)?'
      i += 4
    } else if (glob.startsWith('**', i)) {
      out += '.*'
      i += 2
    } else if (ch === '*') {
      out += '[^/]*'
      i++
    } else if (ch === '?') {
      out += '[^/]'
      i++
    } else if (ch === '[') {
      const close = glob.indexOf(']', i + 2)
      if (close === -1) throw new Error('unclosed "["')
      let body = glob.slice(i + 1, close)
      const negated = body.startsWith('!')
      if (negated) body = body.slice(1)
      out += `[${negated ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`
      i = close + 1
    } else if (ch === '{') {
      out += '(?:'
      braces++
      i++
    } else if (ch === '}' && braces > 0) {
      out += ')'
      braces--
      i++
    } else if (ch === ',' && braces > 0) {
      out += '|'
      i++
    } else if (ch === '\\') {
      if (i + 1 >= glob.length) throw new Error('a trailing "\\"')
      out += escapeChar(glob[i + 1]!)
      i += 2
    } else {
      out += escapeChar(ch)
      i++
    }
  }
  if (braces > 0) throw new Error('unclosed "{"')
  return new RegExp(`^${out}$`, 's')
}

function escapeChar (ch: string): string {
  return ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
