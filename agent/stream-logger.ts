/**
 * A `Logger` that writes one line per record to a stream (stderr, a log file):
 *
 *   2026-11-22T10:00:00.000Z INFO unit.web/0 hook completed {"hook":"install"}
 *
 * The message is kept on one line (newlines escaped) so every line is one record.
 * If the stream stops draining, records are dropped instead of queueing without bound,
 * and the next line written says how many were lost.
 */
import { limits } from '../runtime/limits.ts'
import { logLevelOrder, type Logger, type LogLevel } from '../runtime/logger.ts'

/** The part of a Node writable the logger needs. */
export interface LogStream {
  write (chunk: string): unknown
  /** Bytes queued and not yet flushed; when absent the stream is assumed to keep up. */
  readonly writableLength?: number
}

export interface StreamLoggerOptions {
  stream: LogStream
  module: string
  /** Records below this level are not written. */
  levelMin?: LogLevel
  /** Milliseconds since the Unix epoch; the agent passes its clock's `now`. */
  now?: () => number
  /** Queued bytes at which records start being dropped. */
  bufferedBytesMax?: number
}

const levelNames: Readonly<Record<LogLevel, string>> = {
  trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warning: 'WARNING', error: 'ERROR', critical: 'CRITICAL'
}

/** Shared by a logger and its children: one stream, one drop count. */
interface Sink {
  readonly stream: LogStream
  readonly levelMin: number
  readonly now: () => number
  readonly bufferedBytesMax: number
  dropped: number
}

export class StreamLogger implements Logger {
  readonly module: string
  #sink: Sink

  constructor (options: StreamLoggerOptions) {
    this.module = options.module
    this.#sink = {
      stream: options.stream,
      levelMin: logLevelOrder[options.levelMin ?? 'info'],
      now: options.now ?? Date.now,
      bufferedBytesMax: options.bufferedBytesMax ?? limits.loggerBufferedBytesMax,
      dropped: 0
    }
  }

  log (level: LogLevel, message: string, fields?: Readonly<Record<string, unknown>>): void {
    const sink = this.#sink
    if (logLevelOrder[level] < sink.levelMin) return
    if ((sink.stream.writableLength ?? 0) >= sink.bufferedBytesMax) {
      sink.dropped++
      return
    }
    const time = new Date(sink.now()).toISOString()
    let text = ''
    if (sink.dropped > 0) {
      text += `${time} WARNING ${this.module} dropped ${sink.dropped} log records: the log stream was not keeping up\n`
      sink.dropped = 0
    }
    text += `${time} ${levelNames[level]} ${this.module} ${oneLine(message)}`
    if (fields !== undefined && Object.keys(fields).length > 0) text += ` ${fieldsJson(fields)}`
    sink.stream.write(text + '\n')
  }

  child (name: string): Logger {
    const child = new StreamLogger({ stream: this.#sink.stream, module: `${this.module}.${name}` })
    child.#sink = this.#sink
    return child
  }
}

function oneLine (message: string): string {
  return message.replace(/\r/g, '\\r').replace(/\n/g, '\\n')
}

/** Fields are diagnostics: render what can be rendered rather than lose the record. */
function fieldsJson (fields: Readonly<Record<string, unknown>>): string {
  try {
    return JSON.stringify(fields, (_key, value: unknown) => {
      if (typeof value === 'bigint') return value.toString()
      if (value instanceof Error) return { name: value.name, message: value.message }
      if (value instanceof Uint8Array) return `<${value.byteLength} bytes>`
      return value
    })
  } catch (error) {
    return JSON.stringify({ unrenderableFields: error instanceof Error ? error.message : String(error) })
  }
}
