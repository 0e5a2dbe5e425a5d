/**
 * The machine-readable summary of a run: its RunResult plus aggregates per lane, for
 * scripts and dashboards (the HTML draws the same data).
 */
import type { FaultKind, RunRecord, RunResult } from '../scenario/scenario-types.ts'
import type { HookOutcome, ReportModel } from './report-model.ts'

export interface RunSummary {
  result: RunResult
  /** Per controller and machine agent: milliseconds down and paused, and state changes. */
  agents: Record<string, { role: 'controller' | 'machine', downMs: number, pausedMs: number, upMs: number, changes: number }>
  /** Per unit: its machine and how its hook runs ended. */
  hooks: Record<string, { machine: string } & Record<HookOutcome, number>>
  terms: Array<{ term: number, leader: string | null, fromMs: number, toMs: number }>
  faults: { byKind: Partial<Record<FaultKind, number>>, skipped: number, total: number }
  violations: Array<{ t: number, check: string, message: string }>
  commands: { total: number, failed: number }
  phases: Array<{ phase: string, fromMs: number, toMs: number }>
  /** The last units sample. */
  units: { active: number, total: number } | null
}

export function buildSummary (record: RunRecord, model: ReportModel): RunSummary {
  const agents: RunSummary['agents'] = {}
  for (const lane of model.agents) {
    agents[lane.agent] = { role: lane.role, downMs: lane.msByState.down, pausedMs: lane.msByState.paused, upMs: lane.msByState.up, changes: lane.spans.length + lane.omitted }
  }
  const hooks: RunSummary['hooks'] = {}
  for (const e of record.events) {
    if (e.kind !== 'hook') continue
    const row = hooks[e.unit] ??= { machine: e.machine, succeeded: 0, failed: 0, missing: 0, terminated: 0 }
    row[e.outcome]++
  }
  const byKind: RunSummary['faults']['byKind'] = {}
  let skipped = 0
  let total = 0
  const violations: RunSummary['violations'] = []
  let commands = 0
  let failedCommands = 0
  let units: RunSummary['units'] = null
  let unitsT = -1
  for (const e of record.events) {
    if (e.kind === 'fault') {
      total++
      if (e.skipped !== undefined) skipped++
      else byKind[e.fault.kind] = (byKind[e.fault.kind] ?? 0) + 1
    } else if (e.kind === 'violation') violations.push({ t: e.t, check: e.check, message: e.message })
    else if (e.kind === 'command') {
      commands++
      if (!e.ok) failedCommands++
    } else if (e.kind === 'units' && e.t >= unitsT) {
      units = { active: e.active, total: e.total }
      unitsT = e.t
    }
  }
  return {
    result: record.result,
    agents,
    hooks,
    terms: model.terms.map(t => ({ term: t.term, leader: t.leader ?? null, fromMs: t.from, toMs: t.to })),
    faults: { byKind, skipped, total },
    violations,
    commands: { total: commands, failed: failedCommands },
    phases: model.phases.map(p => ({ phase: p.state, fromMs: p.from, toMs: p.to })),
    units
  }
}
