/**
 * The write path's stages as this process sees them (RaftHost's `onStage`), for timing one
 * write end to end across the controller processes: with CANTRIP_WRITE_TRACE=FILE every
 * controller appends `<pid> <epoch ms, µs resolution> <stage> <detail>` lines to FILE,
 * which bench/write-stages.ts lines up with its client's own send and receive times. With
 * CANTRIP_WRITE_TRACE_SCHED=1 each line adds `<run µs> <queued µs>`: the process's CPU time so far (getrusage: every thread,
 * the thread pool's LevelDB writes included) and its main thread's time waiting in the
 * run queue for a core (/proc/thread-self/schedstat), so a leg of one process splits into
 * running, waiting for a core (a loaded machine) and waiting for anything else (the disk,
 * the thread pool, a timer, a peer); also
 * the offset from the monotonic clock of CPU profiles (`clock-offset-us`) and, with
 * CANTRIP_WRITE_TRACE_STALLS=1, each event-loop stall (`loop-stall`), to see where a
 * failover's election round waited.
 * A bench tool: unset (always, in a deployment), nothing is recorded.
 */
import { appendFileSync, openSync, readSync } from 'node:fs'
import { Socket } from 'node:net'
import type { RaftHostStage } from '../runtime/raft/raft-host.ts'

/** Lines buffered before they are appended, and the longest they wait: the file is read after the run. */
const flushLines = 500
const flushMs = 1_000

export type StageRecorder = (stage: RaftHostStage | string, detail: number) => void

/** A recorder appending to `file`, or undefined when no file is named. */
export function writeStageTrace (file: string | undefined): StageRecorder | undefined {
  if (file === undefined || file === '') return undefined
  const lines: string[] = []
  // Opt-in: the two reads cost ~10 µs a line, ~10 % of a leader's CPU in a sequential write.
  const sched = process.env['CANTRIP_WRITE_TRACE_SCHED'] === '1'
  const flush = (): void => {
    if (lines.length === 0) return
    try {
      appendFileSync(file, lines.join('\n') + '\n')
    } catch {
      // A trace that cannot be written is lost; the agent goes on.
    }
    lines.length = 0
  }
  setInterval(flush, flushMs).unref()
  process.on('exit', flush)
  const record: StageRecorder = (stage, detail) => {
    const at = (performance.timeOrigin + performance.now()).toFixed(3)
    if (!sched) {
      lines.push(`${process.pid} ${at} ${stage} ${detail}`)
      return
    }
    const { runUs, queuedUs } = schedUs()
    lines.push(`${process.pid} ${at} ${stage} ${detail} ${runUs} ${queuedUs}`)
    if (lines.length >= flushLines) flush()
  }
  probeSockets(record)
  record('clock-offset-us', clockOffsetUs())
  // Opt-in: its timer wakes the process every few ms, which the write path's own timings need not pay.
  if (process.env['CANTRIP_WRITE_TRACE_STALLS'] === '1') recordStalls(record)
  return record
}

let schedstat: number | undefined
const schedBuffer = Buffer.alloc(128)

/**
 * The process's CPU µs so far (getrusage, exact to the moment: schedstat's run time is
 * brought up to date only when the thread is switched out or ticked) and its main thread's
 * µs waiting in the run queue (/proc/thread-self/schedstat, brought up to date each time
 * the thread gets a core, so exact while it runs; one pread on a descriptor kept open).
 * NaN where there is none. Only the main thread's wait: the event loop is where a message waits.
 */
export function schedUs (): { runUs: number, queuedUs: number } {
  const { user, system } = process.cpuUsage()
  try {
    schedstat ??= openSync('/proc/thread-self/schedstat', 'r')
    const n = readSync(schedstat, schedBuffer, 0, schedBuffer.length, 0)
    const queued = schedBuffer.toString('latin1', 0, n).split(' ')[1]
    return { runUs: user + system, queuedUs: Math.round(Number(queued) / 1000) }
  } catch {
    return { runUs: user + system, queuedUs: NaN }
  }
}

/**
 * Epoch µs minus monotonic µs (process.hrtime, the clock V8's CPU profiles stamp their
 * samples with), so a profile taken with --cpu-prof lines up with the trace's epoch times.
 */
function clockOffsetUs (): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000 - Number(process.hrtime.bigint() / 1000n))
}

/** How often the stall watch looks, and how late it must run to record a `loop-stall` (ms). */
const stallCheckMs = 5
const stallRecordedMs = 15

/**
 * Records `loop-stall <ms>` whenever this process's event loop ran a timer that much late:
 * a message that waits there waits as long. A CPU profile of the same time tells the two
 * kinds apart: samples of our own code (a busy loop) or no samples at all (the process was
 * not scheduled, as on a loaded host).
 */
function recordStalls (record: StageRecorder): void {
  let last = performance.now()
  setInterval(() => {
    const now = performance.now()
    if (now - last > stallRecordedMs) record('loop-stall', Math.round(now - last))
    last = now
  }, stallCheckMs).unref()
}

/**
 * Records every TCP socket write (`socket-write:<ports>`, its bytes) and every chunk read
 * from one (`socket-read:<ports>`), the connection named by its two ports, so a hop's time splits into this process's own stack on each side
 * and the kernel and scheduler between. Node's stream reader hands each read to `push`.
 */
export function probeSockets (record: StageRecorder): void {
  const proto = Socket.prototype as unknown as { write: (...args: unknown[]) => boolean, push: (chunk: unknown, encoding?: unknown) => boolean }
  const write = proto.write
  const push = proto.push
  proto.write = function (this: Socket, ...args: unknown[]) {
    const chunk = args[0]
    record(`socket-write:${connection(this)}`, chunk instanceof Uint8Array ? chunk.byteLength : -1)
    return write.apply(this, args)
  }
  proto.push = function (this: Socket, chunk: unknown, encoding?: unknown) {
    if (chunk instanceof Uint8Array) record(`socket-read:${connection(this)}`, chunk.byteLength)
    return push.call(this, chunk, encoding)
  }
}

/** The recorder CANTRIP_WRITE_TRACE names, made once per process (every hosted model shares it). */
let fromEnvironment: StageRecorder | undefined | null = null
export function writeStageTraceFromEnvironment (): StageRecorder | undefined {
  if (fromEnvironment === null) fromEnvironment = writeStageTrace(process.env['CANTRIP_WRITE_TRACE'])
  return fromEnvironment
}

/** The same name for a TCP connection on both ends: its two ports, lower first. */
function connection (socket: Socket): string {
  const ports = [socket.localPort ?? 0, socket.remotePort ?? 0].sort((a, b) => a - b)
  return `${ports[0]}-${ports[1]}`
}
