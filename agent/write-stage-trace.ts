/**
 * The write path's stages as this process sees them (RaftHost's `onStage`), for timing one
 * write end to end across the controller processes: with CANTRIP_WRITE_TRACE=FILE every
 * controller appends `<pid> <epoch ms, µs resolution> <stage> <detail>` lines to FILE,
 * which bench/write-stages.ts lines up with its client's own send and receive times.
 * A bench tool: unset (always, in a deployment), nothing is recorded.
 */
import { appendFileSync } from 'node:fs'
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
    lines.push(`${process.pid} ${(performance.timeOrigin + performance.now()).toFixed(3)} ${stage} ${detail}`)
    if (lines.length >= flushLines) flush()
  }
  probeSockets(record)
  return record
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
