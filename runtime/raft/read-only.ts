import type { NodeId } from './raft-types.ts'

/** A ReadIndex request a leader is confirming its leadership for. */
export interface ReadIndexRequest {
  /** The commit index when the request arrived: the read must wait until it is applied. */
  index: number
  /** Who asked: the leader itself or a follower that forwarded it. */
  from: NodeId
  context: Uint8Array
  /** Voters that answered a heartbeat carrying this request's context. */
  acks: Set<NodeId>
}

export type ReadOnlyAddResult = 'added' | 'duplicate' | 'full'

/**
 * ReadIndex requests waiting for a heartbeat round to confirm the leader still leads
 * (etcd's ReadOnlySafe). Requests are kept in arrival order: an acknowledged heartbeat
 * for one context also confirms every earlier request, since that heartbeat was sent
 * after they arrived.
 */
export class ReadOnly {
  readonly max: number
  #byKey = new Map<string, ReadIndexRequest>()
  #order: string[] = []

  constructor (max: number) {
    this.max = max
  }

  get size (): number {
    return this.#order.length
  }

  add (index: number, from: NodeId, context: Uint8Array): ReadOnlyAddResult {
    const key = contextKey(context)
    if (this.#byKey.has(key)) return 'duplicate'
    if (this.#order.length >= this.max) return 'full'
    this.#byKey.set(key, { index, from, context, acks: new Set() })
    this.#order.push(key)
    return 'added'
  }

  /** Record that `id` answered the heartbeat for `context`; the voters that have so far. */
  recordAck (id: NodeId, context: Uint8Array): ReadonlySet<NodeId> | undefined {
    const request = this.#byKey.get(contextKey(context))
    if (request === undefined) return undefined
    request.acks.add(id)
    return request.acks
  }

  /** Remove and return every request up to and including the one for `context`. */
  release (context: Uint8Array): ReadIndexRequest[] {
    const at = this.#order.indexOf(contextKey(context))
    if (at < 0) return []
    const released = this.#order.slice(0, at + 1).map(key => this.#byKey.get(key)!)
    for (const key of this.#order.slice(0, at + 1)) this.#byKey.delete(key)
    this.#order = this.#order.slice(at + 1)
    return released
  }

  /** The newest pending context: heartbeats carry it so their answers confirm all requests. */
  lastContext (): Uint8Array | undefined {
    const key = this.#order[this.#order.length - 1]
    return key === undefined ? undefined : this.#byKey.get(key)!.context
  }

  reset (): void {
    this.#byKey.clear()
    this.#order = []
  }
}

function contextKey (context: Uint8Array): string {
  let key = ''
  for (const byte of context) key += byte.toString(16).padStart(2, '0')
  return key
}
