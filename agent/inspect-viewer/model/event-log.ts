import { applyMessage, copyViewState, emptyViewState, type ViewState } from './view-state.ts'
import type { InspectMessage, UnsequencedMessage } from './inspect-message.ts'

/** A checkpoint of the folded state is kept every this many messages, so stepping back replays at most that many. */
export const checkpointEvery = 500
/** Messages the viewer keeps; older ones are forgotten (the state they built is kept as the base). */
export const eventLogMax = 500_000

/**
 * The merged inspection log of the whole mesh, in arrival order, and the state after
 * any message of it (time travel): `stateAt(k)` replays from the nearest checkpoint.
 */
export class EventLog {
  readonly messages: InspectMessage[] = []
  /** checkpoints[i] is the state after message (i + 1) * checkpointEvery - 1 - base. */
  private checkpoints: ViewState[] = []
  private head: ViewState = emptyViewState()
  /** The state before messages[0] (non-empty once old messages were forgotten). */
  private base: ViewState = emptyViewState()
  private nextSeq = 0

  /** Appends a message (its `seq` is assigned here) and returns it. */
  append (message: UnsequencedMessage): InspectMessage {
    const full = { ...message, seq: this.nextSeq++ } as InspectMessage
    this.messages.push(full)
    applyMessage(this.head, full)
    if (this.messages.length % checkpointEvery === 0) this.checkpoints.push(copyViewState(this.head))
    if (this.messages.length > eventLogMax) this.forgetOldest()
    return full
  }

  get length (): number { return this.messages.length }

  /** The state now (after the last message). */
  get latest (): ViewState { return this.head }

  /** The state after message index `k` (0-based in `messages`); -1 gives the base. */
  stateAt (k: number): ViewState {
    if (k >= this.messages.length - 1) return this.head
    if (k < 0) return this.base
    const slot = Math.floor((k + 1) / checkpointEvery) - 1
    const from = slot >= 0 ? this.checkpoints[slot] : undefined
    const state = copyViewState(from ?? this.base)
    const start = from === undefined ? 0 : (slot + 1) * checkpointEvery
    for (let i = start; i <= k; i++) applyMessage(state, this.messages[i]!)
    return state
  }

  private forgetOldest (): void {
    // Drop a whole checkpoint's worth at once, so checkpoints stay aligned to the kept messages.
    const first = this.checkpoints.shift()
    if (first === undefined) return
    this.messages.splice(0, checkpointEvery)
    this.base = first
  }
}

/**
 * Merges recorded logs (each in its own order) into one, by time; on equal times the
 * earlier log and then the earlier line go first, so the merge is stable and repeatable.
 */
export function mergeByTime<T extends { at: number }> (logs: ReadonlyArray<readonly T[]>): T[] {
  const tagged = logs.flatMap((log, source) => log.map((message, line) => ({ message, source, line })))
  tagged.sort((a, b) => a.message.at - b.message.at || a.source - b.source || a.line - b.line)
  return tagged.map(t => t.message)
}
