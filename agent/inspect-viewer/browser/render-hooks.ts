/// <reference lib="dom" />
import type { HookRun } from '../model/hook-timeline.ts'
import { esc, timeText } from './dom.ts'

/** A unit's hook timeline: one row per hook run, its start, duration and result, newest last. */

/** Rows drawn (the newest). */
const hookRowsMax = 200

export function renderHooks (container: HTMLElement, unitName: string | undefined, runs: readonly HookRun[], at: number): void {
  if (unitName === undefined) { container.innerHTML = '<p class="hint">select a unit (or one of its relations)</p>'; return }
  const rows = runs.slice(-hookRowsMax).map(run => {
    const ms = (run.end ?? at) - run.start
    return `<tr class="hook result-${run.result}" data-hook="${esc(run.hook)}" data-result="${run.result}"><td>${esc(run.hook)}</td><td>${esc(timeText(run.start))}</td><td>${ms} ms</td><td>${run.result}</td></tr>`
  }).join('')
  container.innerHTML = `<p class="unit">${esc(unitName)}: ${runs.length} hooks</p><table><tr><th>hook</th><th>start</th><th>took</th><th>result</th></tr>${rows}</table>`
}
