import WebSocket from 'ws'
import { viewerLimits } from './viewer-limits.ts'

/**
 * One agent's inspection stream, kept connected: every message is parsed and handed on
 * with the agent's name stamped when it did not carry one, and the arrival time as `at`
 * when it had none. On a drop it reconnects with back-off; the agent then sends its
 * current actors again, which the viewer folds as updates.
 */

export type SourceState = 'connecting' | 'connected' | 'disconnected'

export interface UpstreamAgent {
  /** The agent's name: given with --agent NAME=…, else the one its messages carry (the URL until the first). */
  name: string
  readonly url: string
  readonly state: SourceState
  close: () => void
}

export interface UpstreamHandlers {
  message: (raw: Record<string, unknown>) => void
  state: (agent: UpstreamAgent, error?: string) => void
}

/** The agent name a URL stands for until its messages say otherwise. */
export function agentNameOf (url: string): string {
  return url.replace(/^wss?:\/\//, '').replace(/\/$/, '')
}

/** Stately's `createdAt` (ms as a string) when the message has one, else now. */
function timeOf (message: Record<string, unknown>): number {
  const created = Number(message.createdAt)
  return Number.isFinite(created) && created > 0 ? created : Date.now()
}

export function connectUpstream (url: string, name: string, handlers: UpstreamHandlers): UpstreamAgent {
  let socket: WebSocket | undefined
  let closed = false
  let delay: number = viewerLimits.reconnectDelayMsMin
  let timer: NodeJS.Timeout | undefined
  /** The newest message time seen from this agent, over every connection. */
  let lastAt = -Infinity
  let named = name !== agentNameOf(url)
  const agent = {
    name,
    url,
    state: 'connecting' as SourceState,
    close: () => {
      closed = true
      if (timer !== undefined) clearTimeout(timer)
      socket?.terminate()
    }
  }
  const setState = (state: SourceState, error?: string): void => {
    if (agent.state === state && error === undefined) return
    agent.state = state
    handlers.state(agent, error)
  }
  const open = (): void => {
    if (closed) return
    setState('connecting')
    socket = new WebSocket(url)
    socket.on('open', () => { delay = viewerLimits.reconnectDelayMsMin; setState('connected') })
    socket.on('message', data => {
      let raw: unknown
      try { raw = JSON.parse(data.toString()) } catch { return handlers.state(agent, `cantrip inspect: expected JSON from ${url}, got ${data.toString().slice(0, 60)}`) }
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return
      const message = raw as Record<string, unknown>
      if (typeof message.agent !== 'string') message.agent = name
      // An endpoint given by URL only takes the name its agent calls itself.
      else if (!named && message.agent !== agent.name) { named = true; agent.name = message.agent; handlers.state(agent) }
      if (typeof message.at !== 'number') message.at = timeOf(message)
      // After a reconnect the agent replays its recent ring: what was seen before is not logged twice.
      if (message.replay === true && message.type !== '@xstate.actor' && (message.at as number) < lastAt) return
      if (message.type !== '@xstate.actor') lastAt = Math.max(lastAt, message.at as number)
      handlers.message(message)
    })
    socket.on('error', () => undefined)
    socket.on('close', () => {
      if (closed) return
      setState('disconnected')
      timer = setTimeout(open, delay)
      delay = Math.min(delay * 2, viewerLimits.reconnectDelayMsMax)
    })
  }
  open()
  return agent
}
