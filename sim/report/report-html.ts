/**
 * One self-contained HTML page per run: a header (scenario, seed, outcome, trace hash,
 * failure, replay command), the SVG timeline, a legend, and the violations and fault
 * schedule as lists. No scripts, no fonts or styles from the network: it opens offline.
 */
import type { RunResult } from '../scenario/scenario-types.ts'
import { escapeXml as esc, seconds } from './escape.ts'
import { reportMarkersMax, type ReportModel } from './report-model.ts'
import { outcomeColours, renderTimeline, stateColours } from './report-svg.ts'

const style = `
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #212121; background: #fff; }
h1 { font-size: 18px; margin: 0 0 8px; }
table.hdr td { padding: 1px 12px 1px 0; vertical-align: top; }
code { font: 12px ui-monospace, monospace; background: #f5f5f5; padding: 1px 4px; }
.pass { color: #2e7d32; font-weight: bold; } .fail { color: #c62828; font-weight: bold; }
.legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 12px; height: 10px; margin-right: 4px; vertical-align: middle; }
.scroll { overflow-x: auto; border: 1px solid #e0e0e0; margin: 10px 0; }
svg text { font: 10px ui-monospace, monospace; fill: #212121; }
svg .hd { font-weight: bold; font-size: 11px; } svg .ph { fill: #757575; } svg .tick { text-anchor: middle; fill: #616161; }
svg .grid { stroke: #e0e0e0; stroke-width: 1; } svg .ax { stroke: #9e9e9e; }
svg .bad, svg .vt { fill: #c62828; font-weight: bold; } svg .viol { fill: #d50000; }
svg .mach { font-weight: bold; } svg .ft { font-size: 9px; } svg .sk { fill: #757575; } svg .bt { font-size: 9px; }
svg .frame { fill: none; stroke: #bdbdbd; } svg .total { fill: none; stroke: #9e9e9e; stroke-width: 1; }
svg .active { fill: none; stroke: #1e88e5; stroke-width: 2; } svg .conv { stroke: #2e7d32; stroke-width: 2; stroke-dasharray: 4 3; }
svg .ct { fill: #2e7d32; font-weight: bold; }
`

export function renderHtml (result: RunResult, model: ReportModel): string {
  const title = `${result.scenario} seed ${result.seed}: ${result.outcome}`
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${esc(`cantrip sim: ${title}`)}</title>`,
    `<style>${style}</style></head><body>`,
    `<h1>${esc(`cantrip sim — ${result.scenario}`)}</h1>`,
    header(result),
    legend(),
    `<div class="scroll">${renderTimeline(model, result.convergedAtMs)}</div>`,
    violationList(model),
    faultList(result),
    '</body></html>',
    ''
  ].join('\n')
}

function header (result: RunResult): string {
  const rows: Array<[string, string]> = [
    ['seed', esc(String(result.seed))],
    ['outcome', `<span class="${result.outcome === 'pass' ? 'pass' : 'fail'}">${esc(result.outcome)}</span>`],
    ['trace hash', `<code>${esc(result.hash)}</code>`],
    ['simulated', esc(`${seconds(result.simulatedMs)} in ${seconds(result.wallMs)} wall`)],
    ['converged', esc(result.convergedAtMs === undefined ? 'no' : `at ${seconds(result.convergedAtMs)}`)],
    ['counts', esc(Object.entries(result.counts).map(([k, v]) => `${k} ${v}`).join(', '))]
  ]
  if (result.failure !== undefined) rows.push(['failure', `<span class="fail">${esc(result.failure)}</span>`])
  rows.push(['replay', `<code>${esc(result.replay)}</code>`])
  return `<table class="hdr">${rows.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v}</td></tr>`).join('')}</table>`
}

function legend (): string {
  const item = (colour: string, text: string): string => `<span><i style="background:${colour}"></i>${esc(text)}</span>`
  return `<p class="legend">${[
    ...Object.entries(stateColours).map(([k, c]) => item(c, `agent ${k}`)),
    ...Object.entries(outcomeColours).map(([k, c]) => item(c, `hook ${k}`)),
    item('#ef6c00', 'fault'), item('#bdbdbd', 'fault skipped'), item('#d50000', 'violation')
  ].join('')} Hover any bar for details.</p>`
}

function violationList (model: ReportModel): string {
  if (model.violations.length === 0) return '<p>No invariant violations.</p>'
  const more = model.violationsOmitted > 0 ? `<li>${esc(`… ${model.violationsOmitted} more not listed`)}</li>` : ''
  return `<h2>Violations</h2><ul>${model.violations.map(v => `<li>${esc(`${seconds(v.t)} ${v.check}: ${v.message}`)}</li>`).join('')}${more}</ul>`
}

function faultList (result: RunResult): string {
  if (result.faults.length === 0) return '<p>No faults in the schedule.</p>'
  const shown = result.faults.slice(0, reportMarkersMax)
  const more = result.faults.length > shown.length ? `<li>${esc(`… ${result.faults.length - shown.length} more not listed`)}</li>` : ''
  return `<h2>Fault schedule (${result.faults.length})</h2><ol>${shown.map(f => `<li><code>${esc(JSON.stringify(f))}</code></li>`).join('')}${more}</ol>`
}
