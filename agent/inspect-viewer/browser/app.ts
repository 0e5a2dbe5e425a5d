/// <reference lib="dom" />
/**
 * The viewer's front end: receives the merged inspection log from the local server over
 * `/stream`, keeps it (EventLog, with checkpoints for time travel) and draws the state as
 * of the selected message: the actor tree, the selected actor's statechart, the unit's
 * hook timeline, the actor's context (relation databags for a relation actor) and the
 * message sequence. Live, the selection follows the newest message; paused, it stays.
 * `window.cantripInspect` exposes timings (first render, each update) for the tests.
 */
import { EventLog } from '../model/event-log.ts'
import { hookTimeline } from '../model/hook-timeline.ts'
import { parseInspectMessage } from '../model/inspect-message.ts'
import { messageSequence, sequenceLanes } from '../model/message-sequence.ts'
import type { ActorView, ViewState } from '../model/view-state.ts'
import { byId, esc, timeText } from './dom.ts'
import { renderChart } from './render-chart.ts'
import { renderHooks } from './render-hooks.ts'
import { renderSequence } from './render-sequence.ts'
import { renderTree } from './render-tree.ts'

/** Arrows in the sequence diagram at once. */
const sequenceShown = 60
/** Context text shown for an actor, in characters. */
const contextCharsMax = 20_000
/** Update timings kept for window.cantripInspect. */
const timingsMax = 10_000

interface SourceView { name: string, url: string, state: string, error?: string }

interface Timings {
  /** ms from navigation start to the first render that showed an actor. */
  firstRenderMs: number | undefined
  /** How long each render took (ms), and from a frame's arrival to its render. */
  renderMs: number[]
  updateMs: number[]
  messages: number
  frames: number
}

const log = new EventLog()
const timings: Timings = { firstRenderMs: undefined, renderMs: [], updateMs: [], messages: 0, frames: 0 }
;(window as unknown as { cantripInspect: unknown }).cantripInspect = { timings, log }

let live = true
let cursor = -1
let selected: string | undefined
let sources: SourceView[] = []
let renderQueued = false
let oldestUnrendered: number | undefined
let chartBusy = false
let chartAgain = false

const tree = byId('tree')
const slider = byId<HTMLInputElement>('slider')
const position = byId('position')
const pauseButton = byId<HTMLButtonElement>('pause')

function sourcesHtml (): string {
  return sources.map(s => `<div class="source state-${esc(s.state)}" data-source="${esc(s.url)}" title="${esc(s.error ?? s.url)}">${esc(s.name)} · ${esc(s.state)}</div>`).join('')
}

/** The unit whose hooks to show: the selected unit, or the unit of a selected relation. */
function unitOf (state: ViewState, actor: ActorView | undefined): ActorView | undefined {
  let a = actor
  while (a !== undefined && a.kind !== 'unit') a = a.parentKey === undefined ? undefined : state.actors.get(a.parentKey)
  return a
}

function shownKind (state: ViewState, key: string): boolean {
  const kind = state.actors.get(key)?.kind
  return kind !== undefined && kind !== 'other'
}

function drawChart (actor: ActorView | undefined): void {
  if (chartBusy) { chartAgain = true; return }
  chartBusy = true
  const target = actor === undefined ? undefined : { key: actor.key, kind: actor.kind, name: actor.name, definition: actor.definition, value: actor.snapshot.value }
  byId('chart-title').textContent = actor === undefined ? 'statechart' : `${actor.agent} / ${actor.name} (${actor.kind})`
  void renderChart(byId('chart'), target).finally(() => {
    chartBusy = false
    if (chartAgain) { chartAgain = false; queueRender() }
  })
}

function render (): void {
  renderQueued = false
  const started = performance.now()
  if (live) cursor = log.length - 1
  const state = log.stateAt(cursor)
  if (selected === undefined || !state.actors.has(selected)) {
    selected = [...state.actors.values()].find(a => a.kind === 'unit')?.key ?? [...state.actors.values()].find(a => a.kind !== 'other')?.key
  }
  const actor = selected === undefined ? undefined : state.actors.get(selected)
  renderTree(tree, state, selected, sourcesHtml())
  drawChart(actor)
  const unit = unitOf(state, actor)
  renderHooks(byId('hooks'), unit === undefined ? undefined : `${unit.agent} / ${unit.name}`, unit === undefined ? [] : hookTimeline(log.messages, unit.key, cursor), state.at)
  byId('context').textContent = actor === undefined ? '' : JSON.stringify(actor.snapshot.context ?? null, null, 1).slice(0, contextCharsMax)
  // The sequence between the actors the tree shows, and everything sent to the selected one.
  const steps = messageSequence(log.messages, cursor, sequenceShown, (from, to) => to === selected || (from !== to && shownKind(state, from) && shownKind(state, to)))
  renderSequence(byId('sequence'), steps, sequenceLanes(steps, state), cursor)
  slider.max = String(Math.max(0, log.length - 1))
  slider.value = String(Math.max(0, cursor))
  const at = log.messages[cursor]?.at
  position.textContent = `${live ? 'live' : 'paused'} · message ${cursor + 1} of ${log.length}${at === undefined ? '' : ` · ${timeText(at)}`}`
  position.dataset.cursor = String(cursor)
  position.dataset.live = String(live)
  pauseButton.disabled = !live
  const ended = performance.now()
  if (timings.renderMs.length < timingsMax) timings.renderMs.push(ended - started)
  if (oldestUnrendered !== undefined && timings.updateMs.length < timingsMax) timings.updateMs.push(ended - oldestUnrendered)
  oldestUnrendered = undefined
  if (timings.firstRenderMs === undefined && state.actors.size > 0) timings.firstRenderMs = ended
}

function queueRender (): void {
  if (renderQueued) return
  renderQueued = true
  requestAnimationFrame(render)
}

function receive (frame: { kind: string, messages?: unknown[], sources?: SourceView[] }): void {
  timings.frames++
  if (frame.kind === 'sources') sources = frame.sources ?? []
  for (const raw of frame.messages ?? []) {
    const parsed = parseInspectMessage(raw, { agent: 'unknown', at: Date.now() })
    if (typeof parsed === 'string') { console.warn(`cantrip inspect: ${parsed}`); continue }
    log.append(parsed)
    timings.messages++
  }
  oldestUnrendered ??= performance.now()
  // Paused, new messages only grow the slider; the view stays where it is.
  queueRender()
}

function connect (): void {
  const socket = new WebSocket(`ws://${location.host}/stream`)
  socket.onmessage = event => { receive(JSON.parse(String(event.data)) as Parameters<typeof receive>[0]) }
  socket.onclose = () => {
    sources = sources.map(s => ({ ...s, state: 'viewer disconnected' }))
    queueRender()
  }
}

function step (delta: number): void {
  live = false
  cursor = Math.min(log.length - 1, Math.max(0, cursor + delta))
  queueRender()
}

pauseButton.onclick = () => { live = false; queueRender() }
byId('back').onclick = () => { step(-1) }
byId('forward').onclick = () => { step(1) }
byId('live').onclick = () => { live = true; queueRender() }
slider.oninput = () => { live = false; cursor = Number(slider.value); queueRender() }
tree.onclick = event => {
  const node = (event.target as HTMLElement).closest<HTMLElement>('[data-key]')
  if (node?.dataset.key === undefined) return
  selected = node.dataset.key
  queueRender()
}
document.onkeydown = event => {
  if (event.key === 'ArrowLeft') step(-1)
  if (event.key === 'ArrowRight') step(1)
}
connect()
