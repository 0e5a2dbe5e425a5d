/**
 * `cantrip inspect` with 100 units stays responsive: bench/inspect-viewer.ts measures,
 * in headless chromium, time to first render and to all units drawn, each render while
 * every unit's config changes in turn, and steps back in time; the figures are printed.
 * The bounds are generous (the machine is shared): they catch a viewer that stalls, not
 * a few milliseconds.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { describeResponsiveness, measureViewerResponsiveness } from '../bench/inspect-viewer.ts'

/** What "responsive" means here, on a loaded 2-core machine. */
const allUnitsDrawnMsMax = 20_000
const renderMedianMsMax = 200
const stepBackMedianMsMax = 200

test('100 units: first render, per-update and step-back times within bounds (figures printed)', async () => {
  const r = await measureViewerResponsiveness({ agents: 10, unitsPerAgent: 10, seconds: 6 })
  for (const line of describeResponsiveness(r)) console.log(`inspect viewer: ${line}`)
  assert.is(r.units, 100)
  assert.ok(r.firstRenderMs > 0 && r.allUnitsMs >= r.firstRenderMs, JSON.stringify(r))
  assert.ok(r.allUnitsMs < allUnitsDrawnMsMax, `all units drawn at ${r.allUnitsMs} ms`)
  assert.ok(r.renderMs.count > 10, `renders under load: ${r.renderMs.count}`)
  assert.ok(r.messagesPerSecond > 100, `a real load: ${r.messagesPerSecond} messages/s`)
  assert.ok(r.renderMs.median < renderMedianMsMax, `render median ${r.renderMs.median} ms`)
  // Every one of the 20 steps renders; on a loaded machine a live batch that was still in
  // flight when the steps began may render too, so the count is a floor, not an equality.
  assert.ok(r.stepBackMs.count >= 20 && r.stepBackMs.median < stepBackMedianMsMax, `step back ${JSON.stringify(r.stepBackMs)}`)
})

test.run()
