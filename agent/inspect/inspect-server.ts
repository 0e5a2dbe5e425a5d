/**
 * `cantripd --inspect [HOST:]PORT`: a WebSocket server streaming the agent's inspection
 * messages as JSON text frames, one message per frame (what `@statelyai/inspect`'s
 * `createWebSocketReceiver` reads). A client first gets the current actors — an
 * `@xstate.actor` message each, with its definition and latest snapshot, marked
 * `replay: true` — then the recent ring (also `replay: true`; it may announce actors that
 * have ended since, before their last messages), then live messages.
 *
 * Bounded per client: at most limits.inspectClientInFlightMax frames handed to the
 * socket and not yet flushed, and limits.inspectClientQueueMax waiting behind them; a
 * slow client loses the oldest waiting ones and, before the next frame it gets, a
 * `{"type":"@cantrip.dropped","count":N}` notice. Loopback only unless a host is given.
 */
import type { AddressInfo } from 'node:net'
import { WebSocketServer, type WebSocket } from 'ws'
import { limits } from '../../runtime/limits.ts'
import type { InspectMessage } from './actor-inspection.ts'
import type { InspectHub } from './inspect-hub.ts'

export interface InspectAddress { host: string, port: number }

/** `PORT`, `HOST:PORT` or `[V6]:PORT`; the host defaults to 127.0.0.1. */
export function parseInspectAddress (spec: string): InspectAddress {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(spec.trim())
  const port = Number(match?.[2])
  if (match === null || !Number.isSafeInteger(port) || port > 65_535) throw new Error(`inspect: expected --inspect [HOST:]PORT (port 0 for any free one), got ${JSON.stringify(spec)}`)
  return { host: (match[1] ?? '127.0.0.1').replace(/^\[|\]$/g, ''), port }
}

export class InspectServer {
  readonly url: string
  readonly #wss: WebSocketServer
  readonly #clients = new Set<InspectClient>()
  readonly #unlisten: () => void

  private constructor (wss: WebSocketServer, hub: InspectHub) {
    this.#wss = wss
    const address = wss.address() as AddressInfo
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
    this.url = `ws://${host}:${address.port}`
    wss.on('connection', socket => {
      const client = new InspectClient(socket)
      this.#clients.add(client)
      socket.on('close', () => { this.#clients.delete(client) })
      socket.on('error', () => { socket.terminate() })
      const current = hub.currentActors()
      for (const actor of current) client.send(JSON.stringify({ ...actor, replay: true }))
      // The ring's own actor messages only for actors that have ended since (the current ones came first).
      const sent = new Set(current.map(actor => actor.sessionId))
      for (const message of hub.recent()) if (message.type !== '@xstate.actor' || !sent.has(message.sessionId)) client.send(JSON.stringify({ ...message, replay: true }))
    })
    this.#unlisten = hub.listen(message => { this.#broadcast(message) })
  }

  static async start (hub: InspectHub, address: InspectAddress): Promise<InspectServer> {
    const wss = new WebSocketServer({ host: address.host, port: address.port, maxPayload: 64 * 1024 })
    await new Promise<void>((resolve, reject) => {
      wss.once('listening', resolve)
      wss.once('error', error => { reject(new Error(`inspect: cannot listen on ${address.host}:${address.port}: ${error.message}`)) })
    })
    return new InspectServer(wss, hub)
  }

  get clients (): number {
    return this.#clients.size
  }

  async stop (): Promise<void> {
    this.#unlisten()
    for (const client of this.#clients) client.close()
    await new Promise<void>(resolve => { this.#wss.close(() => { resolve() }) })
  }

  #broadcast (message: InspectMessage): void {
    if (this.#clients.size === 0) return
    const frame = JSON.stringify(message)
    for (const client of this.#clients) client.send(frame)
  }
}

/** One connected client: its frames in flight and its bounded queue. */
class InspectClient {
  readonly #socket: WebSocket
  readonly #queue: string[] = []
  #head = 0
  #inFlight = 0
  #dropped = 0

  constructor (socket: WebSocket) {
    this.#socket = socket
  }

  send (frame: string): void {
    this.#queue.push(frame)
    const waiting = this.#queue.length - this.#head
    if (waiting > limits.inspectClientQueueMax) {
      const excess = waiting - limits.inspectClientQueueMax
      this.#head += excess
      this.#dropped += excess
    }
    this.#pump()
  }

  close (): void {
    this.#socket.terminate()
  }

  #pump (): void {
    while (this.#inFlight < limits.inspectClientInFlightMax && this.#head < this.#queue.length && this.#socket.readyState === this.#socket.OPEN) {
      if (this.#dropped > 0) {
        this.#write(JSON.stringify({ type: '@cantrip.dropped', count: this.#dropped }))
        this.#dropped = 0
        continue
      }
      this.#write(this.#queue[this.#head++]!)
    }
    // Compact now and then rather than shifting on every frame.
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue.splice(0, this.#head)
      this.#head = 0
    }
  }

  #write (frame: string): void {
    this.#inFlight++
    this.#socket.send(frame, () => {
      this.#inFlight--
      this.#pump()
    })
  }
}
