/**
 * The timeline of one run as one inline SVG: phases as background regions, a time axis
 * in simulated seconds, then rows from top to bottom: violations, fault bands, leader
 * terms, one lane per controller and machine agent, workload commands, hooks per unit
 * (grouped under their machine) and the units-active curve with the convergence moment.
 * Details are in <title> tooltips; every text is escaped.
 */
import { escapeXml as esc, seconds } from './escape.ts'
import type { AgentState, HookOutcome, Phase, ReportModel } from './report-model.ts'

const labelW = 190
const plotW = 1100
const rightPad = 24
const rowH = 16
const barH = 12
const axisH = 28
const curveH = 90
/** Fault rows the bands are packed into; more overlap shares the last row. */
const faultRowsMax = 8

export const stateColours: Record<AgentState, string> = { up: '#66bb6a', down: '#e53935', paused: '#ffb300' }
export const outcomeColours: Record<HookOutcome, string> = { succeeded: '#43a047', failed: '#e53935', missing: '#9e9e9e', terminated: '#8e24aa' }
const phaseColours: Record<Phase, string> = { setup: '#eef3fb', faults: '#fdf0ec', heal: '#eef8ee', liveness: '#f4f0fa', done: '#f5f5f5' }

class Canvas {
  y = axisH
  readonly parts: string[] = []
  constructor (readonly endMs: number) {}
  x (t: number): number {
    return labelW + Math.max(0, Math.min(1, t / this.endMs)) * plotW
  }
  label (text: string, title?: string, cls = 'lbl'): void {
    const body = title === undefined ? esc(text) : `<title>${esc(title)}</title>${esc(text)}`
    this.parts.push(`<text class="${cls}" x="6" y="${this.y + barH - 1}">${body}</text>`)
  }
  bar (from: number, to: number, fill: string, title: string, extra = ''): void {
    const x0 = this.x(from)
    const w = Math.max(2, this.x(to) - x0)
    this.parts.push(`<rect x="${r(x0)}" y="${this.y + 1}" width="${r(w)}" height="${barH}" fill="${fill}"${extra}><title>${esc(title)}</title></rect>`)
  }
  text (t: number, text: string, cls: string): void {
    this.parts.push(`<text class="${cls}" x="${r(this.x(t) + 2)}" y="${this.y + barH - 2}">${esc(text)}</text>`)
  }
  row (): void {
    this.y += rowH
  }
  heading (text: string): void {
    this.y += 4
    this.parts.push(`<text class="hd" x="2" y="${this.y + barH}">${esc(text)}</text>`)
    this.y += rowH + 2
  }
}

const r = (n: number): string => String(Math.round(n * 10) / 10)

export function renderTimeline (model: ReportModel, convergedAtMs: number | undefined): string {
  const c = new Canvas(model.endMs)
  drawViolations(c, model)
  drawFaults(c, model)
  drawTerms(c, model)
  drawAgents(c, model)
  drawCommands(c, model)
  drawHooks(c, model)
  drawCurve(c, model, convergedAtMs)
  const height = c.y + 8
  const width = labelW + plotW + rightPad
  const back = [...phaseRegions(c, model, height), ...axis(c, height)]
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img">`,
    '<title>Run timeline</title>',
    ...back,
    ...c.parts,
    '</svg>'
  ].join('\n')
}

function phaseRegions (c: Canvas, model: ReportModel, height: number): string[] {
  return model.phases.map(p => {
    const x0 = c.x(p.from)
    const w = Math.max(1, c.x(p.to) - x0)
    const title = `phase ${p.state}: ${seconds(p.from)} – ${seconds(p.to)}`
    return `<g><rect x="${r(x0)}" y="0" width="${r(w)}" height="${height}" fill="${phaseColours[p.state]}"><title>${esc(title)}</title></rect>` +
      `<text class="ph" x="${r(x0 + 3)}" y="10">${esc(p.state)}</text></g>`
  })
}

function axis (c: Canvas, height: number): string[] {
  const step = tickStep(c.endMs)
  const out: string[] = [`<line class="ax" x1="${labelW}" y1="${axisH - 4}" x2="${labelW + plotW}" y2="${axisH - 4}"/>`]
  for (let t = 0; t <= c.endMs; t += step) {
    const x = r(c.x(t))
    out.push(`<line class="grid" x1="${x}" y1="${axisH - 8}" x2="${x}" y2="${height}"/>`)
    out.push(`<text class="tick" x="${x}" y="${axisH - 10}">${esc(seconds(t))}</text>`)
  }
  return out
}

/** A round step (1, 2 or 5 × 10^k ms) giving at most 12 ticks. */
export function tickStep (endMs: number): number {
  for (let unit = 1; ; unit *= 10) {
    for (const k of [1, 2, 5]) if (endMs / (k * unit) <= 12) return k * unit
  }
}

function drawViolations (c: Canvas, model: ReportModel): void {
  if (model.violations.length === 0) return
  c.label(`violations (${model.violations.length + model.violationsOmitted})`, omittedNote(model.violationsOmitted, 'violations'), 'lbl bad')
  for (const v of model.violations) {
    const x = c.x(v.t)
    const y = c.y + 1
    c.parts.push(`<path class="viol" d="M${r(x)} ${y} l5 ${barH} h-10 z"><title>${esc(`${seconds(v.t)} ${v.check}: ${v.message}`)}</title></path>`)
  }
  const first = model.violations[0]!
  c.text(first.t, ` ${first.check}: ${first.message}`.slice(0, 160), 'vt')
  c.row()
}

function drawFaults (c: Canvas, model: ReportModel): void {
  c.heading(`faults (${model.faults.length + model.faultsOmitted}${model.faultsOmitted > 0 ? `, ${model.faultsOmitted} not drawn` : ''})`)
  const rowsEnd: number[] = []
  const baseY = c.y
  for (const f of model.faults) {
    const x0 = c.x(f.from)
    const x1 = Math.max(x0 + 4, c.x(f.to)) + 60
    let row = rowsEnd.findIndex(end => end <= x0)
    if (row === -1) row = rowsEnd.length < faultRowsMax ? rowsEnd.length : faultRowsMax - 1
    rowsEnd[row] = Math.max(rowsEnd[row] ?? 0, x1)
    c.y = baseY + row * rowH
    const title = `${seconds(f.from)}${f.to > f.from ? ` – ${seconds(f.to)}` : ''}: ${f.text}${f.skipped === undefined ? '' : ` (skipped: ${f.skipped})`}`
    const fill = f.skipped === undefined ? '#ef6c00' : '#bdbdbd'
    c.bar(f.from, f.to, fill, title, f.skipped === undefined ? ' fill-opacity="0.55"' : ' stroke="#616161" stroke-dasharray="2 2"')
    c.text(f.from, f.skipped === undefined ? f.text.slice(0, 40) : `skipped: ${f.kind}`, f.skipped === undefined ? 'ft' : 'ft sk')
  }
  c.y = baseY + Math.max(1, rowsEnd.length) * rowH
}

function drawTerms (c: Canvas, model: ReportModel): void {
  c.heading('leader terms')
  c.label(`terms (${model.terms.length})`)
  for (const t of model.terms) {
    const leader = t.leader ?? 'no leader'
    const fill = t.leader === undefined ? '#e0e0e0' : `hsl(${(t.term * 67) % 360} 60% 72%)`
    c.bar(t.from, t.to, fill, `term ${t.term}, leader ${leader}: ${seconds(t.from)} – ${seconds(t.to)}`)
    if (c.x(t.to) - c.x(t.from) > 44) c.text(t.from, `${t.term} ${leader}`, 'bt')
  }
  c.row()
}

function drawAgents (c: Canvas, model: ReportModel): void {
  c.heading('agents (up / down / paused)')
  for (const lane of model.agents) {
    const note = omittedNote(lane.omitted, 'spans')
    c.label(lane.agent + (lane.omitted > 0 ? ' …' : ''), `${lane.agent} (${lane.role}): down ${seconds(lane.msByState.down)}, paused ${seconds(lane.msByState.paused)}${note === undefined ? '' : `; ${note}`}`)
    for (const s of lane.spans) c.bar(s.from, s.to, stateColours[s.state], `${lane.agent} ${s.state}: ${seconds(s.from)} – ${seconds(s.to)}`)
    c.row()
  }
}

function drawCommands (c: Canvas, model: ReportModel): void {
  if (model.commands.length === 0) return
  c.label(`commands (${model.commands.length + model.commandsOmitted})`, omittedNote(model.commandsOmitted, 'commands'))
  for (const cmd of model.commands) {
    const x = r(c.x(cmd.t))
    c.parts.push(`<circle cx="${x}" cy="${c.y + rowH / 2}" r="4" fill="${cmd.ok ? '#1e88e5' : '#f4511e'}"><title>${esc(`${seconds(cmd.t)} ${cmd.ok ? 'ok' : 'failed'}: ${cmd.text}`)}</title></circle>`)
  }
  c.row()
}

function drawHooks (c: Canvas, model: ReportModel): void {
  c.heading(`hooks per unit (${model.units.length + model.unitsOmitted} units${model.unitsOmitted > 0 ? `, ${model.unitsOmitted} not drawn` : ''})`)
  let machine: string | undefined
  for (const unit of model.units) {
    if (unit.machine !== machine) {
      machine = unit.machine
      c.label(machine, undefined, 'lbl mach')
      c.row()
    }
    const note = omittedNote(unit.omitted, 'hook runs')
    const counts = Object.entries(unit.byOutcome).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`).join(', ')
    c.label(`  ${unit.unit}${unit.omitted > 0 ? ' …' : ''}`, `${unit.unit} on ${unit.machine}: ${counts}${note === undefined ? '' : `; ${note}`}`)
    for (const b of unit.bars) c.bar(b.from, b.to, outcomeColours[b.outcome], `${unit.unit} ${b.hook} ${b.outcome}: ${seconds(b.from)} – ${seconds(b.to)}`)
    c.row()
  }
}

function drawCurve (c: Canvas, model: ReportModel, convergedAtMs: number | undefined): void {
  c.heading(`units active${model.curveOmitted > 0 ? ` (${model.curveOmitted} samples thinned out)` : ''}`)
  const top = c.y
  const bottom = top + curveH
  const max = Math.max(1, ...model.curve.map(p => p.total))
  const yOf = (n: number): number => bottom - (n / max) * curveH
  c.parts.push(`<rect class="frame" x="${labelW}" y="${top}" width="${plotW}" height="${curveH}"/>`)
  c.parts.push(`<text class="lbl" x="6" y="${top + 10}">${esc(`max ${max}`)}</text><text class="lbl" x="6" y="${bottom}">0</text>`)
  if (model.curve.length > 0) {
    c.parts.push(`<polyline class="total" points="${steps(c, model.curve.map(p => ({ t: p.t, y: yOf(p.total) })))}"/>`)
    c.parts.push(`<polyline class="active" points="${steps(c, model.curve.map(p => ({ t: p.t, y: yOf(p.active) })))}"><title>units active (blue) of units in the model (grey)</title></polyline>`)
  }
  if (convergedAtMs !== undefined) {
    const x = r(c.x(convergedAtMs))
    c.parts.push(`<line class="conv" x1="${x}" y1="${top}" x2="${x}" y2="${bottom}"><title>${esc(`converged at ${seconds(convergedAtMs)}`)}</title></line>`)
    c.parts.push(`<text class="ct" x="${r(c.x(convergedAtMs) + 3)}" y="${top + 12}">${esc(`converged ${seconds(convergedAtMs)}`)}</text>`)
  }
  c.y = bottom + 6
}

/** A step curve: each sample holds until the next. */
function steps (c: Canvas, points: Array<{ t: number, y: number }>): string {
  const out: string[] = []
  points.forEach((p, i) => {
    if (i > 0) out.push(`${r(c.x(p.t))},${r(points[i - 1]!.y)}`)
    out.push(`${r(c.x(p.t))},${r(p.y)}`)
  })
  out.push(`${r(c.x(c.endMs))},${r(points[points.length - 1]!.y)}`)
  return out.join(' ')
}

function omittedNote (omitted: number, what: string): string | undefined {
  return omitted > 0 ? `${omitted} ${what} not drawn (limit reached)` : undefined
}
