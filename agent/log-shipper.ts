/**
 * Ships an agent's log records to the controllers for `debug-log` (Juju's logsink): a
 * Logger that writes to the agent's own log (stderr, the agent's log file) as before and
 * also queues each record, and a timer that publishes the queue in batches on the
 * model's log topic (runtime/logs/log-entry.ts), signed by the agent's mesh key. The
 * timer is armed by the first record queued after a flush, not left ticking: an idle
 * agent logs nothing, and a poll every interval woke each one five times a second.
 *
 * The final batch is acknowledged (`flushAcknowledged`, bounded by
 * limits.logFlushAckWaitMsMax): what is queued is gossiped, then sent with everything
 * gossiped in the last limits.logShipResendWindowMs as `ship-logs` requests (`deliver`)
 * until a controller answers. A unit host calls it before it marks its unit dead, the
 * agent before it exits, so a removed unit's stop and remove hooks' output and an
 * agent's last words reach `debug-log` (gossip alone lost them: see
 * actors/controller/api-ship-logs.ts). Each record also goes to `files` (the machine's
 * per-unit and per-machine log files, agent/log-files.ts).
 *
 * Bounded: at most limits.logShipQueueRecordsMax records wait; beyond that the oldest
 * are dropped, and the next batch starts with a WARNING saying how many. A controller's
 * own records (it does not receive its own gossip) are also handed to `local`.
 *
 * Entities and modules as Juju names them: a record from the unit logger
 * `<root>.kv/0.juju-log` is `unit-kv-0` with module `unit.kv/0.juju-log` (hook output:
 * `unit.kv/0.<hook>`; the unit agent itself: `juju.worker.uniter`); anything else is the
 * agent's own entity (`machine-1`, `controller-1a2b3c4d`) with module `juju.<rest>`.
 */
import { loggingEnabled, parseLoggingConfig, type LoggingConfig } from '../runtime/logging-config.ts'
import { modelConfigSchema } from '../runtime/model/model-config.ts'
import { encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { logLevelOrder, type Logger, type LogLevel } from '../runtime/logger.ts'
import { boundedLogMessage, logEntryBytes, logTopic, type LogBatch, type LogEntry } from '../runtime/logs/log-entry.ts'
import type { Transport } from '../runtime/transport.ts'

const component = 'log shipper'
/** Trace records stay in the agent's own log: they would swamp the controllers' rings. */
const shipLevelMin: LogLevel = 'debug'

export interface LogShipperOptions {
  transport: Transport
  modelUuid: string
  /** The module of the agent's root logger (`cantripd.machine-1`), whose records are `entity`'s. */
  rootModule: string
  /** This agent's own entity tag: `machine-1`, `controller-1a2b3c4d`. */
  entity: string
  /** Wall-clock milliseconds (Juju shows the agent's time). */
  now?: () => number
  /** Records this process logged, handed over directly (a controller's own ring). */
  local?: (entries: readonly LogEntry[]) => void
  intervalMs?: number
  queueMax?: number
  batchMax?: number
  /** Bytes of one batch (estimated); default limits.logShipBatchBytesMax. */
  batchBytesMax?: number
  /**
   * Sends one batch to a controller as a request, resolving once one has kept it and
   * rejecting when none answered (agent/log-delivery.ts). Without it (a controller) the
   * final flush is gossip and `local`.
   */
  deliver?: (records: readonly LogEntry[]) => Promise<void>
  /** Every record, as shipped, to the machine's log files. */
  files?: { write: (entry: LogEntry) => void }
  /** The acknowledged flush's bound; default limits.logFlushAckWaitMsMax. */
  ackWaitMs?: number
}

export class LogShipper {
  readonly #o: LogShipperOptions
  readonly #topic: string
  #queue: LogEntry[] = []
  #dropped = 0
  #seq = 0
  #timer: ReturnType<typeof setTimeout> | undefined
  /** Started and not stopped: records queued now are flushed by the timer. */
  #running = false
  #published = 0
  /** Records gossiped within the resend window, with when, oldest first: gossip is not acknowledged. */
  #recent: Array<{ at: number, entry: LogEntry }> = []
  /** One acknowledged flush at a time; a second caller waits for the next. */
  #acking: Promise<void> = Promise.resolve()
  /** The model's `logging-config` when the user set one; undefined: every record goes on. */
  #loggingConfig: LoggingConfig | undefined

  constructor (options: LogShipperOptions) {
    this.#o = options
    this.#topic = logTopic(options.modelUuid)
  }

  /** Batches published so far (tests, diagnostics). */
  get published (): number {
    return this.#published
  }

  start (): void {
    this.#running = true
    this.#arm()
  }

  /** Publishes what is queued, acknowledged when it can be (an agent's last words leave with it). */
  async stop (): Promise<void> {
    this.#running = false
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    await this.flushAcknowledged()
  }

  /** One flush an interval after the first record waiting for it (none while nothing waits). */
  #arm (): void {
    if (!this.#running || this.#timer !== undefined || (this.#queue.length === 0 && this.#dropped === 0)) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.flush()
    }, this.#o.intervalMs ?? limits.logShipIntervalMs)
    this.#timer.unref()
  }

  /**
   * Gossips what is queued, then sends it with what was gossiped in the resend window to
   * a controller and waits for its answer, at most the ack bound. Resolves either way
   * (a lost batch stays in the agent's own log and files); never rejects.
   */
  async flushAcknowledged (): Promise<boolean> {
    const turn = this.#acking.then(async () => await this.#flushAcknowledgedNow())
    this.#acking = turn.then(() => {}, () => {})
    return await turn
  }

  async #flushAcknowledgedNow (): Promise<boolean> {
    this.flush()
    const deliver = this.#o.deliver
    if (deliver === undefined) return true
    const records = this.#recentRecords()
    const deadline = this.#now() + (this.#o.ackWaitMs ?? limits.logFlushAckWaitMsMax)
    while (records.length > 0) {
      const left = deadline - this.#now()
      if (left <= 0 || !await withinMs(deliver(this.#nextBatch(records)), left)) return false
    }
    return true
  }

  /** The records gossiped in the resend window (older ones dropped from it). */
  #recentRecords (): LogEntry[] {
    const since = this.#now() - limits.logShipResendWindowMs
    const first = this.#recent.findIndex(r => r.at >= since)
    this.#recent = first < 0 ? [] : this.#recent.slice(first)
    return this.#recent.map(r => r.entry)
  }

  /** A Logger writing to `inner` and shipping every record at or above debug. */
  logger (inner: Logger): Logger {
    return new ShippingLogger(inner, this)
  }

  /** Applies the model's `logging-config` (by Juju module name: `unit=DEBUG`) from now on; undefined lifts it. */
  setLoggingConfig (config: LoggingConfig | undefined): void {
    this.#loggingConfig = config
  }

  /** Whether a record of `module` at `level` is logged at all under the model's logging-config. */
  enabled (module: string, level: LogLevel): boolean {
    const config = this.#loggingConfig
    return config === undefined || loggingEnabled(config, this.#entityOf(module).jujuModule, level)
  }

  record (module: string, level: LogLevel, message: string): void {
    if (logLevelOrder[level] < logLevelOrder[shipLevelMin]) return
    const { entity, jujuModule } = this.#entityOf(module)
    const entry: LogEntry = { entity, time: this.#now(), level, module: jujuModule, message: boundedLogMessage(message), seq: ++this.#seq }
    this.#files(entry)
    this.#queue.push(entry)
    const excess = this.#queue.length - (this.#o.queueMax ?? limits.logShipQueueRecordsMax)
    if (excess > 0) {
      this.#queue.splice(0, excess)
      this.#dropped += excess
    }
    this.#arm()
  }

  flush (): void {
    if (this.#dropped > 0) {
      const note: LogEntry = { entity: this.#o.entity, time: this.#now(), level: 'warning', module: 'juju.logsender', message: `dropped ${this.#dropped} log records: the controllers were not keeping up`, seq: ++this.#seq }
      this.#dropped = 0
      this.#queue.unshift(note)
    }
    while (this.#queue.length > 0) {
      const records = this.#nextBatch(this.#queue)
      this.#o.local?.(records)
      if (this.#o.deliver !== undefined) this.#remember(records)
      this.#published++
      this.#o.transport.publish(this.#topic, encode({ v: 1, records } satisfies LogBatch, component)).catch(() => {
        // Nobody subscribed yet (no controller in the mesh) or stopping: these records stay in the agent's own log.
      })
    }
  }

  /**
   * Takes the next batch off the front of `records`: at most the batch max of records and
   * of bytes (limits.logShipBatchBytesMax, as logEntryBytes estimates them), at least one.
   */
  #nextBatch (records: LogEntry[]): LogEntry[] {
    const recordsMax = this.#o.batchMax ?? limits.logShipBatchRecordsMax
    const bytesMax = this.#o.batchBytesMax ?? limits.logShipBatchBytesMax
    let count = 0
    let bytes = 0
    while (count < records.length && count < recordsMax) {
      bytes += logEntryBytes(records[count]!)
      if (count > 0 && bytes > bytesMax) break
      count++
    }
    return records.splice(0, count)
  }

  /** Keeps gossiped records for the resend window, at most a queue's worth. */
  #remember (records: readonly LogEntry[]): void {
    const at = this.#now()
    for (const entry of records) this.#recent.push({ at, entry })
    const excess = this.#recent.length - (this.#o.queueMax ?? limits.logShipQueueRecordsMax)
    if (excess > 0) this.#recent.splice(0, excess)
  }

  /** A file that will not take a line must not stop the agent or its shipping. */
  #files (entry: LogEntry): void {
    try {
      this.#o.files?.write(entry)
    } catch {
      // The files writer counts and reports its own failures.
    }
  }

  #now (): number {
    return (this.#o.now ?? Date.now)()
  }

  #entityOf (module: string): { entity: string, jujuModule: string } {
    const root = this.#o.rootModule
    const rest = module === root ? '' : module.startsWith(`${root}.`) ? module.slice(root.length + 1) : module
    const unit = /^([a-z][a-z0-9-]*)\/(\d+)(?:\.(.+))?$/.exec(rest)
    if (unit !== null) {
      const name = `${unit[1]!}/${unit[2]!}`
      return { entity: `unit-${unit[1]!}-${unit[2]!}`, jujuModule: unit[3] === undefined ? 'juju.worker.uniter' : `unit.${name}.${unit[3]}` }
    }
    return { entity: this.#o.entity, jujuModule: rest === '' ? 'juju.agent' : `juju.${rest}` }
  }
}

/** Whether `promise` resolved within `ms` (a rejection or the bound: false). */
async function withinMs (promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const bound = new Promise<boolean>(resolve => { timer = setTimeout(() => { resolve(false) }, ms) })
  try {
    return await Promise.race([promise.then(() => true, () => false), bound])
  } finally {
    clearTimeout(timer)
  }
}

class ShippingLogger implements Logger {
  readonly #inner: Logger
  readonly #shipper: LogShipper

  constructor (inner: Logger, shipper: LogShipper) {
    this.#inner = inner
    this.#shipper = shipper
  }

  get module (): string {
    return this.#inner.module
  }

  log (level: LogLevel, message: string, fields?: Readonly<Record<string, unknown>>): void {
    if (!this.#shipper.enabled(this.#inner.module, level)) return
    this.#inner.log(level, message, fields)
    this.#shipper.record(this.#inner.module, level, fields === undefined || Object.keys(fields).length === 0 ? message : `${message} ${fieldsText(fields)}`)
  }

  child (name: string): Logger {
    return new ShippingLogger(this.#inner.child(name), this.#shipper)
  }
}

/** Fields are diagnostics: render what can be rendered rather than lose the record. */
function fieldsText (fields: Readonly<Record<string, unknown>>): string {
  try {
    return JSON.stringify(fields, (_key, value: unknown) => value instanceof Error ? value.message : typeof value === 'bigint' ? value.toString() : value instanceof Uint8Array ? `<${value.byteLength} bytes>` : value)
  } catch {
    return '{}'
  }
}

/**
 * The logging-config the model's `config` sets, else Juju's default `<root>=INFO` (so an
 * agent ships no DEBUG record unless asked: `logging-config=<root>=INFO;unit=DEBUG`);
 * undefined only for an unreadable one.
 */
export function modelLoggingConfig (config: Readonly<Record<string, unknown>> | undefined): LoggingConfig | undefined {
  const text = config?.['logging-config']
  const parsed = parseLoggingConfig(typeof text === 'string' ? text : String(modelConfigSchema['logging-config'].default))
  return typeof parsed === 'string' ? undefined : parsed
}
