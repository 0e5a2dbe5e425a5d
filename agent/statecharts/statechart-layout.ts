/**
 * Lays out a statechart graph (runtime/statechart-graph.ts) with elkjs: the layered
 * algorithm over the whole hierarchy at once (compound states contain their children,
 * transitions may cross their borders), top to bottom, label sizes estimated from their
 * text. Every coordinate comes back absolute (ELK's `json.shapeCoords`/`edgeCoords` ROOT),
 * so drawing needs no offsets. ELK is deterministic for the same input.
 */
import elkModule from 'elkjs/lib/elk.bundled.js'
import type { ELK as ElkApi, ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js'

/** elkjs is CommonJS: under Node's ESM its export is the constructor itself. */
const ELK = elkModule as unknown as new () => ElkApi
import type { GraphEdge, GraphState, GraphStateType, StatechartGraph } from '../../runtime/statechart-graph.ts'

/** Text metrics of the drawing: a rough average glyph width of the sans-serif font at `fontSize`. */
export const fontSize = 12
export const charWidth = 7
const stateHeight = 32
const statePadding = 24
/** Room above a compound state's children for its name. */
const titleHeight = 26
const initialSize = 14

export interface Box { x: number, y: number, width: number, height: number }

export interface LaidOutState extends Box {
  readonly id: string
  readonly label: string
  readonly type: GraphStateType
  readonly depth: number
  readonly parent: string | undefined
}

export interface LaidOutEdge {
  readonly id: string
  readonly source: string
  readonly target: string
  readonly label: string
  /** Start, bend points, end. */
  readonly points: Array<{ x: number, y: number }>
  readonly labelBox: Box | undefined
}

export interface StatechartLayout {
  readonly width: number
  readonly height: number
  /** Parents before their children (drawing order). */
  readonly states: LaidOutState[]
  readonly edges: LaidOutEdge[]
}

export function textWidth (text: string): number {
  return text.length * charWidth
}

const rootOptions = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.json.shapeCoords': 'ROOT',
  'elk.json.edgeCoords': 'ROOT',
  'elk.layered.spacing.nodeNodeBetweenLayers': '36',
  'elk.spacing.nodeNode': '24',
  'elk.spacing.edgeLabel': '4',
  'elk.edgeLabels.inline': 'false',
  'elk.layered.edgeLabels.sideSelection': 'ALWAYS_DOWN',
  'elk.edgeRouting': 'ORTHOGONAL',
  'elk.randomSeed': '1'
}

function elkNode (state: GraphState): ElkNode {
  if (state.children.length > 0) {
    return {
      id: state.id,
      layoutOptions: { 'elk.padding': `[top=${titleHeight + 8},left=12,bottom=12,right=12]`, 'elk.nodeSize.constraints': 'MINIMUM_SIZE', 'elk.nodeSize.minimum': `(${textWidth(state.label) + statePadding}, ${titleHeight + 20})` },
      children: state.children.map(elkNode)
    }
  }
  if (state.type === 'initial') return { id: state.id, width: initialSize, height: initialSize }
  return { id: state.id, width: Math.max(48, textWidth(state.label) + statePadding), height: stateHeight }
}

function elkEdge (edge: GraphEdge): ElkExtendedEdge {
  return {
    id: edge.id,
    sources: [edge.source],
    targets: [edge.target],
    ...(edge.label === '' ? {} : { labels: [{ id: `${edge.id}.label`, text: edge.label, width: textWidth(edge.label) + 4, height: fontSize + 4 }] })
  }
}

export async function layoutStatechart (graph: StatechartGraph): Promise<StatechartLayout> {
  const elk = new ELK()
  const root: ElkNode = { id: '#root', layoutOptions: rootOptions, children: [elkNode(graph.root)], edges: graph.edges.map(elkEdge) }
  const laid = await elk.layout(root)
  const states: LaidOutState[] = []
  const byId = new Map<string, GraphState>()
  const index = (state: GraphState): void => { byId.set(state.id, state); state.children.forEach(index) }
  index(graph.root)
  const walk = (node: ElkNode, depth: number, parent: string | undefined): void => {
    const state = byId.get(node.id)!
    states.push({ id: node.id, label: state.label, type: state.type, depth, parent, x: node.x ?? 0, y: node.y ?? 0, width: node.width ?? 0, height: node.height ?? 0 })
    for (const child of node.children ?? []) walk(child, depth + 1, node.id)
  }
  walk(laid.children![0]!, 0, undefined)
  const labels = new Map(graph.edges.map(e => [e.id, e.label]))
  const edges = (laid.edges ?? []).map((edge): LaidOutEdge => {
    const section = edge.sections?.[0]
    const points = section === undefined ? [] : [section.startPoint, ...(section.bendPoints ?? []), section.endPoint]
    const label = edge.labels?.[0]
    return {
      id: edge.id,
      source: edge.sources[0]!,
      target: edge.targets[0]!,
      label: labels.get(edge.id) ?? '',
      points: points.map(p => ({ x: p.x, y: p.y })),
      labelBox: label === undefined ? undefined : { x: label.x ?? 0, y: label.y ?? 0, width: label.width ?? 0, height: label.height ?? 0 }
    }
  })
  return { width: laid.width ?? 0, height: laid.height ?? 0, states, edges }
}
