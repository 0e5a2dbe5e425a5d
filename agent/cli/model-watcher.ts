/**
 * The CLI's watch of the model (what `status --watch`, `wait-for` and `run --wait` wait
 * on): a Juju-style `Next` loop of `model-watch` requests (actors/controller/
 * model-watches.ts) on the link the command already has, each answered by a controller
 * once the model it applied is past the revision this client last read or was told of.
 * Changes are pushed (a held request answered at the commit), never polled, and the CLI
 * joins no gossip for them. A controller that refuses or fails is left for the next
 * member after a pause that doubles up to a bound; one that does not know the op (older
 * than this client) is answered by the gossip notices instead (`fallback`).
 */
import type { ModelWatchReply } from '../../actors/controller/api-requests.ts'
import { limits } from '../../runtime/limits.ts'

export interface ModelWatcherOptions {
  /** The controllers to ask, in order: the first that answers is kept. */
  members: readonly string[]
  /** One `model-watch` request to `peer`; rejects when it cannot be made or answered in `timeoutMs`. */
  ask: (peer: string, since: number, timeoutMs: number) => Promise<ModelWatchReply>
  /** The revision of the last model read; resolves once there has been one. */
  lastRead: () => Promise<number>
  /** Watches by gossip instead; returns what undoes it. */
  fallback: () => () => void
  /** A request's own bound past the controller's hold. */
  requestTimeoutMs: number
}

/** A refusal that names what the controller does know: it predates `model-watch`. */
const unknownOp = /expected a request \{op:/

export function watchModel (options: ModelWatcherOptions, onChange: () => void): () => void {
  let stopped = false
  let undoFallback: (() => void) | undefined
  const run = async (): Promise<void> => {
    let notified = await options.lastRead()
    let member = 0
    let pauseMs: number = limits.cliModelWatchRetryMsMin
    while (!stopped) {
      const since = Math.max(notified, await options.lastRead())
      const peer = options.members[member % options.members.length]!
      try {
        const reply = await options.ask(peer, since, limits.modelWatchHoldMs + options.requestTimeoutMs)
        if (stopped) return
        if (reply.ok) {
          pauseMs = limits.cliModelWatchRetryMsMin
          if (reply.revision > since) {
            notified = reply.revision
            onChange()
          }
          continue
        }
        if (unknownOp.test(reply.error)) {
          undoFallback = options.fallback()
          return
        }
      } catch {
        if (stopped) return
      }
      member++
      await new Promise(resolve => setTimeout(resolve, pauseMs))
      pauseMs = Math.min(2 * pauseMs, limits.cliModelWatchRetryMsMax)
    }
  }
  run().catch(() => {})
  return () => {
    stopped = true
    undoFallback?.()
  }
}
