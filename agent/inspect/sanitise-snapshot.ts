/**
 * Makes an actor's context or event fit for the inspection stream: JSON-safe (actor
 * references become `{ "@actor": sessionId }`, bytes `"<N bytes>"`, maps objects, sets
 * arrays, functions vanish, cycles and deep nesting stop with `"<…>"`), secrets always
 * redacted, and — unless the agent runs with `--inspect-data` — relation databags, charm
 * config and action parameters redacted with their keys kept, so an operator sees which
 * settings exist without seeing their values.
 */
import { limits } from '../../runtime/limits.ts'

export const redacted = '<redacted>'

/** Keys whose values never leave the agent: the bootstrap secret, keys, passwords. */
const secretKey = /secret|password|privatekey|networkkey|bootstrapdata|credential|apikey|sshkey/i

/** Keys holding user data (databags, config values, action parameters): values redacted, keys kept. */
const dataKeys = new Set([
  'settings', 'databag', 'databags', 'relationSettings', 'applicationSettings', 'unitSettings', 'leaderSettings',
  'charmConfig', 'configValues', 'configSettings', 'parameters', 'params', 'values'
])

export interface SanitiseOptions {
  /** `--inspect-data`: databags, config and parameters as they are (secrets still redacted). */
  data: boolean
}

export function sanitise (value: unknown, options: SanitiseOptions): unknown {
  return walk(value, options, 0, new Set())
}

function walk (value: unknown, options: SanitiseOptions, depth: number, path: Set<object>): unknown {
  if (value === null || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value)
  if (typeof value === 'string') return value.length > limits.inspectStringCharsMax ? `${value.slice(0, limits.inspectStringCharsMax)}…` : value
  if (typeof value === 'bigint') return value.toString()
  if (typeof value !== 'object') return undefined
  if (value instanceof Uint8Array) return `<${value.byteLength} bytes>`
  if (value instanceof Error) return `${value.name}: ${value.message}`
  if (isActorRef(value)) return { '@actor': value.sessionId }
  if (depth >= limits.inspectValueDepthMax || path.has(value)) return '<…>'
  path.add(value)
  try {
    if (Array.isArray(value) || value instanceof Set) return [...value].map(item => walk(item, options, depth + 1, path) ?? null)
    const entries = value instanceof Map ? [...value].map(([k, v]) => [String(k), v] as const) : Object.entries(value)
    const out: Record<string, unknown> = {}
    for (const [key, item] of entries) {
      if (secretKey.test(key)) out[key] = redacted
      else if (!options.data && dataKeys.has(key)) out[key] = redactValues(item)
      else {
        const safe = walk(item, options, depth + 1, path)
        if (safe !== undefined) out[key] = safe
      }
    }
    return out
  } finally {
    path.delete(value)
  }
}

/** A databag keeps its keys (nested bags, e.g. per unit, keep theirs); every leaf value is redacted. */
function redactValues (value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array || depth >= limits.inspectValueDepthMax) return redacted
  if (Array.isArray(value)) return redacted
  const entries = value instanceof Map ? [...value].map(([k, v]) => [String(k), v] as const) : Object.entries(value)
  return Object.fromEntries(entries.map(([key, item]) => [key, redactValues(item, depth + 1)]))
}

function isActorRef (value: object): value is { sessionId: string } {
  const candidate = value as { sessionId?: unknown, send?: unknown, getSnapshot?: unknown }
  return typeof candidate.sessionId === 'string' && typeof candidate.send === 'function' && typeof candidate.getSnapshot === 'function'
}
