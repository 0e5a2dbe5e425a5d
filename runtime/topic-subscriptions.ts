/**
 * The subscribers of each topic, as a Transport keeps them (the libp2p one and the
 * simulated one alike). Each subscription is a wrapper object, so the same callback
 * subscribed twice unsubscribes one at a time; delivery hands each subscriber its own
 * copy of the data, and a subscriber that unsubscribes another from inside its callback
 * wins (the other is skipped).
 */
import type { TopicMessage } from './transport.ts'

interface Subscription { readonly onMessage: (message: TopicMessage) => void }

export class TopicSubscriptions {
  readonly #byTopic = new Map<string, Subscription[]>()

  /** Adds a subscriber; the returned function removes it and says whether the topic now has none. */
  add (topic: string, onMessage: (message: TopicMessage) => void): () => boolean {
    const subscription: Subscription = { onMessage }
    const list = this.#byTopic.get(topic) ?? []
    list.push(subscription)
    this.#byTopic.set(topic, list)
    return () => {
      const current = this.#byTopic.get(topic)
      const index = current?.indexOf(subscription) ?? -1
      if (current === undefined || index < 0) return false
      current.splice(index, 1)
      if (current.length > 0) return false
      this.#byTopic.delete(topic)
      return true
    }
  }

  has (topic: string): boolean {
    return this.#byTopic.has(topic)
  }

  clear (): void {
    this.#byTopic.clear()
  }

  /**
   * Hands `message` to every subscriber of its topic, each with its own copy of the data,
   * while `live()` holds; returns how many subscribers there were when it started.
   * `onError` hears a subscriber that threw (the others still get the message).
   */
  deliver (message: TopicMessage, live: () => boolean, onError: (error: unknown) => void): number {
    const subscriptions = [...(this.#byTopic.get(message.topic) ?? [])]
    for (const subscription of subscriptions) {
      if (!live() || !this.#byTopic.get(message.topic)?.includes(subscription)) continue
      try {
        subscription.onMessage({ ...message, data: message.data.slice() })
      } catch (error) {
        onError(error)
      }
    }
    return subscriptions.length
  }
}
