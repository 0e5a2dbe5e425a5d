/**
 * Fewer yamux window updates on request channels. @chainsafe/libp2p-yamux 7 sends a
 * window update frame after every chunk the reader takes, however small: on a channel
 * carrying many small requests that is one extra frame (a Noise seal and a socket write)
 * per request and per response, which profiles of the controllers under write load
 * showed as a large share of their busy time. The yamux spec (and Go's yamux) send one
 * only once half the receive window is used up; this makes a stream do that.
 *
 * It reaches into the library's stream object, so it checks the shape first and leaves a
 * stream that does not look like yamux 7's alone (correct, only slower).
 */

import type { StreamMuxerFactory } from '@libp2p/interface'

/** yamux 7's StreamState.Established: the handshake flags (SYN, ACK) are sent. */
const established = 3

interface Yamux7Stream {
  state: number
  recvWindow: number
  recvWindowCapacity: number
  sendWindowUpdate: () => void
}

function isYamux7Stream (stream: unknown): stream is Yamux7Stream {
  const s = stream as Partial<Yamux7Stream> | null
  return typeof s === 'object' && s !== null && typeof s.sendWindowUpdate === 'function' &&
    typeof s.recvWindow === 'number' && typeof s.recvWindowCapacity === 'number' && typeof s.state === 'number'
}

/** Makes `stream` send window updates only when half its receive window is used; false if it is not a yamux 7 stream. */
export function deferWindowUpdates (stream: unknown): boolean {
  if (!isYamux7Stream(stream)) return false
  const update = stream.sendWindowUpdate.bind(stream)
  stream.sendWindowUpdate = () => {
    // Before the handshake flags are out, every update carries them: send as yamux would.
    if (stream.state === established && 2 * stream.recvWindowCapacity > stream.recvWindow) return
    update()
  }
  return true
}

/**
 * A yamux muxer factory (as given to libp2p's `streamMuxers`) whose streams, inbound and
 * outbound, all send window updates as `deferWindowUpdates` makes them: gossipsub's
 * streams carry one small message after another too, and each paid a window update frame
 * in return (a Noise seal and a socket write per message received).
 */
export function withLazyWindowUpdates<C> (factory: (components: C) => StreamMuxerFactory): (components: C) => StreamMuxerFactory {
  return components => {
    const inner = factory(components)
    // Keeps the inner factory's protocol, capabilities and tag; replaces only createStreamMuxer.
    const lazy: StreamMuxerFactory = Object.create(inner)
    lazy.createStreamMuxer = init => {
      const muxer = inner.createStreamMuxer({
        ...init,
        onIncomingStream: stream => {
          deferWindowUpdates(stream)
          init?.onIncomingStream?.(stream)
        }
      })
      const newStream = muxer.newStream.bind(muxer)
      muxer.newStream = name => {
        const stream = newStream(name)
        if (stream instanceof Promise) return stream.then(opened => { deferWindowUpdates(opened); return opened })
        deferWindowUpdates(stream)
        return stream
      }
      return muxer
    }
    return lazy
  }
}
