/**
 * The inspection messages of one agent, for whoever listens: the current actors (each
 * one's `@xstate.actor` message kept up to date with its latest snapshot, so a client that
 * connects later can draw every actor at once), a ring of recent messages, and the
 * listeners (WebSocket clients, the log file) that get every message as it comes.
 */
import { limits } from '../../runtime/limits.ts'
import type { ActorMessage, InspectMessage } from './actor-inspection.ts'

export type InspectListener = (message: InspectMessage) => void

export class InspectHub {
  readonly #actors = new Map<string, ActorMessage>()
  readonly #recent: InspectMessage[] = []
  readonly #listeners = new Set<InspectListener>()
  /** Messages published since the start (for figures and tests). */
  published = 0

  publish (message: InspectMessage): void {
    this.published++
    this.#track(message)
    this.#recent.push(message)
    if (this.#recent.length > limits.inspectRecentRingMax) this.#recent.splice(0, this.#recent.length - limits.inspectRecentRingMax)
    for (const listener of this.#listeners) listener(message)
  }

  /** The actors running now, each with its latest snapshot, oldest first. */
  currentActors (): ActorMessage[] {
    return [...this.#actors.values()]
  }

  recent (): InspectMessage[] {
    return [...this.#recent]
  }

  /** Listens from now on; returns the unsubscribe function. */
  listen (listener: InspectListener): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  #track (message: InspectMessage): void {
    if (message.type === '@xstate.actor') {
      this.#actors.set(message.sessionId, message)
      if (this.#actors.size > limits.inspectActorsMax) this.#actors.delete(this.#actors.keys().next().value!)
    } else if (message.type === '@xstate.snapshot') {
      const actor = this.#actors.get(message.sessionId)
      if (actor === undefined) return
      if (message.status !== 'active') this.#actors.delete(message.sessionId)
      else this.#actors.set(message.sessionId, { ...actor, snapshot: message.snapshot, createdAt: message.createdAt })
    }
  }
}
