/// <reference lib="dom" />
import type { SequenceStep } from '../model/message-sequence.ts'
import { esc, timeText } from './dom.ts'

/** The message sequence as an SVG sequence diagram: a lane per actor, an arrow per event, newest at the bottom. */

const laneWidth = 150
const rowHeight = 18
const headHeight = 34

export function renderSequence (container: HTMLElement, steps: readonly SequenceStep[], lanes: ReadonlyArray<{ key: string, label: string }>, cursorIndex: number): void {
  const x = new Map(lanes.map((lane, i) => [lane.key, 80 + i * laneWidth + laneWidth / 2]))
  const width = 80 + lanes.length * laneWidth
  const height = headHeight + steps.length * rowHeight + 10
  const parts: string[] = []
  lanes.forEach(lane => {
    const lx = x.get(lane.key)!
    parts.push(`<text x="${lx}" y="14" text-anchor="middle" class="lane-label">${esc(lane.label.length > 26 ? `…${lane.label.slice(-25)}` : lane.label)}</text>`)
    parts.push(`<line x1="${lx}" y1="${headHeight - 12}" x2="${lx}" y2="${height}" class="lifeline"/>`)
  })
  steps.forEach((step, i) => {
    const y = headHeight + i * rowHeight
    const x1 = x.get(step.from)!
    const x2 = x.get(step.to)!
    const current = step.index === cursorIndex ? ' current' : ''
    parts.push(`<g class="step${current}" data-index="${step.index}" data-event="${esc(step.event)}">`)
    parts.push(`<text x="4" y="${y + 4}" class="time">${esc(timeText(step.at))}</text>`)
    if (x1 === x2) {
      parts.push(`<path d="M${x1},${y - 5} h18 v10 h-18" class="arrow" marker-end="url(#head)"/>`)
      parts.push(`<text x="${x1 + 22}" y="${y + 4}" class="event">${esc(step.event)}</text>`)
    } else {
      parts.push(`<line x1="${x1}" y1="${y}" x2="${x2}" y2="${y}" class="arrow" marker-end="url(#head)"/>`)
      parts.push(`<text x="${(x1 + x2) / 2}" y="${y - 3}" text-anchor="middle" class="event">${esc(step.event)}</text>`)
    }
    parts.push('</g>')
  })
  container.innerHTML = `<svg width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg"><defs><marker id="head" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto"><path d="M0,0 L8,4 L0,8 z"/></marker></defs>${parts.join('')}</svg>`
}
