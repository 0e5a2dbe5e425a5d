/**
 * The unit agent's end of the hook tool transport (juju-semantics §5.1): a unix socket
 * that the tool client (agent/hook-tools/client/cantrip-tool.c) calls once per tool
 * invocation. The wire protocol is described in ./frames.ts:
 *
 *   client                                   server
 *   CALL {context, cwd, tool, args}    ->
 *                                      <-    RESULT {code, stdout, stderr}      (then closes)
 *                                  or  <-    NEEDS_STDIN
 *   CALL {..., stdin}                  ->
 *                                      <-    RESULT {code, stdout, stderr}      (then closes)
 *
 * The server checks the context id against its registry (`contexts`) before it runs
 * anything, runs one call per context at a time, and answers refusals as RESULT with
 * exit 1 and an `ERROR ...` line, the way Juju's jujuc server does. A peer that breaks
 * the protocol (garbage, an oversized or half-sent frame) is disconnected and logged;
 * nothing a peer sends can throw out of the server.
 */
import { chmod, lstat, mkdtemp, rename, rm, stat } from 'node:fs/promises'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { dirname, isAbsolute, join } from 'node:path'
import { CantripError, InvalidInputError } from '../../../runtime/errors.ts'
import { limits } from '../../../runtime/limits.ts'
import type { Logger } from '../../../runtime/logger.ts'
import { StreamLogger } from '../../stream-logger.ts'
import {
  decodeCall, decodeResponse, encodeCall, encodeNeedsStdin, encodeResult, FrameError, FrameReader,
  InvalidCallError, type Frame, type ToolCallRequest, type ToolCallResult
} from './frames.ts'
import { ToolContexts } from './tool-contexts.ts'

/** One tool invocation as the command implementations see it. */
export interface ToolCall {
  contextId: string
  /** The working directory of the process that ran the tool. */
  cwd: string
  /** The name the tool was run as: `relation-get`, `config-get`, ... */
  tool: string
  /** The arguments after the tool name. */
  args: string[]
  /** Present only on the second call, after the handler answered `{ needsStdin: true }`. */
  stdin?: Uint8Array
}

export interface ToolResult {
  code: 0 | 1 | 2
  stdout: Uint8Array | string
  stderr: Uint8Array | string
}

/** Either the result, or a request to be called again with the client's stdin. */
export type ToolReply = ToolResult | { needsStdin: true }

export type ToolHandler = (call: ToolCall) => Promise<ToolReply>

export interface ToolServerOptions {
  /** Where dropped connections and refused calls are logged; stderr by default. */
  logger?: Logger
  /** Overrides limits.hookToolFrameReadTimeoutMs (tests use a short one). */
  frameReadTimeoutMs?: number
}

/** The longest unix socket path Linux accepts: sun_path is 108 bytes with the NUL. */
export const socketPathBytesMax = 107

/**
 * The private directory the socket is bound in before it is renamed into place. Its name
 * is short on purpose: `<dir>/.s??????/s` is no longer than `<dir>/agent.socket`, so any
 * agent socket path that fits also binds (a long prefix made units deep under
 * CANTRIP_HOME fail to start, and with them the removal of their principals).
 */
export const bindDirPrefix = '.s'
/** mkdtemp appends six characters to the prefix. */
const bindDirSuffixBytes = 6
const bindName = 's'

/** The longest path the socket is bound at in `dir`, before the rename. */
function bindPathBytes (dir: string): number {
  return Buffer.byteLength(join(dir, `${bindDirPrefix}${'X'.repeat(bindDirSuffixBytes)}`, bindName))
}

const utf8 = new TextEncoder()

export class ToolServer {
  /** Contexts whose calls are accepted: open one per hook run, close it when the hook ends. */
  readonly contexts = new ToolContexts()
  readonly socketPath: string
  readonly #server: Server
  readonly #handler: ToolHandler
  readonly #logger: Logger
  readonly #frameReadTimeoutMs: number
  readonly #sockets = new Set<Socket>()
  /** Identity of the socket file once it is in place, so `close` removes only our own. */
  #socketFile: { dev: number, ino: number } | undefined
  #closing: Promise<void> | undefined

  /**
   * Handlers are attached before the socket is bound: a client may connect the moment
   * the file is renamed into place.
   */
  private constructor (socketPath: string, handler: ToolHandler, logger: Logger, frameReadTimeoutMs: number) {
    this.socketPath = socketPath
    this.#handler = handler
    this.#logger = logger
    this.#frameReadTimeoutMs = frameReadTimeoutMs
    const server = createServer()
    server.maxConnections = limits.hookToolConnectionsMax
    this.#server = server
    server.on('connection', socket => { this.#accept(socket) })
    server.on('drop', () => {
      this.#logger.log('warning', `hook tool connection dropped: already ${limits.hookToolConnectionsMax} connections (hookToolConnectionsMax)`)
    })
  }

  /**
   * Listens at `socketPath` (absolute; its directory must exist). The socket file is
   * bound in a private directory, made mode 0600 and then renamed into place, so it is
   * never reachable with wider permissions, and a stale file left by a crashed agent is
   * replaced atomically. A socket another process still listens on is not taken over.
   */
  static async listen (socketPath: string, handler: ToolHandler, options: ToolServerOptions = {}): Promise<ToolServer> {
    if (!isAbsolute(socketPath)) throw new InvalidInputError('hook tool server', 'an absolute socket path', socketPath)
    if (Buffer.byteLength(socketPath) > socketPathBytesMax) {
      throw new InvalidInputError('hook tool server', `a socket path of at most ${socketPathBytesMax} bytes`, socketPath)
    }
    const dir = dirname(socketPath)
    if (bindPathBytes(dir) > socketPathBytesMax) {
      const dirMax = socketPathBytesMax - (bindPathBytes(dir) - Buffer.byteLength(dir))
      throw new InvalidInputError('hook tool server', `a socket directory of at most ${dirMax} bytes (the socket is bound in a private directory there first)`, dir)
    }
    await refuseLiveOrForeign(socketPath)
    const logger = options.logger ?? new StreamLogger({ stream: process.stderr, module: 'agent.hook-tools' })
    const toolServer = new ToolServer(socketPath, handler, logger, options.frameReadTimeoutMs ?? limits.hookToolFrameReadTimeoutMs)
    await toolServer.#bind()
    return toolServer
  }

  async #bind (): Promise<void> {
    const server = this.#server
    // listen() checked that this path fits.
    const privateDir = await mkdtemp(join(dirname(this.socketPath), bindDirPrefix))
    const boundPath = join(privateDir, bindName)
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(boundPath, () => { server.off('error', reject); resolve() })
      })
      await chmod(boundPath, 0o600)
      await rename(boundPath, this.socketPath)
      const { dev, ino } = await stat(this.socketPath)
      this.#socketFile = { dev, ino }
      server.on('error', error => { this.#logger.log('error', `hook tool socket "${this.socketPath}" failed`, { error }) })
    } catch (error) {
      if (server.listening) await new Promise(resolve => { server.close(resolve) })
      throw error instanceof CantripError ? error : new CantripError(`hook tool server: cannot listen at "${this.socketPath}"`, { cause: error })
    } finally {
      await rm(privateDir, { recursive: true, force: true })
    }
  }

  /** Client connections open now. */
  get connectionCount (): number {
    return this.#sockets.size
  }

  /** Stops listening, disconnects every client and removes the socket file. */
  close (): Promise<void> {
    this.#closing ??= (async () => {
      const closed = new Promise<void>(resolve => { this.#server.close(() => { resolve() }) })
      for (const socket of this.#sockets) socket.destroy()
      await closed
      try {
        const now = await lstat(this.socketPath)
        if (now.dev === this.#socketFile?.dev && now.ino === this.#socketFile.ino) await rm(this.socketPath, { force: true })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    })()
    return this.#closing
  }

  #accept (socket: Socket): void {
    this.#sockets.add(socket)
    const reader = new FrameReader('toServer')
    /**
     * first: waiting for the CALL; busy: a CALL is being handled; stdin: NEEDS_STDIN was
     * sent and the CALL with stdin is awaited; done: the RESULT was sent.
     */
    let phase: 'first' | 'busy' | 'stdin' | 'done' = 'first'
    let timer: NodeJS.Timeout | undefined
    const disarm = (): void => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
    }
    const drop = (reason: string): void => {
      if (socket.destroyed) return
      this.#logger.log('warning', `hook tool connection dropped: ${reason}`)
      disarm()
      socket.destroy()
    }
    const arm = (): void => {
      if (timer !== undefined) return
      timer = setTimeout(() => { drop(`no complete request within ${this.#frameReadTimeoutMs} ms`) }, this.#frameReadTimeoutMs)
      timer.unref()
    }
    const send = (reply: Uint8Array | 'needsStdin'): void => {
      if (socket.destroyed) return
      if (reply === 'needsStdin') {
        phase = 'stdin'
        socket.write(encodeNeedsStdin())
        if (reader.buffered > 0) arm()
      } else {
        phase = 'done'
        // Once the reply is with the kernel the connection has nothing left to do; closing
        // it frees its slot even if the client is slow to hang up.
        socket.end(reply, () => { socket.destroy() })
      }
    }
    // The first frame has to follow the connect promptly: the client connects to send it.
    arm()
    socket.on('data', (chunk: Buffer) => {
      let frames: Frame[]
      try {
        frames = reader.push(chunk)
      } catch (error) {
        drop(error instanceof FrameError ? error.message : String(error))
        return
      }
      if (frames.length > 0) disarm()
      for (const frame of frames) {
        if (phase !== 'first' && phase !== 'stdin') {
          drop(phase === 'busy' ? 'a second request before the reply to the first' : 'a request after the result')
          return
        }
        const round = phase === 'first' ? 1 : 2
        phase = 'busy'
        this.#call(frame, round).then(
          reply => { if (reply === 'drop') drop('a request after NEEDS_STDIN without stdin'); else send(reply) },
          (error: unknown) => { drop(`${error instanceof Error ? error.message : String(error)}`) }
        )
      }
      if ((phase === 'first' || phase === 'stdin') && reader.buffered > 0) arm()
    })
    socket.on('error', error => { this.#logger.log('debug', 'hook tool connection failed', { error }) })
    socket.on('close', () => {
      disarm()
      this.#sockets.delete(socket)
    })
  }

  /** Decodes, authorises and runs one CALL; resolves to the frame to send back. */
  async #call (frame: Frame, round: 1 | 2): Promise<Uint8Array | 'needsStdin' | 'drop'> {
    let request: ToolCallRequest
    try {
      request = decodeCall(frame.body)
    } catch (error) {
      if (error instanceof InvalidCallError) return refusal(1, error.message)
      throw error
    }
    if (round === 2 && request.stdin === undefined) return 'drop'
    const { contextId } = request
    const outcome = await this.contexts.run(contextId, () => this.#invoke(request))
    switch (outcome.kind) {
      case 'ran':
        return outcome.value
      case 'unknown':
        this.#logger.log('info', `hook tool call refused: invalid context id ${JSON.stringify(contextId)}`, { tool: request.tool })
        return refusal(1, `invalid context id ${JSON.stringify(contextId)}`)
      case 'queueFull':
        this.#logger.log('warning', `hook tool call refused: ${limits.hookToolCallsQueuedPerContextMax} calls already waiting for context ${JSON.stringify(contextId)}`, { tool: request.tool })
        return refusal(1, `too many hook tool calls waiting for context ${JSON.stringify(contextId)}`)
    }
  }

  /** Runs the handler; whatever it does, turns it into a frame (or NEEDS_STDIN). */
  async #invoke (request: ToolCallRequest): Promise<Uint8Array | 'needsStdin'> {
    const call: ToolCall = { contextId: request.contextId, cwd: request.cwd, tool: request.tool, args: [...request.args] }
    if (request.stdin !== undefined) call.stdin = request.stdin
    let reply: ToolReply
    try {
      reply = await this.#handler(call)
    } catch (error) {
      this.#logger.log('error', `hook tool "${request.tool}" failed`, { error, contextId: request.contextId })
      return refusal(1, `${request.tool}: ${error instanceof Error ? error.message : String(error)}`)
    }
    if (typeof reply !== 'object' || reply === null) {
      this.#logger.log('error', `hook tool "${request.tool}" returned ${String(reply)}, expected a result or { needsStdin: true }`)
      return refusal(1, `${request.tool}: internal error: no result`)
    }
    if ('needsStdin' in reply) {
      if (request.stdin === undefined) return 'needsStdin'
      this.#logger.log('error', `hook tool "${request.tool}" asked for stdin after it was given`, { contextId: request.contextId })
      return refusal(1, `${request.tool}: asked for stdin twice`)
    }
    if (reply.code !== 0 && reply.code !== 1 && reply.code !== 2) {
      this.#logger.log('error', `hook tool "${request.tool}" returned exit code ${String(reply.code)}, expected 0, 1 or 2`)
      return refusal(1, `${request.tool}: internal error: exit code ${String(reply.code)}`)
    }
    const result: ToolCallResult = { code: reply.code, stdout: bytes(reply.stdout), stderr: bytes(reply.stderr) }
    const outputBytes = result.stdout.length + result.stderr.length
    if (outputBytes > limits.hookToolOutputBytesMax) {
      this.#logger.log('error', `hook tool "${request.tool}" produced ${outputBytes} bytes of output, more than hookToolOutputBytesMax`)
      return refusal(1, `${request.tool}: output of ${outputBytes} bytes is more than the limit of ${limits.hookToolOutputBytesMax}`)
    }
    return encodeResult(result)
  }
}

function bytes (value: Uint8Array | string): Uint8Array {
  return typeof value === 'string' ? utf8.encode(value) : value
}

function refusal (code: 1 | 2, message: string): Uint8Array {
  return encodeResult({ code, stdout: new Uint8Array(0), stderr: utf8.encode(`ERROR ${message}\n`) })
}

/** A stale socket (nobody accepts on it) may be replaced; anything else at the path may not. */
async function refuseLiveOrForeign (socketPath: string): Promise<void> {
  let existing
  try {
    existing = await lstat(socketPath)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw new CantripError(`hook tool server: cannot listen at "${socketPath}"`, { cause: error })
  }
  if (!existing.isSocket()) throw new CantripError(`hook tool server: cannot listen at "${socketPath}": a file that is not a socket is in the way`)
  const live = await new Promise<boolean>(resolve => {
    const probe = createConnection(socketPath)
    probe.once('connect', () => { probe.destroy(); resolve(true) })
    probe.once('error', () => { resolve(false) })
  })
  if (live) throw new CantripError(`hook tool server: cannot listen at "${socketPath}": another process is listening there`)
}

export interface CallToolOptions {
  /** Gives up (and rejects) after this long; the agent's own timeouts apply as well. */
  timeoutMs?: number
}

/**
 * A TypeScript client for tests and tools: the same exchange as the C client. The first
 * CALL carries no stdin; if the server asks for it, the CALL is repeated with
 * `request.stdin` (empty when absent).
 */
export function callTool (socketPath: string, request: ToolCallRequest, options: CallToolOptions = {}): Promise<ToolCallResult> {
  const timeoutMs = options.timeoutMs ?? 30_000
  const { stdin, ...withoutStdin } = request
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath)
    const reader = new FrameReader('toClient')
    let sentStdin = false
    let settled = false
    const finish = (error: Error | undefined, result?: ToolCallResult): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      if (error !== undefined) reject(error)
      else resolve(result!)
    }
    const timer = setTimeout(() => {
      finish(new CantripError(`hook tool call "${request.tool}": no reply from "${socketPath}" within ${timeoutMs} ms`))
    }, timeoutMs)
    socket.once('connect', () => {
      try {
        socket.write(encodeCall(withoutStdin))
      } catch (error) {
        finish(error as Error)
      }
    })
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const frame of reader.push(chunk)) {
          const response = decodeResponse(frame)
          if (response.kind === 'result') {
            finish(undefined, response.result)
            return
          }
          if (sentStdin) throw new FrameError(`hook tool call "${request.tool}": the agent asked for stdin twice`)
          sentStdin = true
          socket.write(encodeCall({ ...withoutStdin, stdin: stdin ?? new Uint8Array(0) }))
        }
      } catch (error) {
        finish(error as Error)
      }
    })
    socket.on('error', error => {
      finish(new CantripError(`hook tool call "${request.tool}": cannot reach the unit agent at "${socketPath}"`, { cause: error }))
    })
    socket.on('close', () => {
      finish(new CantripError(`hook tool call "${request.tool}": connection to "${socketPath}" closed before a reply`))
    })
  })
}
