import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocketServer, type WebSocket } from 'ws'
import { connectUpstream, type SourceState, type UpstreamAgent } from './upstream-agent.ts'
import { loadViewerAssets, type ViewerAssets } from './viewer-assets.ts'
import { viewerLimits } from './viewer-limits.ts'

/**
 * The viewer's local server: serves the page and its assets on 127.0.0.1, connects to
 * every agent's inspection endpoint (or replays recorded messages), keeps the merged log
 * (bounded), and relays it to each browser over `/stream` — history first, in chunks,
 * then live messages batched every flushIntervalMs. Frames to the browser are
 * `{ kind: 'messages', messages }` or `{ kind: 'sources', sources }`.
 */

export interface ViewerSource { name: string, url: string }

export interface ViewerServerOptions {
  host: string
  port: number
  agents: readonly ViewerSource[]
  /** Recorded messages (a log or a sim run), replayed as the start of the log. */
  recorded: ReadonlyArray<Record<string, unknown>>
  /** Shown in the bar, e.g. the log's file name. */
  recordedLabel?: string
}

export interface ViewerServer {
  url: string
  /** Messages in the merged log so far. */
  readonly messageCount: number
  close: () => Promise<void>
}

interface SourceView { name: string, url: string, state: SourceState | 'recorded', error?: string }

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '::1'])

export function checkListenAddress (host: string, port: number): void {
  if (!loopbackHosts.has(host)) throw new Error(`cantrip inspect: expected --listen on this host (127.0.0.1, localhost or ::1), got ${host}`)
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`cantrip inspect: expected a port 0..65535 in --listen, got ${port}`)
}

export async function startViewerServer (options: ViewerServerOptions): Promise<ViewerServer> {
  checkListenAddress(options.host, options.port)
  const assets: ViewerAssets = await loadViewerAssets()
  const history: Array<Record<string, unknown>> = [...options.recorded]
  const browsers = new Set<WebSocket>()
  let pending: Array<Record<string, unknown>> = []
  const sources = new Map<string, SourceView>()
  if (options.recordedLabel !== undefined) sources.set('recorded', { name: options.recordedLabel, url: '', state: 'recorded' })

  const sendFrame = (socket: WebSocket, frame: unknown): void => {
    if (socket.bufferedAmount > viewerLimits.browserBufferedBytesMax) { socket.terminate(); return }
    socket.send(JSON.stringify(frame))
  }
  const broadcast = (frame: unknown): void => { for (const socket of browsers) sendFrame(socket, frame) }
  const sourcesFrame = (): unknown => ({ kind: 'sources', sources: [...sources.values()] })
  const flush = (): void => {
    if (pending.length === 0) return
    const batch = pending
    pending = []
    for (let i = 0; i < batch.length; i += viewerLimits.frameMessagesMax) broadcast({ kind: 'messages', messages: batch.slice(i, i + viewerLimits.frameMessagesMax) })
  }
  const flushTimer = setInterval(flush, viewerLimits.flushIntervalMs)

  const upstreams: UpstreamAgent[] = options.agents.map(source => {
    sources.set(source.url, { name: source.name, url: source.url, state: 'connecting' })
    return connectUpstream(source.url, source.name, {
      message: raw => {
        history.push(raw)
        if (history.length > viewerLimits.historyMax) history.splice(0, viewerLimits.frameMessagesMax)
        pending.push(raw)
      },
      state: (agent, error) => {
        sources.set(agent.url, { name: agent.name, url: agent.url, state: agent.state, ...(error === undefined ? {} : { error }) })
        broadcast(sourcesFrame())
      }
    })
  })

  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0]
    const send = (type: string, body: string): void => {
      res.writeHead(200, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store' })
      res.end(body)
    }
    switch (path) {
      case '/': return send('text/html', assets.html)
      case '/app.js': return send('text/javascript', assets.appJs)
      case '/elk.js': return send('text/javascript', assets.elkJs)
      case '/viewer.css': return send('text/css', assets.css)
      case '/favicon.ico': res.writeHead(204); res.end(); return
      default:
        res.writeHead(404, { 'content-type': 'text/plain' })
        res.end(`cantrip inspect: no such page ${path}\n`)
    }
  }
  const http = createServer(serve)
  const wss = new WebSocketServer({ noServer: true })
  http.on('upgrade', (req, socket, head) => {
    if (req.url !== '/stream') { socket.destroy(); return }
    wss.handleUpgrade(req, socket, head, ws => {
      // History first (pending live messages are in it already and will not be sent twice: flush first).
      flush()
      sendFrame(ws, sourcesFrame())
      for (let i = 0; i < history.length; i += viewerLimits.frameMessagesMax) sendFrame(ws, { kind: 'messages', messages: history.slice(i, i + viewerLimits.frameMessagesMax) })
      browsers.add(ws)
      ws.on('close', () => browsers.delete(ws))
      ws.on('error', () => browsers.delete(ws))
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port, options.host, () => resolve())
  })
  const address = http.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${host}:${address.port}/`,
    get messageCount () { return history.length },
    close: async () => {
      clearInterval(flushTimer)
      for (const upstream of upstreams) upstream.close()
      for (const socket of browsers) socket.terminate()
      wss.close()
      await new Promise<void>(resolve => http.close(() => resolve()))
    }
  }
}
