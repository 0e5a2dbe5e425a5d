/**
 * The report's view of a run: RunEvents (sim/scenario/scenario-types.ts) folded into
 * spans and samples the timeline draws and the JSON summary counts. Pure data, no
 * markup; everything is bounded by the named maxima below and says what it left out.
 */
import type { FaultEvent, RunEvent, RunRecord } from '../scenario/scenario-types.ts'

/** Spans drawn per agent lane; the rest are counted as left out (aggregates still count them). */
export const reportSpansPerLaneMax = 400
/** Hook bars drawn per unit. */
export const reportHooksPerUnitMax = 200
/** Units drawn (each a row); the rest are counted. */
export const reportUnitsMax = 60
/** Fault bands, violation markers and command markers drawn, each. */
export const reportMarkersMax = 300
/** Points of the units-active curve. */
export const reportCurvePointsMax = 2_000

export type AgentState = 'up' | 'down' | 'paused'
export type HookOutcome = 'succeeded' | 'failed' | 'missing' | 'terminated'
export type Phase = 'setup' | 'faults' | 'heal' | 'liveness' | 'done'

export interface Span<S> { from: number, to: number, state: S }

export interface AgentLane {
  agent: string
  role: 'controller' | 'machine'
  spans: Array<Span<AgentState>>
  omitted: number
  /** Totals over every span, drawn or not. */
  msByState: Record<AgentState, number>
}

export interface HookBar { hook: string, from: number, to: number, outcome: HookOutcome }

export interface UnitRow {
  unit: string
  machine: string
  bars: HookBar[]
  omitted: number
  byOutcome: Record<HookOutcome, number>
}

export interface TermSpan { term: number, leader: string | undefined, from: number, to: number }

export interface FaultBand { from: number, to: number, text: string, kind: FaultEvent['kind'], skipped: string | undefined }

export interface ReportModel {
  endMs: number
  phases: Array<Span<Phase>>
  agents: AgentLane[]
  terms: TermSpan[]
  faults: FaultBand[]
  faultsOmitted: number
  units: UnitRow[]
  unitsOmitted: number
  curve: Array<{ t: number, active: number, total: number }>
  curveOmitted: number
  violations: Array<{ t: number, check: string, message: string }>
  violationsOmitted: number
  commands: Array<{ t: number, text: string, ok: boolean }>
  commandsOmitted: number
}

/** Builds the model; `endMs` is the later of the run's simulated time and its last event. */
export function buildReportModel (record: RunRecord): ReportModel {
  const events = [...record.events].sort((a, b) => a.t - b.t)
  const endMs = Math.max(1, record.result.simulatedMs, ...events.map(eventEnd))
  const violations = events.filter(e => e.kind === 'violation').map(e => ({ t: e.t, check: e.check, message: e.message }))
  const commands = events.filter(e => e.kind === 'command').map(e => ({ t: e.t, text: e.text, ok: e.ok }))
  const faults = faultBands(events)
  const units = unitRows(events)
  const curve = events.filter(e => e.kind === 'units').map(e => ({ t: e.t, active: e.active, total: e.total }))
  return {
    endMs,
    phases: phaseSpans(events, endMs),
    agents: agentLanes(events, endMs, record.result.counts.controllers),
    terms: termSpans(events, endMs),
    faults: faults.slice(0, reportMarkersMax),
    faultsOmitted: Math.max(0, faults.length - reportMarkersMax),
    units: units.slice(0, reportUnitsMax),
    unitsOmitted: Math.max(0, units.length - reportUnitsMax),
    curve: thin(curve, reportCurvePointsMax),
    curveOmitted: Math.max(0, curve.length - reportCurvePointsMax),
    violations: violations.slice(0, reportMarkersMax),
    violationsOmitted: Math.max(0, violations.length - reportMarkersMax),
    commands: commands.slice(0, reportMarkersMax),
    commandsOmitted: Math.max(0, commands.length - reportMarkersMax)
  }
}

function eventEnd (e: RunEvent): number {
  if (e.kind === 'fault' && 'forMs' in e.fault && e.fault.forMs !== undefined) return e.t + e.fault.forMs
  return e.t
}

function phaseSpans (events: readonly RunEvent[], endMs: number): Array<Span<Phase>> {
  const marks = events.filter(e => e.kind === 'phase')
  return marks.map((e, i) => ({ from: e.t, to: marks[i + 1]?.t ?? endMs, state: e.phase }))
    .filter(span => span.state !== 'done' || span.to > span.from)
}

/**
 * One lane per agent seen in the events. Every founding controller (`c0` … of
 * counts.controllers) gets a lane even without events: controllers start up at 0, so
 * a lane whose first event is a crash or pause was up before it.
 */
function agentLanes (events: readonly RunEvent[], endMs: number, controllers: number): AgentLane[] {
  const byAgent = new Map<string, Array<{ t: number, state: AgentState }>>()
  for (let i = 0; i < controllers; i++) byAgent.set(`c${i}`, [])
  for (const e of events) {
    if (e.kind !== 'agent') continue
    let list = byAgent.get(e.agent)
    if (list === undefined) byAgent.set(e.agent, list = [])
    list.push({ t: e.t, state: e.state })
  }
  for (let i = 0; i < controllers; i++) {
    const marks = byAgent.get(`c${i}`)!
    if (marks.length === 0 || (marks[0]!.t > 0 && marks[0]!.state !== 'up')) marks.unshift({ t: 0, state: 'up' })
  }
  const lanes = [...byAgent].map(([agent, marks]): AgentLane => {
    const spans = marks.map((m, i) => ({ from: m.t, to: marks[i + 1]?.t ?? endMs, state: m.state }))
    const msByState: Record<AgentState, number> = { up: 0, down: 0, paused: 0 }
    for (const span of spans) msByState[span.state] += span.to - span.from
    const role = agent.startsWith('machine-') ? 'machine' : 'controller'
    return { agent, role, spans: spans.slice(0, reportSpansPerLaneMax), omitted: Math.max(0, spans.length - reportSpansPerLaneMax), msByState }
  })
  return lanes.sort((a, b) => a.role === b.role ? naturalCompare(a.agent, b.agent) : a.role === 'controller' ? -1 : 1)
}

function termSpans (events: readonly RunEvent[], endMs: number): TermSpan[] {
  const marks = events.filter(e => e.kind === 'term')
  return marks.map((e, i) => ({ term: e.term, leader: e.leader, from: e.t, to: marks[i + 1]?.t ?? endMs }))
}

function faultBands (events: readonly RunEvent[]): FaultBand[] {
  return events.flatMap(e => {
    if (e.kind !== 'fault') return []
    const forMs = 'forMs' in e.fault ? e.fault.forMs : undefined
    return [{ from: e.t, to: e.t + (forMs ?? 0), text: e.text, kind: e.fault.kind, skipped: e.skipped }]
  })
}

function unitRows (events: readonly RunEvent[]): UnitRow[] {
  const rows = new Map<string, UnitRow>()
  for (const e of events) {
    if (e.kind !== 'hook') continue
    let row = rows.get(e.unit)
    if (row === undefined) {
      rows.set(e.unit, row = { unit: e.unit, machine: e.machine, bars: [], omitted: 0, byOutcome: { succeeded: 0, failed: 0, missing: 0, terminated: 0 } })
    }
    row.byOutcome[e.outcome]++
    if (row.bars.length < reportHooksPerUnitMax) row.bars.push({ hook: e.hook, from: e.start, to: e.t, outcome: e.outcome })
    else row.omitted++
  }
  return [...rows.values()].sort((a, b) => naturalCompare(a.machine, b.machine) || naturalCompare(a.unit, b.unit))
}

/** Keeps at most `max` samples, evenly spaced, always the last. */
function thin<T> (items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items]
  const step = items.length / max
  const kept: T[] = []
  for (let i = 0; i < max - 1; i++) kept.push(items[Math.floor(i * step)]!)
  kept.push(items[items.length - 1]!)
  return kept
}

/** `machine-2` before `machine-10`, `kv/2` before `kv/10`. */
export function naturalCompare (a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true })
}
