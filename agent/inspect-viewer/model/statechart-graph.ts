/**
 * A statechart's states and transitions from the definition the stream carries — either
 * `machine.toJSON()` (state ids, targets as `#id`) or the raw machine config Stately's
 * inspector sends (nested `states`, targets relative) — and the states active in a
 * snapshot value. The viewer lays these out with ELK.
 */

export interface ChartState {
  /** Full id: `unit.running.uniter.idle`. */
  id: string
  key: string
  parent: string | undefined
  type: string
  children: string[]
}

export interface ChartTransition {
  source: string
  target: string
  label: string
}

export interface Chart {
  root: string
  states: Map<string, ChartState>
  transitions: ChartTransition[]
}

/** States drawn per chart; a bigger definition is cut (with a note) rather than freezing the page. */
export const chartStatesMax = 400

type Raw = Record<string, unknown>

function isRecord (value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function list (value: unknown): unknown[] {
  if (value === undefined || value === null) return []
  return Array.isArray(value) ? value : [value]
}

/** XState's generated event names shortened for edge labels: `xstate.done.actor.0.unit.running.uniter.loading` → `done: loading`. */
export function transitionLabel (event: string): string {
  const generated = /^xstate\.(done|error)\.(?:actor|state)\.(.*)$/.exec(event)
  if (generated !== null) return `${generated[1]}: ${generated[2]!.split('.').at(-1)}`
  const after = /^xstate\.after\.(\d+)\./.exec(event)
  return after === null ? event : `after ${after[1]} ms`
}

/** Resolves a transition target written in a config: `#id`, `.child`, or a sibling key. */
function resolveTarget (target: string, source: ChartState, chart: Chart): string | undefined {
  if (target.startsWith('#')) {
    const id = target.slice(1)
    if (chart.states.has(id)) return id
    // `#custom.id` may name a state by its own id: search by suffix.
    for (const state of chart.states.values()) if (state.id.endsWith(`.${id}`)) return state.id
    return undefined
  }
  if (target.startsWith('.')) return `${source.id}${target}`
  return source.parent === undefined ? undefined : `${source.parent}.${target}`
}

function targetsOf (transition: unknown): string[] {
  if (typeof transition === 'string') return [transition]
  if (!isRecord(transition)) return []
  return list(transition.target).filter((t): t is string => typeof t === 'string')
}

function addStates (raw: Raw, id: string, key: string, parent: string | undefined, chart: Chart): void {
  if (chart.states.size >= chartStatesMax) return
  const childStates = isRecord(raw.states) ? raw.states : {}
  const children = Object.keys(childStates)
  const type = typeof raw.type === 'string' ? raw.type : children.length > 0 ? 'compound' : 'atomic'
  chart.states.set(id, { id, key, parent, type, children: children.map(k => `${id}.${k}`) })
  for (const k of children) addStates(childStates[k] as Raw, `${id}.${k}`, k, id, chart)
}

function addTransitions (raw: Raw, id: string, chart: Chart): void {
  const source = chart.states.get(id)
  if (source === undefined) return
  const add = (label: string, transition: unknown): void => {
    for (const target of targetsOf(transition)) {
      const resolved = resolveTarget(target, source, chart)
      if (resolved !== undefined && chart.states.has(resolved)) chart.transitions.push({ source: id, target: resolved, label })
    }
  }
  const on = isRecord(raw.on) ? raw.on : {}
  for (const [event, value] of Object.entries(on)) for (const t of list(value)) add(transitionLabel(event), t)
  for (const t of list(raw.always)) add('always', t)
  const after = isRecord(raw.after) ? raw.after : {}
  for (const [delay, value] of Object.entries(after)) for (const t of list(value)) add(`after ${delay}`, t)
  for (const invoke of list(raw.invoke)) {
    if (!isRecord(invoke)) continue
    const src = typeof invoke.src === 'string' ? invoke.src : 'invoke'
    for (const t of list(invoke.onDone)) add(`${src} done`, t)
    for (const t of list(invoke.onError)) add(`${src} error`, t)
  }
  for (const t of list(raw.onDone)) add('done', t)
  const childStates = isRecord(raw.states) ? raw.states : {}
  for (const [k, child] of Object.entries(childStates)) if (isRecord(child)) addTransitions(child, `${id}.${k}`, chart)
}

/** The chart of a definition, or undefined when it has no states to draw. */
export function chartOf (definition: unknown): Chart | undefined {
  if (!isRecord(definition)) return undefined
  const root = typeof definition.id === 'string' ? definition.id : typeof definition.key === 'string' ? definition.key : 'machine'
  const chart: Chart = { root, states: new Map(), transitions: [] }
  addStates(definition, root, root, undefined, chart)
  addTransitions(definition, root, chart)
  const seen = new Set<string>()
  chart.transitions = chart.transitions.filter(t => {
    const k = `${t.source}|${t.target}|${t.label}`
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
  return chart
}

/** The ids of every state active in a snapshot value (`'idle'` or `{ running: { uniter: 'idle', timers: 'ticking' } }`). */
export function activeStates (root: string, value: unknown): Set<string> {
  const active = new Set<string>([root])
  const walk = (prefix: string, v: unknown): void => {
    if (typeof v === 'string') { active.add(`${prefix}.${v}`); return }
    if (!isRecord(v)) return
    for (const [k, child] of Object.entries(v)) {
      active.add(`${prefix}.${k}`)
      walk(`${prefix}.${k}`, child)
    }
  }
  walk(root, value)
  return active
}

/** The snapshot value as one short line: `running.uniter.idle, running.timers.ticking`. */
export function valueText (value: unknown): string {
  const leaves: string[] = []
  const walk = (prefix: string, v: unknown): void => {
    if (typeof v === 'string') { leaves.push(prefix === '' ? v : `${prefix}.${v}`); return }
    if (!isRecord(v)) return
    const entries = Object.entries(v)
    if (entries.length === 0 && prefix !== '') leaves.push(prefix)
    for (const [k, child] of entries) walk(prefix === '' ? k : `${prefix}.${k}`, child)
  }
  walk('', value)
  return leaves.join(', ')
}

const orders = new WeakMap<object, Map<string, number>>()

/** Each state's place in its definition (regions in the order they are written, not the snapshot's key order). */
function stateOrder (definition: unknown): Map<string, number> | undefined {
  if (!isRecord(definition)) return undefined
  let order = orders.get(definition)
  if (order === undefined) {
    const chart = chartOf(definition)
    order = new Map([...(chart?.states.keys() ?? [])].map((id, i) => [id.slice(chart!.root.length + 1), i]))
    orders.set(definition, order)
  }
  return order
}

/**
 * The value short enough for a tree row: each active leaf as its last two names, in the
 * definition's order of regions (`uniter.idle · updateStatus.ticking`).
 */
export function shortValueText (value: unknown, definition?: unknown): string {
  const order = stateOrder(definition)
  const leaves = valueText(value).split(', ').filter(s => s !== '')
  if (order !== undefined) leaves.sort((a, b) => (order.get(a) ?? Infinity) - (order.get(b) ?? Infinity))
  return leaves.map(leaf => leaf.split('.').slice(-2).join('.')).join(' · ')
}
