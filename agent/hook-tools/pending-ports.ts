/**
 * The ports a hook sees (`opened-ports`): what the unit had opened before the hook, with
 * the hook's own open-port and close-port calls applied in order. Juju 3 merges the hook
 * context's pending changes into what opened-ports lists
 * (internal/worker/uniter/runner/context/ports.go, OpenedUnitPortRanges →
 * mergeWithPendingChanges, and core/network GroupedPortRanges.MergePendingOpenPortRanges /
 * MergePendingClosePortRanges), and the ops project's integration test
 * (canonical/operator test/integration/test_hookcmds.py, test_ports_open_close_cycle)
 * asserts exactly that against real Juju: a port opened earlier in the same hook is
 * listed, one closed earlier is not.
 *
 * Changes apply per (endpoint, range) pair, as Juju records them: closing a range for one
 * endpoint leaves it open for the others, and closing it for endpoint `a` does not touch
 * an opening for all endpoints (`*`). Replaying the calls in order gives what Juju's
 * cancel-then-merge gives: an open cancels an earlier close of the same pair and the
 * other way round.
 */
import type { OpenedPort, PortRange } from './hook-context.ts'

export interface PortChange {
  readonly op: 'open' | 'close'
  readonly port: PortRange
  /** `['*']` for all endpoints. */
  readonly endpoints: readonly string[]
}

function rangeKey (port: PortRange): string {
  return `${port.protocol}:${port.from ?? ''}:${port.to ?? ''}`
}

export function portsSeenByHook (committed: readonly OpenedPort[], changes: readonly PortChange[]): OpenedPort[] {
  const ranges = new Map<string, PortRange>()
  const pairs = new Map<string, Set<string>>()
  const endpointsOf = (port: PortRange): Set<string> => {
    const key = rangeKey(port)
    if (!ranges.has(key)) ranges.set(key, { ...port })
    let set = pairs.get(key)
    if (set === undefined) {
      set = new Set()
      pairs.set(key, set)
    }
    return set
  }
  for (const port of committed) for (const endpoint of port.endpoints) endpointsOf(port).add(endpoint)
  for (const change of changes) {
    const set = endpointsOf(change.port)
    for (const endpoint of change.endpoints) {
      if (change.op === 'open') set.add(endpoint)
      else set.delete(endpoint)
    }
  }
  const out: OpenedPort[] = []
  for (const [key, set] of pairs) {
    if (set.size === 0) continue
    out.push({ ...ranges.get(key)!, endpoints: [...set].sort() })
  }
  return out
}
