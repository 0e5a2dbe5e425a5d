/**
 * The argument checks every Transport makes at its edge, one copy for the real mesh
 * (agent/mesh/libp2p-transport.ts) and the simulated network (sim/sim-network-transport.ts),
 * so both refuse the same calls with the same errors.
 */
import { InvalidInputError } from './errors.ts'
import { limits } from './limits.ts'
import type { RequestHandler, RequestOptions } from './transport.ts'

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
