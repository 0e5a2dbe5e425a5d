/**
 * `cantrip inspect`'s server side without a browser: its options (checked before
 * anything connects), recorded logs (JSONL, merged by time, bad lines refused by line),
 * a simulated run's inspection log (`cantrip sim … --inspect-log`: unit and relation
 * actors at simulated times, the run's trace unchanged), the page and its assets served
 * from this host, and the merged stream relayed to a page's WebSocket — history first,
 * then live messages from a stand-in agent, which is named by what it calls itself.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import WebSocket from 'ws'
import { hookTimeline } from '../agent/inspect-viewer/model/hook-timeline.ts'
import { EventLog } from '../agent/inspect-viewer/model/event-log.ts'
import { parseInspectMessage } from '../agent/inspect-viewer/model/inspect-message.ts'
import { readRecordedLog, readRecordedLogs } from '../agent/inspect-viewer/recorded-log.ts'
import { inspectPlan, mergeSources, parseAgentFlag, parseListen } from '../agent/inspect-viewer/viewer-plan.ts'
import { startViewerServer } from '../agent/inspect-viewer/viewer-server.ts'
import { simMain } from '../sim/cli/sim-main.ts'
import { startGeneratedAgent } from './support/inspect-generator.ts'

const test = suite('inspect-viewer-server')
const dir = mkdtempSync(join(tmpdir(), 'inspect-viewer-server-'))

async function until (what: string, holds: () => boolean, withinMs = 20_000): Promise<void> {
  const deadline = performance.now() + withinMs
  while (!holds()) {
    if (performance.now() > deadline) assert.unreachable(`${what} within ${withinMs} ms`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

test('options: --agent, --listen on this host only, --log and --sim files must exist; discovered and --agent merged by URL', () => {
  assert.equal(parseAgentFlag('ws://127.0.0.1:4001'), { name: '127.0.0.1:4001', url: 'ws://127.0.0.1:4001' })
  assert.equal(parseAgentFlag('machine-3=ws://127.0.0.1:4003'), { name: 'machine-3', url: 'ws://127.0.0.1:4003' })
  assert.throws(() => parseAgentFlag('http://127.0.0.1:1'), /cantrip inspect: expected --agent as ws:\/\/HOST:PORT/)
  assert.equal(parseListen('127.0.0.1:8765'), { host: '127.0.0.1', port: 8765 })
  assert.equal(parseListen('[::1]:0'), { host: '::1', port: 0 })
  assert.throws(() => parseListen('0.0.0.0:8765'), /expected --listen on this host .*got 0\.0\.0\.0/)
  assert.throws(() => parseListen('8765'), /expected --listen as HOST:PORT/)
  assert.throws(() => inspectPlan({ log: [join(dir, 'missing.jsonl')] }), /expected a recorded log at .*missing\.jsonl for --log, got "no such file"/)
  assert.throws(() => inspectPlan({ sim: join(dir, 'run-1.html') }), /expected --sim naming a run's <scenario>-<seed>\.json report/)
  assert.throws(() => inspectPlan({ sim: join(dir, 'run-1.json') }), /run-1\.inspect\.jsonl/)
  const plan = inspectPlan({ agent: ['ws://127.0.0.1:1'], open: false })
  assert.equal([plan.host, plan.port, plan.discover, plan.open, plan.agents.length], ['127.0.0.1', 0, true, false, 1])
  assert.equal(mergeSources([{ name: 'machine-0', url: 'ws://a' }, { name: 'machine-1', url: 'ws://b' }], [{ name: 'mine', url: 'ws://b' }, { name: 'x', url: 'ws://c' }]),
    [{ name: 'machine-0', url: 'ws://a' }, { name: 'mine', url: 'ws://b' }, { name: 'x', url: 'ws://c' }])
})

test('recorded logs: merged by time; a line that is not a message with "at" is refused by file and line', async () => {
  const a = join(dir, 'a.jsonl')
  const b = join(dir, 'b.jsonl')
  writeFileSync(a, '{"type":"@xstate.event","at":5,"n":"a5"}\n\n{"type":"@xstate.event","at":9,"n":"a9"}\n')
  writeFileSync(b, '{"type":"@xstate.event","at":1,"n":"b1"}\n{"type":"@xstate.event","at":7,"n":"b7"}\n')
  assert.equal((await readRecordedLogs([a, b])).map(m => m.n), ['b1', 'a5', 'b7', 'a9'])
  const bad = join(dir, 'bad.jsonl')
  writeFileSync(bad, '{"type":"@xstate.event","at":1}\n{"type":"@xstate.event"}\n')
  try {
    await readRecordedLog(bad)
    assert.unreachable('refused')
  } catch (error) {
    assert.match((error as Error).message, /^cantrip inspect: expected a message with "at" on line 2 of .*bad\.jsonl/)
  }
  writeFileSync(bad, 'not json\n')
  try {
    await readRecordedLog(bad)
    assert.unreachable('refused')
  } catch (error) {
    assert.match((error as Error).message, /expected JSON on line 1 of/)
  }
})

test('cantrip sim --inspect-log: the unit actors at simulated times, install failing twice then ok, the trace as without the log', async () => {
  const out: string[] = []
  const deps = { out: (line: string) => { out.push(line) }, err: (line: string) => { out.push(line) }, tty: false, cwd: process.cwd() }
  const reportDir = join(dir, 'sim')
  assert.is(await simMain(['examples/sim/install-fails-twice.yaml', '--report', reportDir, '--inspect-log', '--quiet'], deps), 0, out.join('\n'))
  const file = join(reportDir, 'install-fails-twice-1.inspect.jsonl')
  assert.ok(out.some(l => l.startsWith(`inspect log: ${file} (`)), out.join('\n'))
  const trace = (lines: string[]): string | undefined => lines.map(l => /trace (\w+)/.exec(l)?.[1]).find(t => t !== undefined)
  const plain: string[] = []
  assert.is(await simMain(['examples/sim/install-fails-twice.yaml', '--quiet'], { ...deps, out: l => { plain.push(l) } }), 0)
  assert.is(trace(out), trace(plain), 'inspecting does not change the run')
  assert.is(await simMain(['examples/sim/install-fails-twice.yaml', '--seeds', '1..2', '--inspect-log'], deps), 64)

  const raws = await readRecordedLog(file)
  const log = new EventLog()
  for (const raw of raws) {
    const parsed = parseInspectMessage(raw, { agent: 'unknown', at: 0 })
    assert.type(parsed, 'object', String(parsed))
    if (typeof parsed !== 'string') log.append(parsed)
  }
  const units = [...log.latest.actors.values()].filter(a => a.kind === 'unit')
  assert.equal(units.map(u => u.name).sort(), ['unit-flaky-0', 'unit-flaky-1', 'unit-flaky-2'])
  assert.ok(units.every(u => /^machine-\d+$/.test(u.agent)), units.map(u => u.agent).join(', '))
  assert.ok(log.messages.every(m => m.at < 1e9), 'simulated ms, not wall time')
  for (const unit of units) {
    const installs = hookTimeline(log.messages, unit.key).filter(r => r.hook === 'install').map(r => r.result)
    assert.equal(installs, ['error', 'error', 'ok'], `${unit.name}'s installs`)
  }
})

test('the server: the page and its assets from this host, the recorded log then live agents\' messages over /stream', async () => {
  const recorded = [{ type: '@xstate.event', at: 1, agent: 'machine-9', sessionId: 'x:1', event: { type: 'recorded' } }]
  const agent = await startGeneratedAgent({ agent: 'machine-7', units: ['kv/0'], hookMs: 5 })
  // Given by URL only: the source takes the name its messages carry.
  const server = await startViewerServer({ host: '127.0.0.1', port: 0, agents: [{ name: agent.url.replace('ws://', ''), url: agent.url }], recorded, recordedLabel: 'test' })
  const socket = new WebSocket(`${server.url.replace('http', 'ws')}stream`)
  const frames: Array<{ kind: string, messages?: Array<Record<string, unknown>>, sources?: Array<{ name: string, state: string }> }> = []
  socket.on('message', data => { frames.push(JSON.parse(data.toString()) as typeof frames[number]) })
  try {
    const page = await (await fetch(server.url)).text()
    assert.match(page, /<script src="\/elk\.js"><\/script>/)
    assert.not.match(page, /https?:\/\//, 'the page names no other host')
    const app = await fetch(`${server.url}app.js`)
    assert.is(app.status, 200)
    assert.match(app.headers.get('content-type') ?? '', /javascript/)
    assert.match(await app.text(), /cantripInspect/)
    assert.match(await (await fetch(`${server.url}elk.js`)).text(), /ELK/)
    assert.is((await fetch(`${server.url}nope`)).status, 404)

    const messages = (): Array<Record<string, unknown>> => frames.flatMap(f => f.messages ?? [])
    await until('the unit actor', () => messages().some(m => m.type === '@xstate.actor' && m.name === 'unit-kv-0'))
    assert.is(messages()[0]!.event !== undefined && (messages()[0]!.event as { type: string }).type, 'recorded', 'the recorded log first')
    assert.ok(messages().slice(1).every(m => m.agent === 'machine-7' && typeof m.at === 'number'))
    await until('the source named by its stream', () => frames.some(f => f.sources?.some(s => s.name === 'machine-7' && s.state === 'connected') === true))
    const before = messages().length
    agent.changeConfig('kv/0', 'c9')
    await until('live messages after the config change', () => messages().slice(before).some(m => m.type === '@xstate.event' && (m.event as { type: string }).type === 'remote.changed'))
    assert.ok(server.messageCount >= messages().length)
  } finally {
    socket.terminate()
    await server.close()
    await agent.close()
  }
})

test.after(() => { rmSync(dir, { recursive: true, force: true }) })

test.run()
