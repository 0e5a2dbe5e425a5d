/**
 * How responsive `cantrip inspect`'s page stays with 100 units: stand-in agents
 * (test/support/inspect-generator.ts: real unit actors, stubbed hooks) stream into the
 * viewer's server, Debian's chromium (headless, playwright-core) opens the page, and
 * the page's own performance.now() marks (window.cantripInspect.timings) give
 *   - time to first render (navigation start → first actor drawn) and to all units drawn,
 *   - the first statechart laid out (ELK) and drawn,
 *   - per update, while every unit's config changes in turn: each render's duration and
 *     the delay from a batch's arrival to its render,
 *   - a step back in time (and a jump to the middle of the log) to its render.
 *
 *   node --import tsx bench/inspect-viewer.ts [AGENTS] [UNITS_PER_AGENT] [SECONDS]
 */
import { pathToFileURL } from 'node:url'
import { startViewerServer } from '../agent/inspect-viewer/viewer-server.ts'
import { startGeneratedAgent, type GeneratedAgent } from '../test/support/inspect-generator.ts'
import { ensureChromium, launchChromium } from '../test/support/inspect-browser.ts'

export interface Spread { count: number, median: number, p95: number, max: number }

export interface ViewerResponsiveness {
  agents: number
  units: number
  /** Messages in the page's log at the end, and the rate during the load. */
  messages: number
  messagesPerSecond: number
  firstRenderMs: number
  allUnitsMs: number
  firstChartMs: number
  renderMs: Spread
  updateMs: Spread
  stepBackMs: Spread
  jumpMs: number
}

interface PageTimings { firstRenderMs: number | undefined, renderMs: number[], updateMs: number[], messages: number }

/** Waits bounded by this long for the page to show everything. */
const pageWaitMs = 120_000
/** How often a round of config changes is sent, and to how many units. */
const roundMs = 200
const unitsPerRound = 10

function spread (values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number): number => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
  const round = (n: number): number => Math.round(n * 10) / 10
  return { count: sorted.length, median: round(at(0.5)), p95: round(at(0.95)), max: round(sorted.at(-1) ?? 0) }
}

async function allIdle (agents: readonly GeneratedAgent[], withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs
  const idle = (agent: GeneratedAgent, unit: string): boolean => agent.recorded.some(m => m.type === '@xstate.snapshot' && m.name === `unit-${unit.replace('/', '-')}` &&
    JSON.stringify((m.snapshot as { value?: unknown }).value).includes('"uniter":"idle"'))
  while (!agents.every(a => a.units.every(u => idle(a, u)))) {
    if (performance.now() > deadline) throw new Error(`inspect bench: expected every generated unit idle within ${withinMs / 1000}s`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

export async function measureViewerResponsiveness (options: { agents?: number, unitsPerAgent?: number, seconds?: number } = {}): Promise<ViewerResponsiveness> {
  const agentCount = options.agents ?? 10
  const perAgent = options.unitsPerAgent ?? 10
  const seconds = options.seconds ?? 10
  ensureChromium()
  const agents: GeneratedAgent[] = []
  let server: Awaited<ReturnType<typeof startViewerServer>> | undefined
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined
  try {
    for (let a = 0; a < agentCount; a++) {
      const units = Array.from({ length: perAgent }, (_, i) => `app${a}/${i}`)
      agents.push(await startGeneratedAgent({ agent: `machine-${a}`, units, hookMs: 20 }))
    }
    await allIdle(agents, pageWaitMs)
    server = await startViewerServer({ host: '127.0.0.1', port: 0, agents: agents.map(a => ({ name: a.agent, url: a.url })), recorded: [] })
    browser = await launchChromium()
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } })
    await page.goto(server.url)
    const units = agentCount * perAgent
    await page.waitForFunction(n => document.querySelectorAll('#tree [data-kind="unit"]').length >= n, units, { timeout: pageWaitMs, polling: 'raf' })
    const allUnitsMs = await page.evaluate(() => performance.now())
    await page.waitForSelector('#chart svg', { timeout: pageWaitMs })
    const firstChartMs = await page.evaluate(() => performance.now())
    const timings = async (): Promise<PageTimings> => await page.evaluate(() => (window as unknown as { cantripInspect: { timings: PageTimings } }).cantripInspect.timings)
    const initial = await timings()
    await page.evaluate(() => {
      const t = (window as unknown as { cantripInspect: { timings: PageTimings } }).cantripInspect.timings
      t.renderMs.length = 0
      t.updateMs.length = 0
    })

    // Load: every unit's config changes in turn, unitsPerRound units every roundMs.
    const all = agents.flatMap(agent => agent.units.map(unit => ({ agent, unit })))
    const messagesBefore = initial.messages
    const started = performance.now()
    let round = 0
    while (performance.now() - started < seconds * 1000) {
      for (let i = 0; i < unitsPerRound; i++) {
        const { agent, unit } = all[(round * unitsPerRound + i) % all.length]!
        agent.changeConfig(unit, `bench-${round}`)
      }
      round++
      await new Promise(resolve => setTimeout(resolve, roundMs))
    }
    await new Promise(resolve => setTimeout(resolve, 1_000))
    const loaded = await timings()
    const loadSeconds = (performance.now() - started) / 1000

    // Time travel: single steps back (button), then a jump to the middle (slider).
    await page.evaluate(() => { (window as unknown as { cantripInspect: { timings: PageTimings } }).cantripInspect.timings.renderMs.length = 0 })
    for (let i = 0; i < 20; i++) {
      await page.click('[data-testid="step-back"]')
      await page.evaluate(async () => await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve))))
    }
    const steps = (await timings()).renderMs.slice()
    await page.evaluate(() => { (window as unknown as { cantripInspect: { timings: PageTimings } }).cantripInspect.timings.renderMs.length = 0 })
    await page.$eval('#slider', slider => {
      const input = slider as HTMLInputElement
      input.value = String(Math.floor(Number(input.max) / 2))
      input.dispatchEvent(new Event('input'))
    })
    await page.evaluate(async () => await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve))))
    const jump = (await timings()).renderMs
    return {
      agents: agentCount,
      units,
      messages: loaded.messages,
      messagesPerSecond: Math.round((loaded.messages - messagesBefore) / loadSeconds),
      firstRenderMs: Math.round(initial.firstRenderMs ?? -1),
      allUnitsMs: Math.round(allUnitsMs),
      firstChartMs: Math.round(firstChartMs),
      renderMs: spread(loaded.renderMs),
      updateMs: spread(loaded.updateMs),
      stepBackMs: spread(steps),
      jumpMs: Math.round((jump.at(-1) ?? -1) * 10) / 10
    }
  } finally {
    await browser?.close()
    await server?.close()
    for (const agent of agents) await agent.close()
  }
}

export function describeResponsiveness (r: ViewerResponsiveness): string[] {
  const s = (x: Spread): string => `median ${x.median} ms, p95 ${x.p95} ms, max ${x.max} ms (${x.count})`
  return [
    `${r.units} units on ${r.agents} agents, ${r.messages} messages in the page's log, ${r.messagesPerSecond} messages/s during the load`,
    `first render ${r.firstRenderMs} ms after navigation, all units drawn at ${r.allUnitsMs} ms, first statechart at ${r.firstChartMs} ms`,
    `per render under load: ${s(r.renderMs)}`,
    `batch arrival → rendered: ${s(r.updateMs)}`,
    `step back: ${s(r.stepBackMs)}; jump to the middle of the log: ${r.jumpMs} ms`
  ]
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [agents, perAgent, seconds] = process.argv.slice(2).map(Number)
  const result = await measureViewerResponsiveness({
    ...(agents === undefined || Number.isNaN(agents) ? {} : { agents }),
    ...(perAgent === undefined || Number.isNaN(perAgent) ? {} : { unitsPerAgent: perAgent }),
    ...(seconds === undefined || Number.isNaN(seconds) ? {} : { seconds })
  })
  for (const line of describeResponsiveness(result)) process.stdout.write(`inspect viewer: ${line}\n`)
  process.stdout.write(`${JSON.stringify(result)}\n`)
}
