/// <reference lib="dom" />
import { activeStates, chartOf, type Chart } from '../model/statechart-graph.ts'
import { esc } from './dom.ts'

/**
 * The selected actor's statechart, laid out by ELK (elkjs's browser build, loaded by the
 * page as the global `ELK`) from the definition the stream carried, drawn as SVG; the
 * active states are marked `data-active="true"` (and highlighted by CSS). A layout is
 * made once per definition and reused: a new snapshot only moves the highlight.
 */

interface ElkLabel { text: string, width: number, height: number, x?: number, y?: number }
interface ElkNode { id: string, width?: number, height?: number, x?: number, y?: number, children?: ElkNode[], edges?: ElkEdge[], labels?: ElkLabel[], layoutOptions?: Record<string, string> }
interface ElkEdge { id: string, sources: string[], targets: string[], labels?: ElkLabel[], sections?: Array<{ startPoint: Point, endPoint: Point, bendPoints?: Point[] }> }
interface Point { x: number, y: number }
declare const ELK: new () => { layout: (graph: ElkNode) => Promise<ElkNode> }

/** Layouts kept (one per distinct definition). */
const layoutsMax = 64
const charWidth = 6.6
const layouts = new Map<string, Promise<{ svg: string, chart: Chart } | undefined>>()

function labelWidth (text: string): number {
  return Math.ceil(text.length * charWidth) + 16
}

function elkNode (chart: Chart, id: string): ElkNode {
  const state = chart.states.get(id)!
  if (state.children.length === 0) return { id, width: Math.max(70, labelWidth(state.key)), height: 28 }
  return {
    id,
    labels: [{ text: state.key, width: labelWidth(state.key), height: 14 }],
    layoutOptions: { 'elk.padding': '[top=26,left=10,bottom=10,right=10]' },
    children: state.children.map(c => elkNode(chart, c))
  }
}

function graphOf (chart: Chart): ElkNode {
  const root = elkNode(chart, chart.root)
  root.layoutOptions = {
    'elk.algorithm': 'layered',
    'elk.direction': 'DOWN',
    'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
    'elk.json.shapeCoords': 'ROOT',
    'elk.json.edgeCoords': 'ROOT',
    'elk.padding': '[top=26,left=10,bottom=10,right=10]',
    'elk.spacing.nodeNode': '18',
    'elk.layered.spacing.nodeNodeBetweenLayers': '26',
    'elk.spacing.edgeLabel': '2'
  }
  root.edges = chart.transitions.map((t, i) => ({
    id: `e${i}`,
    sources: [t.source],
    targets: [t.target],
    labels: [{ text: t.label, width: labelWidth(t.label) * 0.8, height: 10 }]
  }))
  return root
}

function svgOf (chart: Chart, laid: ElkNode): string {
  const shapes: string[] = []
  const walk = (node: ElkNode, depth: number): void => {
    const state = chart.states.get(node.id)
    const x = node.x ?? 0
    const y = node.y ?? 0
    const w = node.width ?? 0
    const h = node.height ?? 0
    const compound = (node.children?.length ?? 0) > 0
    const type = state?.type ?? 'atomic'
    shapes.push(`<g class="state ${compound ? 'compound' : 'atomic'} type-${esc(type)}" data-state-id="${esc(node.id)}" data-depth="${depth}">` +
      `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="6"/>` +
      `<text x="${x + (compound ? 8 : w / 2)}" y="${y + (compound ? 16 : h / 2 + 4)}"${compound ? '' : ' text-anchor="middle"'}>${esc(state?.key ?? node.id)}</text></g>`)
    for (const child of node.children ?? []) walk(child, depth + 1)
  }
  walk(laid, 0)
  const edges = (laid.edges ?? []).map(edge => {
    const section = edge.sections?.[0]
    if (section === undefined) return ''
    const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint]
    const label = edge.labels?.[0]
    const text = label?.x === undefined ? '' : `<text x="${label.x}" y="${(label.y ?? 0) + 8}" class="edge-label">${esc(label.text)}</text>`
    return `<g class="transition"><polyline points="${points.map(p => `${p.x},${p.y}`).join(' ')}" marker-end="url(#chart-head)"/>${text}</g>`
  })
  const width = Math.ceil((laid.width ?? 100) + 10)
  const height = Math.ceil((laid.height ?? 100) + 10)
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    '<defs><marker id="chart-head" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto"><path d="M0,0 L8,4 L0,8 z"/></marker></defs>' +
    `${shapes.join('')}${edges.join('')}</svg>`
}

async function layout (definition: unknown): Promise<{ svg: string, chart: Chart } | undefined> {
  const chart = chartOf(definition)
  if (chart === undefined) return undefined
  const laid = await new ELK().layout(graphOf(chart))
  return { svg: svgOf(chart, laid), chart }
}

/** A key per distinct definition (actors of one kind usually share one). */
function definitionKey (kind: string, definition: unknown): string {
  const json = JSON.stringify(definition) ?? ''
  return `${kind}:${json.length}:${json.slice(0, 200)}`
}

export interface ChartTarget { key: string, kind: string, name: string, definition: unknown, value: unknown }

let drawn: { actorKey: string, layoutKey: string } | undefined

/** Draws (or re-highlights) the chart of `target` in `container`; resolves once it is on the page. */
export async function renderChart (container: HTMLElement, target: ChartTarget | undefined): Promise<void> {
  if (target === undefined || target.definition === undefined) {
    drawn = undefined
    container.innerHTML = `<p class="hint">${target === undefined ? 'select an actor' : 'no definition in the stream for this actor'}</p>`
    return
  }
  const layoutKey = definitionKey(target.kind, target.definition)
  let fresh = false
  if (drawn?.actorKey !== target.key || drawn.layoutKey !== layoutKey) {
    let pending = layouts.get(layoutKey)
    if (pending === undefined) {
      pending = layout(target.definition).catch(error => { console.error(error); return undefined })
      layouts.set(layoutKey, pending)
      if (layouts.size > layoutsMax) layouts.delete(layouts.keys().next().value!)
    }
    const result = await pending
    if (result === undefined) { container.innerHTML = '<p class="hint">this definition has no states to draw</p>'; return }
    container.innerHTML = result.svg
    container.dataset.actor = target.key
    drawn = { actorKey: target.key, layoutKey }
    fresh = true
  }
  const root = chartOf(target.definition)?.root ?? ''
  const active = activeStates(root, target.value)
  container.querySelectorAll<SVGGElement>('[data-state-id]').forEach(g => {
    const on = active.has(g.dataset.stateId ?? '')
    if ((g.dataset.active === 'true') !== on) g.dataset.active = String(on)
  })
  // A chart just drawn is scrolled to its active state (big charts are wider than the panel).
  if (fresh) container.querySelector('.atomic[data-active="true"]')?.scrollIntoView({ block: 'center', inline: 'center' })
}
