/**
 * debug-log without processes: the record format on the wire (checked as receivers check
 * it), the filter (Juju's entity and module forms), the controllers' bounded ring with its
 * cursor and byte budget, the agents' shipper (Juju-like entities and modules, bounded
 * queue that says what it dropped) and Juju's line format; the API op end to end through
 * the CLI's paging against the op handler.
 */
import '../runtime/polyfill.ts'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { answerDebugLog } from '../actors/controller/api-debug-log.ts'
import { LogShipper } from '../agent/log-shipper.ts'
import { debugLogPlan, formatLogLine, runDebugLog, type LogClient } from '../agent/cli/commands/debug-log.ts'
import { decode, encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import { boundedLogMessage, logEntryBytes, logTopic, machineMayLogAs, parseLogBatch, unitOfTag, type LogEntry } from '../runtime/logs/log-entry.ts'
import { logFilter } from '../runtime/logs/log-filter.ts'
import { LogRing } from '../runtime/logs/log-ring.ts'
import { emptyModel } from '../runtime/model/model-draft.ts'
import type { Entity } from '../runtime/model/model-types.ts'
import type { Transport } from '../runtime/transport.ts'

const entry = (entity: string, seq: number, fields: Partial<LogEntry> = {}): LogEntry =>
  ({ entity, time: 1_700_000_000_000 + seq * 1000, level: 'info', module: 'unit.kv/0.juju-log', message: `line ${seq}`, seq, ...fields })

const wire = suite('debug-log: batches on the wire')

wire('a well-formed batch parses; anything else (shape, version, sizes, levels, entities) is refused', () => {
  const good = { v: 1, records: [entry('unit-kv-0', 1), entry('machine-1', 2, { level: 'warning', module: 'juju.deployer' })] }
  assert.equal(parseLogBatch(encode(good))?.records.length, 2)
  assert.is(logTopic('default'), 'cantrip/default/logs/1')
  const bad: unknown[] = [
    { v: 2, records: good.records },
    { v: 1, records: [] },
    { v: 1, records: Array.from({ length: limits.logShipBatchRecordsMax + 1 }, (_, i) => entry('unit-kv-0', i)) },
    { v: 1, records: [entry('kv/0', 1)] },
    { v: 1, records: [entry('unit-kv-0', 1, { level: 'fatal' as 'info' })] },
    { v: 1, records: [entry('unit-kv-0', -1)] },
    { v: 1, records: [entry('unit-kv-0', 1, { message: 'x'.repeat(limits.logMessageCharsMax + 1) })] },
    { v: 1, records: [entry('unit-kv-0', 1, { module: '' })] },
    'not a batch'
  ]
  for (const value of bad) assert.is(parseLogBatch(encode(value)), undefined, JSON.stringify(value).slice(0, 80))
  assert.is(parseLogBatch(new Uint8Array([0xc1])), undefined)
})

wire('a machine agent may log as itself and the units on its machine, nobody else', () => {
  const where: Record<string, string> = { 'kv/0': '1', 'kv-extra/3': '1', 'kv/1': '2' }
  const may = (entity: string): boolean => machineMayLogAs('1', entity, unit => where[unit])
  assert.equal(['machine-1', 'unit-kv-0', 'unit-kv-extra-3', 'machine-2', 'unit-kv-1', 'unit-web-0', 'controller-abc', 'machine-10'].map(may), [true, true, true, false, false, false, false, false])
  assert.is(unitOfTag('unit-kv-extra-3'), 'kv-extra/3')
  assert.is(unitOfTag('machine-1'), undefined)
})

const filters = suite('debug-log: filters as Juju takes them')

filters('entities: tags, units, applications (only their units), globs; modules cover what is under them; level is a minimum', () => {
  const records = [
    entry('unit-kv-0', 1), entry('unit-kv-1', 2), entry('unit-kv-extra-0', 3), entry('machine-1', 4, { module: 'juju.deployer' }),
    entry('unit-web-0', 5, { module: 'unit.web/0.install', level: 'debug' }), entry('controller-1a2b3c4d', 6, { module: 'juju.provisioner', level: 'error' })
  ]
  const pick = (spec: Parameters<typeof logFilter>[1]): number[] => records.filter(logFilter('t', spec)).map(r => r.seq)
  assert.equal(pick({}), [1, 2, 3, 4, 5, 6])
  assert.equal(pick({ include: ['kv/0'] }), [1])
  assert.equal(pick({ include: ['unit-kv-1', 'machine-1'] }), [2, 4])
  assert.equal(pick({ include: ['kv'] }), [1, 2], 'an application means its units, not another application whose name starts the same')
  assert.equal(pick({ include: ['unit-kv-*'] }), [1, 2, 3])
  assert.equal(pick({ exclude: ['kv'] }), [3, 4, 5, 6])
  assert.equal(pick({ includeModule: ['juju'] }), [4, 6])
  assert.equal(pick({ includeModule: ['unit.kv/0'] }), [1, 2, 3])
  assert.equal(pick({ excludeModule: ['unit'] }), [4, 6])
  assert.equal(pick({ includeModule: ['jujux'] }), [], 'a module prefix must end at a dot')
  assert.equal(pick({ level: 'WARNING' }), [6])
  assert.equal(pick({ level: 'debug' }), [1, 2, 3, 4, 5, 6])
  assert.equal(pick({ level: 'warn', include: ['controller-1a2b3c4d'] }), [6])
})

filters('bad input is refused in one line naming the command, before anything is sent', () => {
  assert.throws(() => logFilter('cantrip debug-log', { level: 'LOUD' }), /^cantrip debug-log: expected a level TRACE, DEBUG, INFO, WARNING, ERROR or CRITICAL, got "LOUD"$/)
  assert.throws(() => logFilter('cantrip debug-log', { include: ['Kv/0'] }), /cantrip debug-log: expected an entity like unit-kv-0, kv\/0, machine-1 or an application kv/)
  assert.throws(() => logFilter('cantrip debug-log', { excludeModule: ['a b'] }), /expected a module name/)
  assert.throws(() => logFilter('x', { include: Array.from({ length: limits.debugLogFilterItemsMax + 1 }, () => 'kv') }), /at most 64 --include values/)
  assert.throws(() => debugLogPlan({ lines: '0' }), /cantrip debug-log: expected -n to be a whole number of at least 1/)
  assert.equal(debugLogPlan({}), { spec: {}, lines: 10, follow: true }, 'Juju: the last 10, then follow')
  assert.equal(debugLogPlan({ replay: true, tail: false, lines: '3', include: ['kv'] }), { spec: { include: ['kv'] }, lines: undefined, follow: false })
})

const ring = suite('debug-log: a controller\'s ring')

ring('bounded (oldest dropped), cursors count up, last N of the matching, paged by a byte budget', () => {
  const r = new LogRing(50)
  for (let i = 1; i <= 120; i++) r.append(i % 2 === 0 ? 'peerA' : 'peerB', [entry(i % 3 === 0 ? 'unit-kv-1' : 'unit-kv-0', i)])
  assert.is(r.size, 50)
  const all = r.query({ after: 0, filter: () => true })
  assert.equal([all.records[0]!.seq, all.records.at(-1)!.seq, all.records.length, all.more, all.latest], [71, 120, 50, false, 120])
  assert.equal(all.records.map(x => x.cursor), all.records.map(x => x.seq), 'one cursor per record, in arrival order')
  const last = r.query({ after: 0, lines: 3, filter: logFilter('t', { include: ['kv/1'] }) })
  assert.equal(last.records.map(x => x.seq), [114, 117, 120])
  assert.equal(r.query({ after: 118, filter: () => true }).records.map(x => x.seq), [119, 120])
  // ~one record per page: the budget is met by the first record, and the next page goes on from it.
  const pages: number[][] = []
  let after = 100
  for (let guard = 0; guard < 50; guard++) {
    const page = r.query({ after, filter: () => true, bytesMax: 1 })
    pages.push(page.records.map(x => x.seq))
    after = page.next
    if (!page.more) break
  }
  assert.equal(pages.flat(), Array.from({ length: 20 }, (_, i) => 101 + i))
  assert.is(pages.length, 20)
  assert.equal(r.query({ after: 120, filter: () => true }), { records: [], next: 120, more: false, latest: 120 })
})

ring('the API op: admins and controllers only; checked input; pages', () => {
  const r = new LogRing()
  r.append('peerA', [entry('unit-kv-0', 1), entry('machine-0', 2, { module: 'juju.deployer' })])
  const who: Record<string, Entity> = { admin: { kind: 'user', name: 'admin' }, m: { kind: 'machine', id: '0' } }
  const ask = (from: string, body: Record<string, unknown>) => answerDebugLog('ctl', peer => who[peer], { from, protocol: 'cantrip/api/1', data: new Uint8Array() }, { op: 'debug-log', ...body }, r)
  const ok = ask('admin', { include: ['kv/0'] })
  assert.ok(ok.ok)
  if (ok.ok) assert.equal([ok.controller, ok.records.map(x => [x.entity, x.origin, x.cursor]), ok.next], ['ctl', [['unit-kv-0', 'peerA', 1]], 1])
  assert.equal(ask('m', {}), { ok: false, error: 'controller api: permission denied: peer "m" may not read the model\'s logs' })
  assert.equal(ask('stranger', {}).ok, false)
  assert.equal(ask('admin', { after: -1 }), { ok: false, error: 'controller api: expected "after" as a cursor (a whole number ≥ 0), got -1' })
  assert.match((ask('admin', { level: 'LOUD' }) as { error: string }).error, /^controller api: expected a level/)
  assert.match((answerDebugLog('ctl', () => who.admin, { from: 'admin', protocol: 'p', data: new Uint8Array() }, {}, undefined) as { error: string }).error, /keeps no logs/)
})

const shipper = suite('debug-log: an agent\'s shipper')

class PublishCapture {
  readonly published: Array<{ topic: string, records: LogEntry[] }> = []
  asTransport (): Transport {
    return {
      publish: async (topic: string, data: Uint8Array) => { this.published.push({ topic, records: (decode(data, 'test') as { records: LogEntry[] }).records }) }
    } as unknown as Transport
  }
}

shipper('a started shipper flushes an interval after a record is queued, each time, and sets no timer while nothing waits', async () => {
  const capture = new PublishCapture()
  const s = new LogShipper({ transport: capture.asTransport(), modelUuid: 'default', rootModule: 'r', entity: 'machine-1', now: () => 1, intervalMs: 37 })
  const logger = s.logger(createMemoryLogger('r'))
  // The shipper's timers are the ones of its interval (37 ms): counted as they are set.
  let armed = 0
  const { setTimeout: realTimeout, setInterval: realInterval } = globalThis
  const spy = <T extends (...args: never[]) => unknown>(real: T): T => ((handler: () => void, ms?: number) => {
    if (ms === 37) armed++
    return (real as unknown as (h: () => void, ms?: number) => unknown)(handler, ms)
  }) as unknown as T
  globalThis.setTimeout = spy(realTimeout)
  globalThis.setInterval = spy(realInterval)
  try {
    s.start()
    assert.is(armed, 0, 'an idle shipper wakes nobody')
    for (const [i, message] of ['first', 'second'].entries()) {
      logger.log('info', message)
      logger.log('info', `${message} again`)
      assert.is(armed, i + 1, 'the first queued record armed one flush; the next one waits with it')
      const until = performance.now() + 10_000
      while (capture.published.length === 0 && performance.now() < until) await new Promise(resolve => realTimeout(resolve, 5))
      assert.equal(capture.published.splice(0).map(batch => batch.records.map(r => r.message)), [[message, `${message} again`]])
    }
    await new Promise(resolve => realTimeout(resolve, 100))
    assert.is(armed, 2, 'flushed: nothing armed again until a record comes')
  } finally {
    globalThis.setTimeout = realTimeout
    globalThis.setInterval = realInterval
    await s.stop()
  }
})

// A multi-line message keeps its lines, as Juju's debug-log prints them (it used to be
// folded into one line with `\\n`, which Juju never does).
shipper('unit records become unit-<app>-<n> with Juju modules; the agent\'s own are its entity; trace stays local; lines kept', () => {
  const capture = new PublishCapture()
  const local: LogEntry[] = []
  let t = 5_000
  const s = new LogShipper({ transport: capture.asTransport(), modelUuid: 'default', rootModule: 'cantripd.machine-1', entity: 'machine-1', now: () => t++, local: entries => { local.push(...entries) } })
  const memory = createMemoryLogger('cantripd.machine-1')
  const logger = s.logger(memory)
  logger.child('kv/0').child('juju-log').log('info', 'installed kv')
  logger.child('kv/0').child('install').log('debug', 'stdout line\nsecond')
  logger.child('kv/0').log('error', 'hook failed: "install"')
  logger.child('deployer').log('warning', 'retrying', { unit: 'kv/0' })
  logger.log('info', 'registered')
  logger.log('trace', 'noise')
  assert.is(memory.records.length, 6, 'everything still goes to the agent\'s own log')
  s.flush()
  assert.is(capture.published.length, 1)
  assert.is(capture.published[0]!.topic, 'cantrip/default/logs/1')
  assert.equal(capture.published[0]!.records.map(r => [r.entity, r.level, r.module, r.message, r.seq, r.time]), [
    ['unit-kv-0', 'info', 'unit.kv/0.juju-log', 'installed kv', 1, 5000],
    ['unit-kv-0', 'debug', 'unit.kv/0.install', 'stdout line\nsecond', 2, 5001],
    ['unit-kv-0', 'error', 'juju.worker.uniter', 'hook failed: "install"', 3, 5002],
    ['machine-1', 'warning', 'juju.deployer', 'retrying {"unit":"kv/0"}', 4, 5003],
    ['machine-1', 'info', 'juju.agent', 'registered', 5, 5004]
  ])
  assert.equal(local, capture.published[0]!.records, 'a controller keeps its own records directly')
  assert.ok(parseLogBatch(encode({ v: 1, records: capture.published[0]!.records })) !== undefined, 'what is shipped is what receivers accept')
})

shipper('bounded: batches of at most the batch max; beyond the queue max the oldest are dropped and the next batch says how many', () => {
  const capture = new PublishCapture()
  const s = new LogShipper({ transport: capture.asTransport(), modelUuid: 'default', rootModule: 'r', entity: 'machine-2', now: () => 1, queueMax: 30, batchMax: 8 })
  const logger = s.logger(createMemoryLogger('r'))
  for (let i = 0; i < 50; i++) logger.log('info', `m${i}`)
  logger.log('info', 'x'.repeat(limits.logMessageCharsMax + 500))
  s.flush()
  const records = capture.published.flatMap(p => p.records)
  assert.ok(capture.published.every(p => p.records.length <= 8))
  assert.equal([records[0]!.level, records[0]!.module, records[0]!.message], ['warning', 'juju.logsender', 'dropped 21 log records: the controllers were not keeping up'])
  assert.equal(records.slice(1, 3).map(r => r.message), ['m21', 'm22'])
  const cut = records.at(-1)!.message
  assert.ok(cut.length <= limits.logMessageCharsMax, 'cut to the max')
  assert.match(cut, new RegExp(`^x+\\n\\[log message truncated: \\d+ of ${limits.logMessageCharsMax + 500} characters not shown\\]$`))
  assert.is(records.length, 31)
})

shipper('long messages: whole up to 64 Ki characters, lines kept, cut past it saying so; batches bounded by bytes', () => {
  // A traceback of ~5 KB, its last line the exception: shipped whole.
  const traceback = ['Traceback (most recent call last):', ...Array.from({ length: 80 }, (_, i) => `  File "/charm/src/charm.py", line ${i + 10}, in handler_${i}\n    self.do_thing_${i}()`), 'RuntimeError: the last line survives'].join('\n')
  assert.ok(traceback.length > 5_000)
  assert.is(boundedLogMessage(traceback), traceback)
  assert.is(boundedLogMessage('a\r\nb'), 'a\\r\nb', 'a carriage return is shown, a newline kept')
  // Cut: the kept text, then a line that says what went.
  assert.is(boundedLogMessage('0123456789'.repeat(10), 80), '01234567890123456789012\n[log message truncated: 77 of 100 characters not shown]')
  assert.ok(boundedLogMessage('y'.repeat(1_000_000)).length <= limits.logMessageCharsMax)

  const capture = new PublishCapture()
  const s = new LogShipper({ transport: capture.asTransport(), modelUuid: 'default', rootModule: 'r', entity: 'machine-2', now: () => 1, batchBytesMax: 3 * logEntryBytes({ entity: 'unit-kv-0', time: 1, level: 'info', module: 'unit.kv/0.juju-log', message: traceback, seq: 1 }) })
  const logger = s.logger(createMemoryLogger('r')).child('kv/0').child('juju-log')
  for (let i = 0; i < 10; i++) logger.log('error', traceback)
  s.flush()
  assert.equal(capture.published.map(p => p.records.length), [3, 3, 3, 1])
  assert.ok(capture.published.every(p => p.records.every(r => r.message === traceback)))
  // The default budget keeps a batch of worst-case records under the transport's bound.
  const worst = logEntryBytes({ entity: 'unit-a-0', time: 1, level: 'info', module: 'm', message: 'x'.repeat(limits.logMessageCharsMax), seq: 1 })
  assert.ok(limits.logShipBatchBytesMax + worst < limits.transportMessageBytesMax)
})

ring('bounded by bytes too: long records push the oldest out, the newest always stays', () => {
  const big = (seq: number): LogEntry => entry('unit-kv-0', seq, { message: 'z'.repeat(1_000) })
  const r = new LogRing(1_000, 3 * logEntryBytes(big(1)))
  r.append('p', [big(1), big(2), big(3), big(4)])
  assert.equal(r.query({ after: 0, filter: () => true }).records.map(x => x.seq), [2, 3, 4])
  assert.is(r.bytes, 3 * logEntryBytes(big(1)))
  const tiny = new LogRing(1_000, 10)
  tiny.append('p', [big(5)])
  assert.is(tiny.size, 1)
})

const cli = suite('debug-log: the command')

cli('Juju\'s line format', () => {
  const t = new Date(2026, 10, 24, 9, 4, 5).getTime()
  assert.is(formatLogLine(entry('unit-kv-0', 1, { time: t, message: 'ran "install" hook' })), 'unit-kv-0: 09:04:05 INFO unit.kv/0.juju-log ran "install" hook')
  // `juju-log -l CRITICAL` keeps its level end to end (loggo's CRITICAL; ops' test_main
  // asserts "super critical" at CRITICAL): it was shown as ERROR.
  assert.is(formatLogLine(entry('unit-kv-0', 1, { time: t, level: 'critical', message: 'super critical' })), 'unit-kv-0: 09:04:05 CRITICAL unit.kv/0.juju-log super critical')
})

cli('--no-tail: the last N matching records, paged from one controller; --replay: every record kept', async () => {
  const r = new LogRing()
  for (let i = 1; i <= 30; i++) r.append('p', [entry(i % 2 === 0 ? 'unit-kv-0' : 'unit-db-0', i)])
  const admin: Entity = { kind: 'user', name: 'admin' }
  const client = {
    debugLog: async (query: Record<string, unknown>) => {
      const reply = answerDebugLog('ctl', () => admin, { from: 'a', protocol: 'p', data: new Uint8Array() }, { ...query, op: 'debug-log' }, r)
      if (!reply.ok) throw new Error(reply.error)
      // A tiny page, so paging is exercised.
      const records = reply.records.slice(0, 4)
      return { ...reply, records, next: records.at(-1)?.cursor ?? reply.next, more: reply.more || records.length < reply.records.length }
    },
    members: ['ctl'],
    logs: () => () => {},
    watch: () => () => {},
    model: async () => ({ ok: true as const, model: emptyModel(), presence: {}, leader: 'ctl', term: 1 })
  } as unknown as LogClient
  const lines: string[] = []
  await runDebugLog(async () => client, { tail: false, include: ['kv'], lines: '5' }, line => lines.push(line))
  assert.equal(lines.map(l => l.split(' ').at(-1)), ['22', '24', '26', '28', '30'])
  lines.length = 0
  await runDebugLog(async () => client, { tail: false, replay: true, include: ['kv/0'] }, line => lines.push(line))
  assert.is(lines.length, 15)
})

cli('follow: listens before the replay; live records print once (also when the replay or a catch-up saw them), filtered, until stopped', async () => {
  const r = new LogRing()
  r.append('p', [entry('unit-kv-0', 1)])
  const admin: Entity = { kind: 'user', name: 'admin' }
  let onBatch: ((origin: string, records: readonly LogEntry[]) => void) | undefined
  let entitled: ((peer: string) => boolean) | undefined
  let unsubscribed = false
  const client = {
    debugLog: async (query: Record<string, unknown>) => {
      const reply = answerDebugLog('ctl', () => admin, { from: 'a', protocol: 'p', data: new Uint8Array() }, { ...query, op: 'debug-log' }, r)
      if (!reply.ok) throw new Error(reply.error)
      // Logged while the replay was on its way: arrives live too.
      onBatch?.('p', [entry('unit-kv-0', 2)])
      return reply
    },
    members: ['ctl'],
    logs: (accept: (peer: string) => boolean, callback: typeof onBatch) => { entitled = accept; onBatch = callback; return () => { unsubscribed = true } },
    watch: () => () => {},
    model: async () => ({ ok: true as const, model: emptyModel(), presence: {}, leader: 'ctl', term: 1 })
  } as unknown as LogClient
  const lines: string[] = []
  const stop = new AbortController()
  const running = runDebugLog(async () => client, { include: ['kv/0'] }, line => lines.push(line), stop.signal)
  const deadline = Date.now() + 5_000
  while (lines.length < 2 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 5))
  onBatch!('p', [entry('unit-kv-0', 2), entry('unit-kv-0', 3), entry('unit-db-0', 4)])
  stop.abort()
  await running
  assert.equal(lines.map(l => l.split(' ').at(-1)), ['1', '2', '3'])
  assert.ok(entitled!('ctl') && !entitled!('stranger'), 'only controllers and registered agents are listened to')
  assert.ok(unsubscribed)
})

for (const s of [wire, filters, ring, shipper, cli]) s.run()
