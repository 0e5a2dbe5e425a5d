/**
 * One self-contained SVG file per statechart (`cantrip export-statecharts --format svg`):
 * states as rounded boxes, compound states holding their children with their name at the
 * top, parallel regions dashed, the initial marker a filled dot, final states with a
 * double border, transitions as arrows labelled with their event and guard. Styles are
 * inline (no external CSS or fonts), numbers rounded to 0.1, so the same definition
 * always gives the same bytes. Each state's group carries `data-state` (its path) and
 * each edge's `data-event`, for tests and for tools that read the drawing.
 */
import type { AnyStateMachine } from 'xstate'
import { statechartGraph } from '../../runtime/statechart-graph.ts'
import { fontSize, layoutStatechart, type LaidOutEdge, type LaidOutState, type StatechartLayout } from './statechart-layout.ts'

const margin = 8

export function escapeXml (text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;')
}

function n (value: number): string {
  const rounded = Math.round(value * 10) / 10
  return Object.is(rounded, -0) ? '0' : String(rounded)
}

export async function statechartSvg (machine: AnyStateMachine, title: string): Promise<string> {
  return renderSvg(await layoutStatechart(statechartGraph(machine)), title)
}

export function renderSvg (layout: StatechartLayout, title: string): string {
  const width = layout.width + 2 * margin
  const height = layout.height + 2 * margin
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${n(width)}" height="${n(height)}" viewBox="${n(-margin)} ${n(-margin)} ${n(width)} ${n(height)}" font-family="sans-serif" font-size="${fontSize}">`,
    `<title>${escapeXml(title)}</title>`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>',
    `<rect x="${n(-margin)}" y="${n(-margin)}" width="${n(width)}" height="${n(height)}" fill="#ffffff"/>`
  ]
  for (const state of layout.states) lines.push(stateSvg(state))
  for (const edge of layout.edges) lines.push(edgeSvg(edge))
  lines.push('</svg>')
  return lines.join('\n') + '\n'
}

function stateSvg (state: LaidOutState): string {
  const { x, y, width, height } = state
  const attrs = `data-state="${escapeXml(state.id)}" data-type="${state.type}"`
  if (state.type === 'initial') {
    return `<g ${attrs}><circle cx="${n(x + width / 2)}" cy="${n(y + height / 2)}" r="${n(width / 2)}" fill="#333"/></g>`
  }
  const compound = state.type === 'compound' || state.type === 'parallel'
  const fill = state.type === 'any' ? '#f4f4f4' : compound ? (state.depth % 2 === 0 ? '#f7f9fc' : '#eef3fa') : '#ffffff'
  const dash = state.type === 'parallel' || state.type === 'any' ? ' stroke-dasharray="6 4"' : ''
  const box = `<rect x="${n(x)}" y="${n(y)}" width="${n(width)}" height="${n(height)}" rx="8" ry="8" fill="${fill}" stroke="#4a5a70" stroke-width="1.2"${dash}/>`
  const inner = state.type === 'final'
    ? `<rect x="${n(x + 3)}" y="${n(y + 3)}" width="${n(width - 6)}" height="${n(height - 6)}" rx="6" ry="6" fill="none" stroke="#4a5a70" stroke-width="1.2"/>`
    : ''
  const label = compound
    ? `<text x="${n(x + 10)}" y="${n(y + 18)}" font-weight="bold" fill="#1d2a3a">${escapeXml(state.label)}${state.type === 'parallel' ? ' ∥' : ''}</text>`
    : `<text x="${n(x + width / 2)}" y="${n(y + height / 2 + fontSize / 3)}" text-anchor="middle" fill="#1d2a3a"${state.type === 'any' ? ' font-style="italic"' : ''}>${escapeXml(state.label)}</text>`
  return `<g ${attrs}>${box}${inner}${label}</g>`
}

function edgeSvg (edge: LaidOutEdge): string {
  if (edge.points.length === 0) return ''
  const d = edge.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${n(p.x)},${n(p.y)}`).join(' ')
  const attrs = `data-edge="${edge.id}" data-source="${escapeXml(edge.source)}" data-target="${escapeXml(edge.target)}" data-event="${escapeXml(edge.label)}"`
  const path = `<path d="${d}" fill="none" stroke="#444" stroke-width="1.1" marker-end="url(#arrow)"/>`
  const box = edge.labelBox
  const label = box === undefined || edge.label === ''
    ? ''
    : `<rect x="${n(box.x)}" y="${n(box.y)}" width="${n(box.width)}" height="${n(box.height)}" fill="#ffffff" fill-opacity="0.85"/><text x="${n(box.x + 2)}" y="${n(box.y + box.height - 4)}" fill="#7a3b00">${escapeXml(edge.label)}</text>`
  return `<g ${attrs}>${path}${label}</g>`
}
