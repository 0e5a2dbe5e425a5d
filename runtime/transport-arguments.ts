/**
 * The argument checks every Transport makes at its edge, one copy for the real mesh
 * (agent/mesh/libp2p-transport.ts) and the simulated network (sim/sim-network-transport.ts),
 * so both refuse the same calls with the same errors.
 */
import { InvalidInputError } from './errors.ts'
import { limits } from './limits.ts'
import { PeerUnreachableError, TransportBusyError, type PeerId, type RequestHandler, type RequestOptions } from './transport.ts'

/** A message or request body: bytes, at most limits.transportMessageBytesMax of them. */
export function checkTransportPayload (component: string, data: unknown, what: string): asserts data is Uint8Array {
  if (!(data instanceof Uint8Array)) throw new InvalidInputError(component, `${what} data as a Uint8Array`, data)
  if (data.byteLength > limits.transportMessageBytesMax) {
    throw new InvalidInputError(component, `a ${what} of at most ${limits.transportMessageBytesMax} bytes`, data)
  }
}

export function checkRequestHandler (component: string, handler: unknown): asserts handler is RequestHandler {
  if (typeof handler !== 'function') throw new InvalidInputError(component, 'a request handler function', handler)
}

/** A request's timeout: finite and above zero. */
export function requestTimeoutMsOf (component: string, options: RequestOptions | undefined): number {
  const timeoutMs = options?.timeoutMs
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new InvalidInputError(component, 'a request timeout in ms, finite and > 0', timeoutMs)
  }
  return timeoutMs
}

/**
 * The checks before a request leaves: its body, its timeout (returned), not to itself,
 * and room among the requests in flight (TransportBusyError at once, never a queue).
 */
export function admitRequest (component: string, from: PeerId, peer: PeerId, protocol: string, data: unknown, options: RequestOptions | undefined, inFlight: number): number {
  checkTransportPayload(component, data, 'request')
  const timeoutMs = requestTimeoutMsOf(component, options)
  if (peer === from) throw new PeerUnreachableError(peer, 'a peer cannot send a request to itself')
  if (inFlight >= limits.transportRequestsInFlightMax) throw new TransportBusyError(peer, protocol, limits.transportRequestsInFlightMax)
  return timeoutMs
}

/** The request handlers a transport serves, by protocol. */
export class RequestHandlerTable {
  readonly #component: string
  readonly #handlers = new Map<string, RequestHandler>()

  constructor (component: string) {
    this.#component = component
  }

  /** Serves `protocol` with `handler`, in place of any earlier one. */
  serve (protocol: string, handler: unknown): void {
    checkRequestHandler(this.#component, handler)
    this.#handlers.set(protocol, handler)
  }

  /** Harmless after stop: the handlers are gone already. */
  drop (protocol: string): void {
    this.#handlers.delete(protocol)
  }

  get (protocol: string): RequestHandler | undefined {
    return this.#handlers.get(protocol)
  }

  clear (): void {
    this.#handlers.clear()
  }
}
