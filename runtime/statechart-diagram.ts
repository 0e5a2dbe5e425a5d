import { and, not, or, stateIn } from 'xstate'
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate'
import { assert } from './assert.ts'

/**
 * Mermaid `stateDiagram-v2` text generated from an XState machine definition, so the
 * README's diagrams are derived from the code and cannot drift from it.
 *
 * What the text looks like, and why:
 *
 * - Every state gets a Mermaid id built from its path (`s_` + keys joined by `__`, every
 *   character outside `[A-Za-z0-9_]` turned into `_`) and keeps its key as the visible
 *   label through `state "key" as id`. The `s_` prefix keeps ids clear of Mermaid's
 *   keywords (`default`, `state`, `note`, …) and of its own `root`; ids never end in
 *   `_start` or `_end`, which Mermaid uses for the `[*]` of a composite state.
 * - Compound states are nested `state id { … }` blocks with `[*] --> initial`; the
 *   regions of a parallel state are separated by `--`; a final state gets `x --> [*]`.
 *   A parallel machine is wrapped in a block named after it (Mermaid reads `--` only
 *   inside a block); history states show as `H` / `H*` with an arrow to their default.
 *   Transitions with neither target nor actions (XState's inert ones) are left out.
 * - A transition is written inside a block only when both ends are direct children of
 *   that (compound) block. Every other transition is written at the top level: older
 *   Mermaid versions move both ends of a transition into the block it is written in.
 * - Transition labels: the event type; `event [guard]` when guarded (inline functions
 *   show as `guard`, `not`/`and`/`or`/`stateIn` are spelled out); `always`;
 *   `after 5000ms` or `after <delay name>`; `done(actor)` / `error(actor)` /
 *   `snapshot(actor)` for an invoked actor; `done` for a compound state's onDone.
 *   Mermaid's grammar ends a label at `:` or `;`, so labels never contain them.
 * - Transitions declared on the machine itself, and those a compound state declares into
 *   itself (no target, itself, or one of its descendants), start from a pseudo-state
 *   labelled `any state` inside that block: Mermaid cannot draw a self-transition on a
 *   nested composite state (mermaid-js/mermaid#4866) and routes edges from a cluster to
 *   its own child badly. Every line inside a parallel state belongs to one of its
 *   regions, so a parallel state's pseudo-state sits next to it, `any state in <key>`.
 * - Order is document order: states in the order of their config keys, and a state's
 *   transitions in XState's order (`on`, `onDone`, invoke done/error/snapshot, `after`),
 *   then `always`. The same definition always gives the same text.
 */
export interface ToMermaidOptions {
  /** Layout direction of the top-level document; Mermaid's default (top to bottom) when absent. */
  readonly direction?: 'TB' | 'BT' | 'LR' | 'RL'
}

/** One entry of the statechart registry (`actors/statecharts.ts`). */
export interface Statechart {
  /** File name under docs/statecharts/ (`<name>.mmd`): lower-case letters, digits and `-`. */
  readonly name: string
  /** Heading shown above the diagram in the README. */
  readonly title: string
  readonly machine: AnyStateMachine
}

const indentUnit = '  '
const anyStateLabel = 'any state'

export function toMermaid (machine: AnyStateMachine, options: ToMermaidOptions = {}): string {
  return new MermaidWriter(machine).write(options)
}

interface Edge {
  readonly from: string
  readonly to: string
  readonly label: string
  /** The compound state whose block holds this line, or undefined for the top level. */
  readonly scope: AnyStateNode | undefined
}

class MermaidWriter {
  private readonly root: AnyStateNode
  private readonly ids = new Map<AnyStateNode, string>()
  private readonly anyIds = new Map<AnyStateNode, string>()
  private readonly used = new Set<string>()
  private readonly nodes: AnyStateNode[] = []
  private readonly edges: Edge[] = []
  private readonly rootWrapperId: string | undefined

  constructor (machine: AnyStateMachine) {
    this.root = machine.root
    // Pre-order, iteratively: document order is what makes the ids deterministic.
    const stack: AnyStateNode[] = [this.root]
    while (stack.length > 0) {
      const stateNode = stack.pop() as AnyStateNode
      this.nodes.push(stateNode)
      stack.push(...children(stateNode).reverse())
    }
    for (const stateNode of this.nodes) {
      if (stateNode !== this.root) this.ids.set(stateNode, this.claim('s_' + stateNode.path.map(idSegment).join('__')))
    }
    // A parallel root needs a block of its own (Mermaid accepts `--` only inside one), and a
    // machine without child states is drawn as one state so the diagram is not empty.
    this.rootWrapperId = this.root.type === 'compound' ? undefined : this.claim('x_machine')
    for (const stateNode of this.nodes) this.collectEdges(stateNode)
  }

  write (options: ToMermaidOptions): string {
    const lines: string[] = ['stateDiagram-v2']
    if (options.direction !== undefined) lines.push(indentUnit + 'direction ' + options.direction)
    const top = 1
    if (this.rootWrapperId === undefined) {
      this.writeCompoundBody(this.root, top, lines)
    } else {
      lines.push(line(top, `state "${stateLabel(this.root.key)}" as ${this.rootWrapperId}`))
      lines.push(line(top, `[*] --> ${this.rootWrapperId}`))
      if (children(this.root).length > 0) {
        lines.push(line(top, `state ${this.rootWrapperId} {`))
        this.writeParallelBody(this.root, top + 1, lines)
        lines.push(line(top, '}'))
      }
      this.writeAnyState(this.root, top, lines)
    }
    for (const edge of this.edges) {
      if (edge.scope === undefined) lines.push(line(top, edgeText(edge)))
    }
    if (this.rootWrapperId === undefined) this.writeFinalArrows(this.root, top, lines)
    return lines.join('\n')
  }

  private writeCompoundBody (stateNode: AnyStateNode, depth: number, lines: string[]): void {
    const initial = stateNode.initial?.target[0]
    if (initial !== undefined) lines.push(line(depth, `[*] --> ${this.id(initial)}`))
    for (const child of children(stateNode)) this.writeState(child, depth, lines)
    if (stateNode !== this.root) this.writeAnyState(stateNode, depth, lines)
    for (const edge of this.edges) {
      if (edge.scope === stateNode) lines.push(line(depth, edgeText(edge)))
    }
    if (stateNode === this.root) {
      // The root's own lines end the document, after the edges written at the top level.
      this.writeAnyState(stateNode, depth, lines)
      return
    }
    this.writeFinalArrows(stateNode, depth, lines)
  }

  private writeFinalArrows (stateNode: AnyStateNode, depth: number, lines: string[]): void {
    for (const child of children(stateNode)) {
      if (child.type === 'final') lines.push(line(depth, `${this.id(child)} --> [*]`))
    }
  }

  private writeParallelBody (stateNode: AnyStateNode, depth: number, lines: string[]): void {
    children(stateNode).forEach((region, index) => {
      if (index > 0) lines.push(line(depth, '--'))
      this.writeState(region, depth, lines)
    })
  }

  private writeState (stateNode: AnyStateNode, depth: number, lines: string[]): void {
    const id = this.id(stateNode)
    const label = stateNode.type === 'history' ? (stateNode.history === 'deep' ? 'H*' : 'H') : stateLabel(stateNode.key)
    lines.push(line(depth, `state "${label}" as ${id}`))
    if (children(stateNode).length === 0) return
    // The label goes on its own line: `state "x" as id {` makes some Mermaid versions
    // keep the space before `{` in the id.
    lines.push(line(depth, `state ${id} {`))
    if (stateNode.type === 'parallel') this.writeParallelBody(stateNode, depth + 1, lines)
    else this.writeCompoundBody(stateNode, depth + 1, lines)
    lines.push(line(depth, '}'))
    // Inside a parallel state every line belongs to one of its regions, so the
    // pseudo-state of the parallel state itself goes next to it, named after it.
    if (stateNode.type === 'parallel') this.writeAnyState(stateNode, depth, lines, `${anyStateLabel} in ${stateLabel(stateNode.key)}`)
  }

  private writeAnyState (stateNode: AnyStateNode, depth: number, lines: string[], label = anyStateLabel): void {
    const anyId = this.anyIds.get(stateNode)
    if (anyId !== undefined) lines.push(line(depth, `state "${label}" as ${anyId}`))
  }

  private collectEdges (stateNode: AnyStateNode): void {
    const invokeLabels = invokeEventLabels(stateNode)
    for (const [descriptor, transitions] of stateNode.transitions) {
      for (const transition of transitions) {
        // XState's "inert" transitions (no target, no actions) only stop an event from
        // reaching the parent; they change nothing worth drawing.
        if (isInert(transition)) continue
        this.addTransition(stateNode, withGuard(eventLabel(stateNode, descriptor, transition, invokeLabels), transition, descriptor), transition)
      }
    }
    for (const transition of stateNode.always ?? []) {
      if (isInert(transition)) continue
      this.addTransition(stateNode, withGuard('always', transition, ''), transition)
    }
    if (stateNode.type === 'history' && stateNode.config.target !== undefined) {
      for (const target of historyTargets(stateNode)) this.addEdge(this.id(stateNode), stateNode.parent, this.id(target), target.parent, '')
    }
  }

  private addTransition (source: AnyStateNode, label: string, transition: AnyTransitionDefinition): void {
    const targets: ReadonlyArray<AnyStateNode | undefined> = transition.target === undefined || transition.target.length === 0
      ? [undefined]
      : transition.target
    for (const target of targets) {
      const composite = source === this.root || children(source).length > 0
      const intoItself = target === undefined || target === source || isDescendant(target, source)
      if (!composite) {
        const to = target ?? source
        this.addEdge(this.id(source), source.parent, this.id(to), to.parent, label)
      } else if (!intoItself) {
        this.addEdge(this.id(source), source.parent, this.id(target), target.parent, label)
      } else {
        const from = this.anyId(source)
        const anyParent = source.type === 'parallel' && source !== this.root ? source.parent : source
        const toItself = target === undefined || target === source
        this.addEdge(from, anyParent, toItself ? from : this.id(target), toItself ? anyParent : target.parent, label)
      }
    }
  }

  private addEdge (from: string, fromParent: AnyStateNode | undefined, to: string, toParent: AnyStateNode | undefined, label: string): void {
    const local = fromParent !== undefined && fromParent === toParent && fromParent !== this.root && fromParent.type === 'compound'
    this.edges.push({ from, to, label, scope: local ? fromParent : undefined })
  }

  private anyId (stateNode: AnyStateNode): string {
    let id = this.anyIds.get(stateNode)
    if (id === undefined) {
      id = this.claim(stateNode === this.root ? 'x_any' : 'x_any__' + stateNode.path.map(idSegment).join('__'))
      this.anyIds.set(stateNode, id)
    }
    return id
  }

  private id (stateNode: AnyStateNode): string {
    if (stateNode === this.root) return this.rootWrapperId ?? this.anyId(stateNode)
    const id = this.ids.get(stateNode)
    assert(id !== undefined, `statechart diagram: state "#${stateNode.id}" is not part of machine "${this.root.id}"`)
    return id
  }

  /** Reserves an id, suffixing `_2`, `_3`, … when sanitising made two states collide. */
  private claim (wanted: string): string {
    const base = /_(start|end)$/.test(wanted) ? wanted + '_' : wanted
    let id = base
    for (let n = 2; this.used.has(id); n++) id = `${base}_${n}`
    this.used.add(id)
    return id
  }
}

/** Shared with the SVG export (runtime/statechart-graph.ts). */
export function children (stateNode: AnyStateNode): AnyStateNode[] {
  return Object.values(stateNode.states) as AnyStateNode[]
}

/** Shared with the SVG export (runtime/statechart-graph.ts). */
export function isInert (transition: AnyTransitionDefinition): boolean {
  return (transition.target === undefined || transition.target.length === 0) && transition.actions.length === 0 && !transition.reenter
}

/** Shared with the SVG export (runtime/statechart-graph.ts). */
export function isDescendant (stateNode: AnyStateNode, ancestor: AnyStateNode): boolean {
  for (let p = stateNode.parent; p !== undefined; p = p.parent) if (p === ancestor) return true
  return false
}

function historyTargets (stateNode: AnyStateNode): AnyStateNode[] {
  const parent = stateNode.parent
  const raw: unknown = stateNode.config.target
  const targets = Array.isArray(raw) ? raw as unknown[] : [raw]
  return targets.map(target => {
    if (typeof target !== 'string') return target as AnyStateNode
    if (target.startsWith('#')) return stateNode.machine.getStateNodeById(target) as AnyStateNode
    let current = parent
    for (const key of target.split('.')) {
      const next = current?.states[key] as AnyStateNode | undefined
      assert(next !== undefined, `statechart diagram: history state "#${stateNode.id}" targets "${target}", which does not exist`)
      current = next
    }
    return current as AnyStateNode
  })
}

/** Shared with the SVG export (runtime/statechart-graph.ts). */
export function invokeEventLabels (stateNode: AnyStateNode): Map<string, string> {
  const labels = new Map<string, string>()
  const configs: unknown[] = Array.isArray(stateNode.config.invoke) ? stateNode.config.invoke : stateNode.config.invoke === undefined ? [] : [stateNode.config.invoke]
  stateNode.invoke.forEach((invoke, index) => {
    const config = configs[index] as { id?: unknown } | undefined
    const name = typeof invoke.src === 'string' && !invoke.src.startsWith('xstate.invoke.')
      ? invoke.src
      : typeof config?.id === 'string' ? config.id : 'actor'
    labels.set(`xstate.done.actor.${invoke.id}`, `done(${name})`)
    labels.set(`xstate.error.actor.${invoke.id}`, `error(${name})`)
    labels.set(`xstate.snapshot.${invoke.id}`, `snapshot(${name})`)
  })
  return labels
}

/** Shared with the SVG export (runtime/statechart-graph.ts). */
export function eventLabel (stateNode: AnyStateNode, descriptor: string, transition: AnyTransitionDefinition, invokeLabels: Map<string, string>): string {
  const invoked = invokeLabels.get(descriptor)
  if (invoked !== undefined) return invoked
  if (descriptor.startsWith('xstate.after.') && 'delay' in transition) {
    const delay: unknown = transition.delay
    return 'after ' + (typeof delay === 'number' ? `${delay}ms` : typeof delay === 'string' ? delay : 'delay')
  }
  if (descriptor === `xstate.done.state.${stateNode.id}`) return 'done'
  if (descriptor === 'xstate.route') return 'route'
  return descriptor
}

/** Shared with the SVG export (runtime/statechart-graph.ts). */
export function withGuard (label: string, transition: AnyTransitionDefinition, descriptor: string): string {
  // A route transition's guard is XState's own check of the route target.
  if (transition.guard === undefined || descriptor === 'xstate.route') return label
  return `${label} [${guardLabel(transition.guard)}]`
}

interface HigherOrderGuard { check?: unknown, guards?: unknown[], stateValue?: unknown }

// XState marks its higher-order guards by the `check` function they carry.
const notCheck = (not('x') as HigherOrderGuard).check
const andCheck = (and([]) as HigherOrderGuard).check
const orCheck = (or([]) as HigherOrderGuard).check
const stateInCheck = (stateIn('x') as HigherOrderGuard).check

function guardLabel (guard: unknown): string {
  if (typeof guard === 'string') return guard
  if (typeof guard === 'object' && guard !== null && typeof (guard as { type?: unknown }).type === 'string') {
    return (guard as { type: string }).type
  }
  if (typeof guard === 'function') {
    const { check, guards, stateValue } = guard as HigherOrderGuard
    if (check !== undefined && check === stateInCheck) return `in ${stateValueLabel(stateValue)}`
    if (check !== undefined && check === notCheck && guards?.length === 1) return `not ${nestedGuardLabel(guards[0])}`
    if (check !== undefined && check === andCheck && guards !== undefined) return guards.map(nestedGuardLabel).join(' and ')
    if (check !== undefined && check === orCheck && guards !== undefined) return guards.map(nestedGuardLabel).join(' or ')
  }
  return 'guard'
}

function nestedGuardLabel (guard: unknown): string {
  const label = guardLabel(guard)
  return / (and|or) /.test(label) ? `(${label})` : label
}

function stateValueLabel (value: unknown): string {
  if (typeof value === 'string') return value.replace(/^#/, '')
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).map(([key, inner]) => `${key}.${stateValueLabel(inner)}`).join(', ')
  }
  return String(value)
}

function idSegment (key: string): string {
  return key.replace(/[^A-Za-z0-9_]/g, '_')
}

/**
 * Text Mermaid reads back unchanged. Its grammar ends a label at `:`, `;` or a newline,
 * a state label at `"`; `#…;` is read as an entity, `<…>` as HTML, `{}` as structure, and
 * `direction XX` anywhere on a line as a layout statement.
 */
function cleanText (text: string): string {
  const cleaned = text
    .replace(/\s+/g, ' ')
    .replace(/[:;#"{}<>%`]/g, '_')
    .replace(/(direction)\s+(?=(tb|bt|rl|lr))/gi, '$1_')
    .trim()
  return cleaned === '' ? '_' : cleaned
}

function stateLabel (key: string): string {
  return cleanText(key)
}

function edgeText (edge: Edge): string {
  const label = edge.label === '' ? '' : ` : ${cleanText(edge.label)}`
  return `${edge.from} --> ${edge.to}${label}`
}

function line (depth: number, text: string): string {
  return indentUnit.repeat(depth) + text
}

/**
 * Problems in a diagram's text, as far as they can be found without running Mermaid:
 * only the statement forms toMermaid writes are accepted, braces balance, ids use
 * `[A-Za-z0-9_]` and are declared before use, labels avoid what ends or re-reads them.
 * Empty when the text is fine.
 */
export function checkMermaid (text: string): string[] {
  const problems: string[] = []
  const lines = text.split('\n')
  const declared = new Set<string>()
  const composites = new Set<string>()
  const edges: Array<{ lineNo: number, ids: string[] }> = []
  let depth = 0
  if (lines[0] !== 'stateDiagram-v2') problems.push('line 1: expected "stateDiagram-v2"')
  lines.slice(1).forEach((raw, index) => {
    const lineNo = index + 2
    const at = `line ${lineNo}`
    if (raw !== raw.trimEnd()) problems.push(`${at}: trailing whitespace`)
    const text = raw.trim()
    let match: RegExpExecArray | null
    if (text === '') return
    if (/^%%(?!\{)/.test(text)) return
    if (/^direction (TB|BT|LR|RL)$/.test(text)) return
    if ((match = /^state "([^"]*)" as (\S+)$/.exec(text)) !== null) {
      const [, label = '', id = ''] = match
      checkId(id, at, problems)
      checkLabel(label, at, problems)
      if (declared.has(id)) problems.push(`${at}: state "${id}" declared twice`)
      declared.add(id)
      return
    }
    if ((match = /^state (\S+) \{$/.exec(text)) !== null) {
      const id = match[1] ?? ''
      checkId(id, at, problems)
      if (!declared.has(id)) problems.push(`${at}: composite state "${id}" has no label declared before it`)
      if (composites.has(id)) problems.push(`${at}: composite state "${id}" opened twice`)
      composites.add(id)
      depth++
      return
    }
    if (text === '}') {
      depth--
      if (depth < 0) problems.push(`${at}: "}" without a matching "{"`)
      depth = Math.max(depth, 0)
      return
    }
    if (text === '--') {
      if (depth === 0) problems.push(`${at}: "--" is only allowed inside a composite state`)
      return
    }
    if ((match = /^(\S+) --> (\S+)(?: : (.*))?$/.exec(text)) !== null) {
      const [, from = '', to = '', label] = match
      if (from === '[*]' && to === '[*]') problems.push(`${at}: "[*] --> [*]"`)
      const ids = [from, to].filter(id => id !== '[*]')
      for (const id of ids) checkId(id, at, problems)
      if (label !== undefined) checkLabel(label, at, problems)
      edges.push({ lineNo, ids })
      return
    }
    problems.push(`${at}: not a statement toMermaid writes: ${JSON.stringify(text)}`)
  })
  if (depth !== 0) problems.push(`end of text: ${depth} unclosed "{"`)
  for (const edge of edges) {
    for (const id of edge.ids) {
      if (!declared.has(id)) problems.push(`line ${edge.lineNo}: transition uses undeclared state "${id}"`)
    }
  }
  return problems
}

function checkId (id: string, at: string, problems: string[]): void {
  if (!/^[A-Za-z0-9_]+$/.test(id)) problems.push(`${at}: id "${id}" has characters outside [A-Za-z0-9_]`)
  else if (/^(root|default)/i.test(id)) problems.push(`${at}: id "${id}" starts with a word Mermaid reserves`)
}

function checkLabel (label: string, at: string, problems: string[]): void {
  if (label.trim() === '' || /[:;#"{}<>%`\n]/.test(label)) problems.push(`${at}: label ${JSON.stringify(label)} is empty or has a character Mermaid reads as syntax`)
  if (/direction\s+(tb|bt|rl|lr)/i.test(label)) problems.push(`${at}: label ${JSON.stringify(label)} reads as a direction statement`)
}
