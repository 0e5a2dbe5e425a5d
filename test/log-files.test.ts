/**
 * A machine's log files and the acknowledged final batch, without processes:
 *
 * - the rotating file (agent/rotating-log-file.ts) with small limits: rotated before a line
 *   would pass the size max, only the newest backups kept (lumberjack's names), whole
 *   lines only, so the files stay bounded however much is written;
 * - the machine's files (agent/log-files.ts): one per unit and one for the agent, in Juju's
 *   file line format (loggo's DefaultFormatter: `2016-07-02 15:04:05 INFO module message`,
 *   UTC to the second; cantrip has no source location, so that field is left out);
 * - the shipper's acknowledged flush (agent/log-shipper.ts): what is queued and what was
 *   gossiped in the resend window go to a controller by request, bounded when none answers;
 * - the `ship-logs` op (actors/controller/api-ship-logs.ts): a machine ships only for
 *   itself and its units; a record that came by gossip and by request is kept once; bad
 *   input gets one line.
 *
 * Juju followed: controller/config.go (DefaultAgentLogfileMaxSize 100 MB,
 * DefaultAgentLogfileMaxBackups 2) and cmd/jujud/agent/machine.go (the agent's
 * lumberjack logger, `<log dir>/<agent tag>.log`), loggo's formatter.go.
 */
import '../runtime/polyfill.ts'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { keepShippedLogs, parseShipLogsRequest } from '../actors/controller/api-ship-logs.ts'
import { formatLogFileLine, LogFiles, logFileName } from '../agent/log-files.ts'
import { LogShipper } from '../agent/log-shipper.ts'
import { RotatingLogFile } from '../agent/rotating-log-file.ts'
import { decode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import type { LogEntry } from '../runtime/logs/log-entry.ts'
import { LogRing } from '../runtime/logs/log-ring.ts'
import type { Transport } from '../runtime/transport.ts'

const entry = (entity: string, seq: number, fields: Partial<LogEntry> = {}): LogEntry =>
  ({ entity, time: Date.UTC(2026, 10, 26, 19, 0, seq), level: 'info', module: 'unit.kv/0.juju-log', message: `line ${seq}`, seq, ...fields })

function withDir (use: (dir: string) => void | Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cantrip-log-files-'))
    try {
      await use(dir)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

const files = suite('log files on the machine')

files('rotated before a line would pass the max; the newest backups kept, lumberjack-named; bounded however much is written', withDir(dir => {
  let t = Date.UTC(2026, 10, 26, 19, 0, 0)
  const file = new RotatingLogFile({ path: join(dir, 'unit-kv-0.log'), bytesMax: 100, backupsMax: 2, now: () => t })
  const lines = Array.from({ length: 60 }, (_, i) => `record ${String(i).padStart(3, '0')} ${'x'.repeat(10)}`)
  for (const line of lines) {
    file.write(line)
    t += 7
  }
  file.write('y'.repeat(200))
  file.close()
  const names = readdirSync(dir).sort()
  assert.is(names.length, 3, names.join(' '))
  assert.ok(names.includes('unit-kv-0.log'))
  const backups = names.filter(n => n !== 'unit-kv-0.log')
  assert.ok(backups.every(n => /^unit-kv-0-2026-11-26T19-00-\d\d\.\d{3}\.log$/.test(n)), backups.join(' '))
  for (const name of names) assert.ok(statSync(join(dir, name)).size <= 100, `${name} is at most 100 bytes`)
  // Whole lines, in order, the newest last: the live file ends with the last line written.
  const kept = [...backups, 'unit-kv-0.log'].flatMap(n => readFileSync(join(dir, n), 'utf8').split('\n').filter(Boolean))
  assert.equal(kept, lines.slice(lines.length - kept.length), 'the newest lines, whole and in order; the over-long one dropped')
  assert.ok(kept.length >= 6)
}))

files('appends to what is there after a restart; rotation continues from its size', withDir(dir => {
  const path = join(dir, 'machine-1.log')
  const first = new RotatingLogFile({ path, bytesMax: 50, backupsMax: 1 })
  first.write('a'.repeat(29))
  first.close()
  const second = new RotatingLogFile({ path, bytesMax: 50, backupsMax: 1 })
  second.write('b'.repeat(9))
  second.write('c'.repeat(19))
  second.close()
  assert.is(readFileSync(path, 'utf8'), `${'c'.repeat(19)}\n`)
  const backup = readdirSync(dir).find(n => n !== 'machine-1.log')!
  assert.is(readFileSync(join(dir, backup), 'utf8'), `${'a'.repeat(29)}\n${'b'.repeat(9)}\n`)
}))

files('one file per unit and one for the agent, in Juju\'s line format; at most the open max held open', withDir(dir => {
  const logFiles = new LogFiles({ dir, agentEntity: 'machine-1', openMax: 1 })
  logFiles.write(entry('unit-kv-0', 1, { message: 'stop-marker' }))
  logFiles.write(entry('machine-1', 2, { level: 'warning', module: 'juju.deployer', message: 'retrying {"unit":"kv/0"}' }))
  logFiles.write(entry('unit-kv-extra-3', 3, { level: 'debug', module: 'unit.kv-extra/3.install', message: 'stdout' }))
  logFiles.write(entry('unit-kv-0', 4, { level: 'error', module: 'juju.worker.uniter', message: 'hook failed: "remove"' }))
  logFiles.close()
  assert.equal(readdirSync(dir).sort(), ['machine-1.log', 'unit-kv-0.log', 'unit-kv-extra-3.log'])
  assert.is(readFileSync(join(dir, 'unit-kv-0.log'), 'utf8'),
    '2026-11-26 19:00:01 INFO unit.kv/0.juju-log stop-marker\n2026-11-26 19:00:04 ERROR juju.worker.uniter hook failed: "remove"\n')
  assert.is(readFileSync(join(dir, 'machine-1.log'), 'utf8'), '2026-11-26 19:00:02 WARNING juju.deployer retrying {"unit":"kv/0"}\n')
  assert.is(formatLogFileLine(entry('unit-kv-extra-3', 3, { level: 'debug', module: 'unit.kv-extra/3.install', message: 'stdout' })), '2026-11-26 19:00:03 DEBUG unit.kv-extra/3.install stdout')
  assert.is(logFileName({ entity: 'machine-0/lxd/1' }, 'machine-0/lxd/1'), 'machine-0-lxd-1')
}))

files('a file that cannot be written is reported once, with one line naming it; the others go on', withDir(dir => {
  const reports: string[] = []
  // A directory where the unit's file should be: it cannot be opened for appending.
  const blocked = join(dir, 'unit-kv-0.log')
  const logFiles = new LogFiles({ dir, agentEntity: 'machine-1', report: line => reports.push(line) })
  mkdirSync(blocked)
  logFiles.write(entry('unit-kv-0', 1))
  logFiles.write(entry('unit-kv-0', 2))
  logFiles.write(entry('machine-1', 3))
  logFiles.close()
  assert.is(reports.length, 1, reports.join('\n'))
  assert.match(reports[0]!, /^log files: cannot write .*unit-kv-0\.log: .+; its lines are dropped$/)
  assert.ok(readFileSync(join(dir, 'machine-1.log'), 'utf8').includes('line 3'))
}))

const final = suite('the acknowledged final batch')

class Gossip {
  readonly published: LogEntry[][] = []
  transport (): Transport {
    const published = this.published
    return {
      publish: async (_topic: string, data: Uint8Array) => { published.push((decode(data, 'test') as { records: LogEntry[] }).records) }
    } as Partial<Transport> as Transport
  }
}

final('what is queued and what was gossiped in the resend window go by request; the files get every record', withDir(async dir => {
  let t = 1_000_000
  const delivered: LogEntry[][] = []
  const logFiles = new LogFiles({ dir, agentEntity: 'machine-1' })
  const gossip = new Gossip()
  const s = new LogShipper({
    transport: gossip.transport(), modelUuid: 'default', rootModule: 'm', entity: 'machine-1', now: () => t, batchMax: 2,
    deliver: async records => { delivered.push([...records]) },
    files: logFiles
  })
  const logger = s.logger(createMemoryLogger('m'))
  logger.child('kv/0').child('juju-log').log('info', 'old')
  s.flush()
  t += limits.logShipResendWindowMs + 1
  logger.child('kv/0').child('juju-log').log('info', 'stop-marker')
  s.flush()
  logger.child('kv/0').child('juju-log').log('info', 'remove-marker')
  logger.child('kv/0').child('remove').log('debug', 'bye')
  assert.is(await s.flushAcknowledged(), true)
  assert.equal(delivered.map(b => b.map(r => r.message)), [['stop-marker', 'remove-marker'], ['bye']], 'in batches of the batch max, oldest first; the record gossiped before the window is not sent again')
  assert.equal(gossip.published.flat().map(r => r.message), ['old', 'stop-marker', 'remove-marker', 'bye'], 'gossiped too, for every controller and follower')
  // The window counts from when a record was gossiped, not logged: one queued long is still sent.
  delivered.length = 0
  logger.child('kv/0').child('juju-log').log('info', 'queued-long')
  t += limits.logShipResendWindowMs * 3
  assert.is(await s.flushAcknowledged(), true)
  assert.equal(delivered.map(b => b.map(r => r.message)), [['queued-long']])
  logFiles.close()
  assert.equal(readFileSync(join(dir, 'unit-kv-0.log'), 'utf8').split('\n').filter(Boolean).map(l => l.split(' ').slice(2).join(' ')),
    ['INFO unit.kv/0.juju-log old', 'INFO unit.kv/0.juju-log stop-marker', 'INFO unit.kv/0.juju-log remove-marker', 'DEBUG unit.kv/0.remove bye', 'INFO unit.kv/0.juju-log queued-long'])
}))

final('bounded: a controller that never answers, or none that keeps the batch, ends the wait with false', async () => {
  const gossip = new Gossip()
  const hanging = new LogShipper({ transport: gossip.transport(), modelUuid: 'default', rootModule: 'm', entity: 'machine-1', ackWaitMs: 20, deliver: async () => await new Promise<void>(() => {}) })
  hanging.logger(createMemoryLogger('m')).log('info', 'x')
  assert.is(await hanging.flushAcknowledged(), false)
  const refused = new LogShipper({ transport: gossip.transport(), modelUuid: 'default', rootModule: 'm', entity: 'machine-1', deliver: async () => { throw new Error('no controller') } })
  refused.logger(createMemoryLogger('m')).log('info', 'y')
  assert.is(await refused.flushAcknowledged(), false)
  await refused.stop()
  const none = new LogShipper({ transport: gossip.transport(), modelUuid: 'default', rootModule: 'm', entity: 'machine-1' })
  assert.is(await none.flushAcknowledged(), true, 'a controller (no deliver) keeps its own: nothing to wait for')
})

final('ship-logs: a machine for itself and its units only; kept once with its gossip; bad input gets one line', () => {
  const ring = new LogRing()
  const where: Record<string, string> = { 'kv/0': '1', 'kv/1': '2' }
  ring.append('peer-m1', [entry('unit-kv-0', 1)])
  const reply = keepShippedLogs(ring, 'peer-m1', { kind: 'machine', id: '1' }, [entry('unit-kv-0', 1), entry('unit-kv-0', 2), entry('unit-kv-1', 3), entry('machine-1', 4), entry('machine-2', 5)], unit => where[unit])
  assert.equal(reply, { ok: true, kept: 3 })
  assert.equal(ring.query({ after: 0, filter: () => true }).records.map(r => [r.entity, r.seq, r.origin]), [['unit-kv-0', 1, 'peer-m1'], ['unit-kv-0', 2, 'peer-m1'], ['machine-1', 4, 'peer-m1']])
  assert.equal(keepShippedLogs(undefined, 'p', undefined, [], () => undefined), { ok: false, error: 'controller api: this controller keeps no logs' })
  assert.equal(parseShipLogsRequest({ op: 'ship-logs', records: [entry('unit-kv-0', 1)] }), { op: 'ship-logs', records: [entry('unit-kv-0', 1)] })
  assert.equal(parseShipLogsRequest({ op: 'ship-logs' }), { invalid: `controller api: expected "records" as 1 to ${limits.logShipBatchRecordsMax} log records {entity, time, level, module, message, seq}, got nothing` })
  assert.equal(parseShipLogsRequest({ op: 'ship-logs', records: [{ entity: 'kv/0' }] }), { invalid: `controller api: expected "records" as 1 to ${limits.logShipBatchRecordsMax} log records {entity, time, level, module, message, seq}, got 1 item that are not all records` })
  assert.equal(parseShipLogsRequest({ op: 'ship-logs', records: [] }), { invalid: `controller api: expected "records" as 1 to ${limits.logShipBatchRecordsMax} log records {entity, time, level, module, message, seq}, got 0 items that are too many or too few` })
})

for (const s of [files, final]) s.run()
