import type { Clock } from '../clock.ts'
import type { Transport } from '../transport.ts'
import type { RawNode } from './raw-node.ts'

/**
 * Hands the transport's closed connections to the Raft core (RawNode.connectionClosed) and,
 * when the core answers that its leader's connection closed, calls campaignAfterClose after
 * the fraction of a heartbeat the core drew. `input` runs a step against the core as the host
 * runs every input: due ticks taken first, Readies handled after; it does nothing once the
 * host stopped. Returns the unsubscribe, or undefined when the transport cannot tell closes
 * (then only the election timeout finds a dead leader).
 */
export function watchLeaderCloses (transport: Transport, clock: Clock, tickMs: number, node: RawNode, input: (step: () => void) => void): (() => void) | undefined {
  return transport.onPeerDisconnected?.(peer => {
    input(() => {
      const afterTicks = node.connectionClosed(peer)
      if (afterTicks !== undefined) clock.setTimeout(() => { input(() => { node.campaignAfterClose() }) }, afterTicks * tickMs)
    })
  })
}
