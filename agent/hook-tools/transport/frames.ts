/**
 * The hook tool wire protocol, shared by the agent's `ToolServer`, the TS `callTool` and
 * the C client (agent/hook-tools/client/cantrip-tool.c, which repeats this description).
 *
 * Transport: a unix stream socket (JUJU_AGENT_SOCKET_ADDRESS). One connection carries
 * one tool call: the client sends a CALL, the server answers RESULT and closes. If the
 * command wants stdin the server answers NEEDS_STDIN instead; the client then reads all
 * of its stdin and sends the CALL again on the same connection, with stdin included,
 * and the server answers RESULT. A connection carries at most these two CALLs.
 *
 * Frame: a 12-byte header, then `length` bytes of body. Integers are little-endian.
 *
 *   offset 0  4 bytes  magic "CTRP" (0x43 0x54 0x52 0x50)
 *   offset 4  u8       version, 1
 *   offset 5  u8       kind: 1 CALL (client to server), 2 RESULT, 3 NEEDS_STDIN
 *   offset 6  u16      reserved, 0
 *   offset 8  u32      body length in bytes
 *
 * A "string" below is a u32 byte length then that many UTF-8 bytes, never containing NUL.
 *
 *   CALL         string context id, string cwd, string tool name,
 *                u32 argument count, that many strings (the arguments after argv[0]),
 *                u8 stdin flag: 0 = no stdin, 1 = u32 length then the stdin bytes
 *   RESULT       u8 exit code, u32 length + stdout bytes, u32 length + stderr bytes
 *   NEEDS_STDIN  empty body
 *
 * A body must end exactly where its last field does. Bounds (runtime/limits.ts): the
 * CALL body without its stdin part is at most hookToolArgsBytesMax with at most
 * hookToolArgsCountMax arguments, stdin at most hookToolStdinBytesMax, and stdout plus
 * stderr at most hookToolOutputBytesMax. Each side checks a header's length against the
 * largest body its kind allows before reading the body, and never trusts a length
 * inside a body beyond the bytes that are actually there.
 */
import { CantripError } from '../../../runtime/errors.ts'
import { limits } from '../../../runtime/limits.ts'

export const frameMagic: Readonly<Uint8Array> = Uint8Array.of(0x43, 0x54, 0x52, 0x50)
export const frameVersion = 1
export const frameHeaderBytes = 12

export const frameKinds = { call: 1, result: 2, needsStdin: 3 } as const
export type FrameKind = typeof frameKinds[keyof typeof frameKinds]

/** Largest CALL body: arguments part, stdin flag, stdin length and stdin. */
export const callBodyBytesMax = limits.hookToolArgsBytesMax + 1 + 4 + limits.hookToolStdinBytesMax
/** Largest RESULT body: exit code, two lengths and the output. */
export const resultBodyBytesMax = 1 + 4 + 4 + limits.hookToolOutputBytesMax

/** A frame that breaks the protocol; the connection that carried it is dropped. */
export class FrameError extends CantripError {
  override name = 'FrameError'
}

/**
 * A well-formed CALL the agent refuses to run (an argument that is not UTF-8, say):
 * answered with exit 1 and `ERROR <message>` rather than by dropping the connection,
 * because a real client can send it.
 */
export class InvalidCallError extends CantripError {
  override name = 'InvalidCallError'
}

export interface ToolCallRequest {
  contextId: string
  cwd: string
  tool: string
  args: readonly string[]
  stdin?: Uint8Array
}

export interface ToolCallResult {
  code: number
  stdout: Uint8Array
  stderr: Uint8Array
}

export type ToolResponse = { kind: 'result', result: ToolCallResult } | { kind: 'needsStdin' }

export interface Frame {
  kind: FrameKind
  body: Uint8Array
}

const utf8 = new TextEncoder()
const utf8Strict = new TextDecoder('utf-8', { fatal: true })

/** A whole frame: header and body. Exported so tests can send hand-made frames. */
export function encodeFrame (kind: number, body: Uint8Array): Uint8Array {
  if (body.length > 0xffff_ffff) throw new FrameError(`hook tool frame: body of ${body.length} bytes does not fit a u32 length`)
  const frame = new Uint8Array(frameHeaderBytes + body.length)
  frame.set(frameMagic, 0)
  frame[4] = frameVersion
  frame[5] = kind
  new DataView(frame.buffer).setUint32(8, body.length, true)
  frame.set(body, frameHeaderBytes)
  return frame
}

/** Appends fields to a growing list of parts; one copy at the end. */
class BodyWriter {
  readonly parts: Uint8Array[] = []
  length = 0

  u8 (value: number): void { this.bytes(Uint8Array.of(value)) }

  u32 (value: number): void {
    const part = new Uint8Array(4)
    new DataView(part.buffer).setUint32(0, value, true)
    this.bytes(part)
  }

  bytes (part: Uint8Array): void { this.parts.push(part); this.length += part.length }

  sized (part: Uint8Array): void { this.u32(part.length); this.bytes(part) }

  string (what: string, value: string): void {
    if (value.includes('\0')) throw new FrameError(`hook tool call: ${what} contains a NUL byte`)
    this.sized(utf8.encode(value))
  }

  finish (): Uint8Array {
    const body = new Uint8Array(this.length)
    let at = 0
    for (const part of this.parts) { body.set(part, at); at += part.length }
    return body
  }
}

/** Encodes a CALL frame; throws `FrameError` for NUL bytes or a call over the limits. */
export function encodeCall (request: ToolCallRequest): Uint8Array {
  if (request.args.length > limits.hookToolArgsCountMax) {
    throw new FrameError(`hook tool call: ${request.args.length} arguments, more than hookToolArgsCountMax (${limits.hookToolArgsCountMax})`)
  }
  const writer = new BodyWriter()
  writer.string('context id', request.contextId)
  writer.string('cwd', request.cwd)
  writer.string('tool name', request.tool)
  writer.u32(request.args.length)
  request.args.forEach((arg, i) => { writer.string(`argument ${i + 1}`, arg) })
  if (writer.length > limits.hookToolArgsBytesMax) {
    throw new FrameError(`hook tool call: arguments of ${writer.length} bytes, more than hookToolArgsBytesMax (${limits.hookToolArgsBytesMax})`)
  }
  if (request.stdin === undefined) {
    writer.u8(0)
  } else {
    if (request.stdin.length > limits.hookToolStdinBytesMax) {
      throw new FrameError(`hook tool call: stdin of ${request.stdin.length} bytes, more than hookToolStdinBytesMax (${limits.hookToolStdinBytesMax})`)
    }
    writer.u8(1)
    writer.sized(request.stdin)
  }
  return encodeFrame(frameKinds.call, writer.finish())
}

export function encodeResult (result: ToolCallResult): Uint8Array {
  if (!Number.isInteger(result.code) || result.code < 0 || result.code > 255) {
    throw new FrameError(`hook tool result: exit code ${String(result.code)} is not a byte`)
  }
  const outputBytes = result.stdout.length + result.stderr.length
  if (outputBytes > limits.hookToolOutputBytesMax) {
    throw new FrameError(`hook tool result: output of ${outputBytes} bytes, more than hookToolOutputBytesMax (${limits.hookToolOutputBytesMax})`)
  }
  const writer = new BodyWriter()
  writer.u8(result.code)
  writer.sized(result.stdout)
  writer.sized(result.stderr)
  return encodeFrame(frameKinds.result, writer.finish())
}

export function encodeNeedsStdin (): Uint8Array {
  return encodeFrame(frameKinds.needsStdin, new Uint8Array(0))
}

/** Reads fields off a body, checking every length against the bytes that are left. */
class BodyReader {
  #view: DataView
  #at = 0
  constructor (readonly body: Uint8Array, readonly what: string) {
    this.#view = new DataView(body.buffer, body.byteOffset, body.byteLength)
  }

  get consumed (): number { return this.#at }

  #need (count: number, field: string): void {
    if (count > this.body.length - this.#at) {
      throw new FrameError(`${this.what}: ${field} needs ${count} bytes at offset ${this.#at}, only ${this.body.length - this.#at} left`)
    }
  }

  u8 (field: string): number {
    this.#need(1, field)
    return this.#view.getUint8(this.#at++)
  }

  u32 (field: string): number {
    this.#need(4, field)
    const value = this.#view.getUint32(this.#at, true)
    this.#at += 4
    return value
  }

  sized (field: string): Uint8Array {
    const length = this.u32(`${field} length`)
    this.#need(length, field)
    const bytes = this.body.subarray(this.#at, this.#at + length)
    this.#at += length
    return bytes
  }

  string (field: string): string {
    const bytes = this.sized(field)
    if (bytes.includes(0)) throw new FrameError(`${this.what}: ${field} contains a NUL byte`)
    try {
      return utf8Strict.decode(bytes)
    } catch (error) {
      throw new InvalidCallError(`${field} is not valid UTF-8`, { cause: error })
    }
  }

  end (): void {
    if (this.#at !== this.body.length) throw new FrameError(`${this.what}: ${this.body.length - this.#at} bytes after the last field`)
  }
}

/**
 * Decodes a CALL body. Structural faults throw `FrameError`; well-formed content the
 * agent will not run (text that is not UTF-8) throws `InvalidCallError`, but only after
 * the whole body has been checked, so a fault later in the frame still drops it.
 */
export function decodeCall (body: Uint8Array): ToolCallRequest {
  const reader = new BodyReader(body, 'hook tool call')
  let invalid: InvalidCallError | undefined
  const text = (field: string): string => {
    try {
      return reader.string(field)
    } catch (error) {
      if (!(error instanceof InvalidCallError)) throw error
      invalid ??= error
      return ''
    }
  }
  const contextId = text('context id')
  const cwd = text('cwd')
  const tool = text('tool name')
  const argCount = reader.u32('argument count')
  if (argCount > limits.hookToolArgsCountMax) {
    throw new FrameError(`hook tool call: ${argCount} arguments, more than hookToolArgsCountMax (${limits.hookToolArgsCountMax})`)
  }
  const args: string[] = []
  for (let i = 0; i < argCount; i++) args.push(text(`argument ${i + 1}`))
  if (reader.consumed > limits.hookToolArgsBytesMax) {
    throw new FrameError(`hook tool call: arguments of ${reader.consumed} bytes, more than hookToolArgsBytesMax (${limits.hookToolArgsBytesMax})`)
  }
  const stdinFlag = reader.u8('stdin flag')
  let stdin: Uint8Array | undefined
  if (stdinFlag === 1) {
    stdin = reader.sized('stdin')
    if (stdin.length > limits.hookToolStdinBytesMax) {
      throw new FrameError(`hook tool call: stdin of ${stdin.length} bytes, more than hookToolStdinBytesMax (${limits.hookToolStdinBytesMax})`)
    }
  } else if (stdinFlag !== 0) {
    throw new FrameError(`hook tool call: stdin flag ${stdinFlag}, expected 0 or 1`)
  }
  reader.end()
  if (invalid !== undefined) throw invalid
  return stdin === undefined ? { contextId, cwd, tool, args } : { contextId, cwd, tool, args, stdin }
}

export function decodeResponse (frame: Frame): ToolResponse {
  if (frame.kind === frameKinds.needsStdin) {
    if (frame.body.length !== 0) throw new FrameError(`hook tool reply: NEEDS_STDIN with a body of ${frame.body.length} bytes`)
    return { kind: 'needsStdin' }
  }
  if (frame.kind !== frameKinds.result) throw new FrameError(`hook tool reply: unexpected frame kind ${frame.kind}`)
  const reader = new BodyReader(frame.body, 'hook tool result')
  const code = reader.u8('exit code')
  const stdout = reader.sized('stdout')
  const stderr = reader.sized('stderr')
  reader.end()
  return { kind: 'result', result: { code, stdout, stderr } }
}

/**
 * Splits a byte stream into frames. The header is checked as soon as its 12 bytes are
 * in, so an oversized or foreign frame is refused before its body is buffered. Chunks
 * are kept as a list and copied once per frame.
 */
export class FrameReader {
  readonly #bodyBytesMax: ReadonlyMap<number, number>
  #chunks: Uint8Array[] = []
  #buffered = 0
  #header: { kind: FrameKind, length: number } | undefined

  /** `toServer` accepts CALL frames; `toClient` accepts RESULT and NEEDS_STDIN. */
  constructor (direction: 'toServer' | 'toClient') {
    this.#bodyBytesMax = direction === 'toServer'
      ? new Map([[frameKinds.call, callBodyBytesMax]])
      : new Map([[frameKinds.result, resultBodyBytesMax], [frameKinds.needsStdin, 0]])
  }

  /** Bytes received that do not yet make up a whole frame. */
  get buffered (): number { return this.#buffered }

  /** Adds received bytes; returns the frames they complete. Throws `FrameError`. */
  push (chunk: Uint8Array): Frame[] {
    if (chunk.length > 0) {
      this.#chunks.push(chunk)
      this.#buffered += chunk.length
    }
    const frames: Frame[] = []
    for (;;) {
      if (this.#header === undefined) {
        if (this.#buffered < frameHeaderBytes) return frames
        this.#header = this.#parseHeader(this.#take(frameHeaderBytes))
      }
      if (this.#buffered < this.#header.length) return frames
      frames.push({ kind: this.#header.kind, body: this.#take(this.#header.length) })
      this.#header = undefined
    }
  }

  #parseHeader (header: Uint8Array): { kind: FrameKind, length: number } {
    for (let i = 0; i < frameMagic.length; i++) {
      if (header[i] !== frameMagic[i]) {
        throw new FrameError(`hook tool frame: bad magic ${hex(header.subarray(0, 4))}, expected ${hex(frameMagic)}`)
      }
    }
    const view = new DataView(header.buffer, header.byteOffset, header.byteLength)
    const version = view.getUint8(4)
    if (version !== frameVersion) throw new FrameError(`hook tool frame: version ${version}, expected ${frameVersion}`)
    const kind = view.getUint8(5)
    const reserved = view.getUint16(6, true)
    if (reserved !== 0) throw new FrameError(`hook tool frame: reserved field ${reserved}, expected 0`)
    const bodyBytesMax = this.#bodyBytesMax.get(kind)
    if (bodyBytesMax === undefined) throw new FrameError(`hook tool frame: unexpected kind ${kind}`)
    const length = view.getUint32(8, true)
    if (length > bodyBytesMax) throw new FrameError(`hook tool frame: body of ${length} bytes, more than the ${bodyBytesMax} a kind ${kind} frame may have`)
    return { kind: kind as FrameKind, length }
  }

  /** Removes and returns the first `count` buffered bytes (count <= buffered). */
  #take (count: number): Uint8Array {
    const out = new Uint8Array(count)
    let filled = 0
    while (filled < count) {
      const chunk = this.#chunks[0]!
      const used = Math.min(chunk.length, count - filled)
      out.set(chunk.subarray(0, used), filled)
      filled += used
      if (used === chunk.length) this.#chunks.shift()
      else this.#chunks[0] = chunk.subarray(used)
    }
    this.#buffered -= count
    return out
  }
}

function hex (bytes: Uint8Array): string {
  return Array.from(bytes, b => b.toString(16).padStart(2, '0')).join(' ')
}
