import type { AnyStateMachine, AnyStateNode } from 'xstate'
import { children, eventLabel, invokeEventLabels, isDescendant, isInert, withGuard } from './statechart-diagram.ts'

/**
 * A statechart as a graph to lay out and draw (the SVG export, the viewer): the state
 * tree with each compound state's initial marker, and every transition as an edge with
 * the same labels as the Mermaid text (statechart-diagram.ts): `event [guard]`,
 * `always`, `after …`, `done(actor)`, …
 *
 * Edges never join a compound state to its own descendants (layout engines route those
 * badly): transitions a compound state declares into itself or its descendants start
 * from a pseudo-state `any state` inside it, as in the Mermaid diagrams. A transition
 * without a target is a self-loop. Order is document order, so the graph is the same
 * for the same definition.
 */
export type GraphStateType = 'atomic' | 'compound' | 'parallel' | 'final' | 'history' | 'initial' | 'any'

export interface GraphState {
  /** Unique in the graph: the state's path joined by `.`, the machine's id for the root; `…#initial`, `…#any` for pseudo-states. */
  readonly id: string
  readonly label: string
  readonly type: GraphStateType
  readonly children: GraphState[]
}

export interface GraphEdge {
  readonly id: string
  readonly source: string
  readonly target: string
  readonly label: string
}

export interface StatechartGraph {
  readonly root: GraphState
  readonly edges: GraphEdge[]
}

export function statechartGraph (machine: AnyStateMachine): StatechartGraph {
  const root = machine.root
  const edges: GraphEdge[] = []
  const pseudo = new Map<AnyStateNode, GraphState>()
  const idOf = (node: AnyStateNode): string => node === root ? root.id : node.path.join('.')
  const addEdge = (source: string, target: string, label: string): void => { edges.push({ id: `e${edges.length}`, source, target, label }) }
  const anyOf = (node: AnyStateNode): string => {
    let state = pseudo.get(node)
    if (state === undefined) {
      state = { id: `${idOf(node)}#any`, label: 'any state', type: 'any', children: [] }
      pseudo.set(node, state)
    }
    return state.id
  }

  const build = (node: AnyStateNode): GraphState => {
    const kids = children(node).map(build)
    const type: GraphStateType = node.type === 'history' ? 'history' : node.type === 'final' ? 'final' : node.type === 'parallel' ? 'parallel' : kids.length > 0 ? 'compound' : 'atomic'
    const label = node === root ? root.id : node.type === 'history' ? (node.history === 'deep' ? 'H*' : 'H') : node.key
    const state: GraphState = { id: idOf(node), label, type, children: kids }
    const initial = node.type === 'compound' ? node.initial?.target[0] : undefined
    if (initial !== undefined) {
      const marker: GraphState = { id: `${state.id}#initial`, label: '', type: 'initial', children: [] }
      kids.unshift(marker)
      addEdge(marker.id, idOf(initial), '')
    }
    return state
  }
  const tree = build(root)

  const visit = (node: AnyStateNode): void => {
    const invokeLabels = invokeEventLabels(node)
    const transitions: Array<{ label: string, targets: readonly AnyStateNode[] }> = []
    for (const [descriptor, list] of node.transitions) {
      for (const transition of list) {
        if (isInert(transition)) continue
        transitions.push({ label: withGuard(eventLabel(node, descriptor, transition, invokeLabels), transition, descriptor), targets: transition.target ?? [] })
      }
    }
    for (const transition of node.always ?? []) {
      if (isInert(transition)) continue
      transitions.push({ label: withGuard('always', transition, ''), targets: transition.target ?? [] })
    }
    const composite = node === root || children(node).length > 0
    for (const { label, targets } of transitions) {
      for (const target of targets.length === 0 ? [undefined] : targets) {
        const intoItself = target === undefined || target === node || isDescendant(target, node)
        if (!composite) addEdge(idOf(node), idOf(target ?? node), label)
        else if (!intoItself) addEdge(idOf(node), idOf(target), label)
        else {
          const from = anyOf(node)
          addEdge(from, target === undefined || target === node ? from : idOf(target), label)
        }
      }
    }
    children(node).forEach(visit)
  }
  visit(root)

  // The `any state` pseudo-states go inside the states they stand for, after their children.
  const place = (state: GraphState, node: AnyStateNode): void => {
    const any = pseudo.get(node)
    if (any !== undefined) state.children.push(any)
    const kids = children(node)
    for (const kid of kids) place(state.children.find(c => c.id === idOf(kid))!, kid)
  }
  place(tree, root)
  return { root: tree, edges }
}
