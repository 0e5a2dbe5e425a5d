/** StreamLogger: one line per record, level filtering, children and a bounded backlog. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { StreamLogger } from '../agent/stream-logger.ts'

const test = suite('stream logger')

function sink (): { lines: string[], writableLength: number, write: (chunk: string) => boolean } {
  const out = {
    lines: [] as string[],
    writableLength: 0,
    write (chunk: string) {
      for (const line of chunk.split('\n').slice(0, -1)) out.lines.push(line)
      return true
    }
  }
  return out
}

const now = (): number => Date.UTC(2026, 10, 22, 10, 0, 0, 5)

test('a record is one line: time, level, module, message, fields', () => {
  const stream = sink()
  const logger = new StreamLogger({ stream, module: 'agent', now })
  logger.log('info', 'hook completed', { hook: 'install', unit: 'web/0' })
  logger.log('error', 'no fields')
  logger.log('warning', 'empty fields', {})
  assert.equal(stream.lines, [
    '2026-11-22T10:00:00.005Z INFO agent hook completed {"hook":"install","unit":"web/0"}',
    '2026-11-22T10:00:00.005Z ERROR agent no fields',
    '2026-11-22T10:00:00.005Z WARNING agent empty fields'
  ])
})

test('records below the minimum level are dropped', () => {
  const stream = sink()
  const logger = new StreamLogger({ stream, module: 'agent', now, levelMin: 'warning' })
  for (const level of ['trace', 'debug', 'info', 'warning', 'error'] as const) logger.log(level, level)
  assert.equal(stream.lines.map(line => line.split(' ')[1]), ['WARNING', 'ERROR'])
  const chatty = sink()
  new StreamLogger({ stream: chatty, module: 'm', now, levelMin: 'trace' }).log('trace', 'x')
  assert.is(chatty.lines.length, 1)
})

test('children extend the module name and share the stream and level', () => {
  const stream = sink()
  const logger = new StreamLogger({ stream, module: 'unit', now, levelMin: 'info' })
  const child = logger.child('web/0').child('install')
  assert.is(child.module, 'unit.web/0.install')
  child.log('debug', 'hidden')
  child.log('info', 'shown')
  assert.equal(stream.lines, ['2026-11-22T10:00:00.005Z INFO unit.web/0.install shown'])
})

test('newlines in messages cannot forge records', () => {
  const stream = sink()
  new StreamLogger({ stream, module: 'hook', now }).log('info', 'line one\n2026-01-01T00:00:00.000Z ERROR fake\r')
  assert.equal(stream.lines, ['2026-11-22T10:00:00.005Z INFO hook line one\\n2026-01-01T00:00:00.000Z ERROR fake\\r'])
})

test('awkward fields are rendered, not thrown', () => {
  const stream = sink()
  const logger = new StreamLogger({ stream, module: 'm', now })
  const cycle: Record<string, unknown> = {}
  cycle.self = cycle
  logger.log('info', 'values', { big: 10n, error: new TypeError('bad'), bytes: new Uint8Array(3), text: 'a\nb' })
  logger.log('info', 'cycle', cycle)
  assert.is(stream.lines[0], '2026-11-22T10:00:00.005Z INFO m values {"big":"10","error":{"name":"TypeError","message":"bad"},"bytes":"<3 bytes>","text":"a\\nb"}')
  assert.match(stream.lines[1]!, /^2026-11-22T10:00:00\.005Z INFO m cycle \{"unrenderableFields":".*circular/)
})

test('a stream that stops draining loses records, and the next line says how many', () => {
  const stream = sink()
  const logger = new StreamLogger({ stream, module: 'm', now, bufferedBytesMax: 100 })
  logger.log('info', 'before')
  stream.writableLength = 100
  logger.log('info', 'lost 1')
  logger.child('c').log('error', 'lost 2')
  stream.writableLength = 0
  logger.log('info', 'after')
  assert.equal(stream.lines, [
    '2026-11-22T10:00:00.005Z INFO m before',
    '2026-11-22T10:00:00.005Z WARNING m dropped 2 log records: the log stream was not keeping up',
    '2026-11-22T10:00:00.005Z INFO m after'
  ])
})

test('works on a real Node stream', async () => {
  const { PassThrough } = await import('node:stream')
  const stream = new PassThrough()
  const chunks: string[] = []
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()))
  new StreamLogger({ stream, module: 'agent' }).log('info', 'hello')
  await new Promise(resolve => setImmediate(resolve))
  assert.match(chunks.join(''), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO agent hello\n$/)
})

test.run()
