/**
 * `cantrip sim --report DIR`: writes `<scenario>-<seed>.html` (the timeline, readable
 * offline) and `<scenario>-<seed>.json` (RunResult plus per-lane aggregates) into DIR.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { RunRecord } from '../scenario/scenario-types.ts'
import { buildReportModel } from './report-model.ts'
import { renderHtml } from './report-html.ts'
import { buildSummary } from './report-summary.ts'

export function writeReport (record: RunRecord, dir: string): { html: string, json: string } {
  const { scenario, seed } = record.result
  if (!/^[a-z0-9][a-z0-9-]*$/.test(scenario)) throw new Error(`sim report: expected a scenario name of [a-z0-9-], got ${JSON.stringify(scenario)}`)
  const model = buildReportModel(record)
  const base = join(dir, `${scenario}-${seed}`)
  mkdirSync(dir, { recursive: true })
  const html = `${base}.html`
  const json = `${base}.json`
  writeFileSync(html, renderHtml(record.result, model))
  writeFileSync(json, `${JSON.stringify(buildSummary(record, model), null, 2)}\n`)
  return { html, json }
}
