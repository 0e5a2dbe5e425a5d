/**
 * The writing side of a request channel: a queue of frames drained into a libp2p
 * stream's `sink`, which pulls the next chunk only once the previous one was handed to
 * yamux (within its send window). Each frame may carry an `onWritten` callback that runs
 * at that moment: the channels count a request as theirs until then, which bounds what a
 * peer that stops reading can make us queue (backpressure without an unbounded buffer).
 *
 * Small frames queued together leave as one chunk (up to
 * limits.transportChannelWriteCoalesceBytesMax): one yamux frame and one Noise seal
 * instead of many under load.
 */
import { limits } from '../../runtime/limits.ts'

/** Written entries a queue keeps at its front before it drops them. */
const compactAfter = 64

interface Queued {
  readonly bytes: Uint8Array
  readonly onWritten: (() => void) | undefined
}

export class FrameWriter {
  readonly #queue: Queued[] = []
  #head = 0
  #closed = false
  #wake: (() => void) | undefined

  /** Queues a frame; ignored once closed (the channel is going away and fails its requests itself). */
  write (bytes: Uint8Array, onWritten?: () => void): void {
    if (this.#closed) return
    this.#queue.push({ bytes, onWritten })
    this.#wakeUp()
  }

  /** Ends the source once what is queued is written; with `drop`, at once. */
  close (drop = false): void {
    this.#closed = true
    if (drop) this.#queue.length = this.#head = 0
    this.#wakeUp()
  }

  /** What to hand to `stream.sink`, once. */
  async * source (): AsyncGenerator<Uint8Array, void, undefined> {
    for (;;) {
      while (this.#head === this.#queue.length) {
        if (this.#closed) return
        await new Promise<void>(resolve => { this.#wake = resolve })
      }
      const batch = this.#takeBatch()
      yield batch.length === 1 ? batch[0]!.bytes : join(batch)
      // The sink asked for more: the batch is with yamux.
      for (const item of batch) item.onWritten?.()
    }
  }

  #takeBatch (): Queued[] {
    const batch = [this.#queue[this.#head++]!]
    let bytes = batch[0]!.bytes.byteLength
    while (this.#head < this.#queue.length) {
      const next = this.#queue[this.#head]!
      if (bytes + next.bytes.byteLength > limits.transportChannelWriteCoalesceBytesMax) break
      batch.push(next)
      bytes += next.bytes.byteLength
      this.#head++
    }
    if (this.#head === this.#queue.length) {
      this.#queue.length = this.#head = 0
    } else if (this.#head > compactAfter && 2 * this.#head > this.#queue.length) {
      // A queue that never runs empty drops what it wrote now and then, not never.
      this.#queue.splice(0, this.#head)
      this.#head = 0
    }
    return batch
  }

  #wakeUp (): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}

function join (batch: readonly Queued[]): Uint8Array {
  let total = 0
  for (const item of batch) total += item.bytes.byteLength
  const joined = new Uint8Array(total)
  let offset = 0
  for (const item of batch) {
    joined.set(item.bytes, offset)
    offset += item.bytes.byteLength
  }
  return joined
}
