/**
 * How a machine agent's final log batch reaches a controller with an answer (the
 * `ship-logs` API op, actors/controller/api-ship-logs.ts): one request per controller in
 * turn, starting with the one that answered last, until one keeps the batch. The log
 * shipper (log-shipper.ts) bounds the whole wait; each request is bounded too, so a dead
 * controller costs one timeout, not the whole budget.
 */
import { requestApi } from '../actors/controller/api-requests.ts'
import { controllerApiProtocol } from '../actors/controller/controller-api.ts'
import type { LogEntry } from '../runtime/logs/log-entry.ts'
import type { Transport } from '../runtime/transport.ts'

const component = 'log shipper'
/** Per controller asked: well below the shipper's whole bound, so a second controller gets its turn. */
const requestTimeoutMs = 2_000

/**
 * `transport` is scoped to the agent's model (model-scope.ts); `controllers` is read on
 * every call, since the agent follows the group's membership into the same array.
 */
export function controllerLogDelivery (transport: Pick<Transport, 'request'>, controllers: readonly string[]): (records: readonly LogEntry[]) => Promise<void> {
  let preferred: string | undefined
  return async records => {
    const order = [...new Set([...(preferred === undefined ? [] : [preferred]), ...controllers])]
    let last = 'no controller is known'
    for (const peer of order) {
      try {
        const reply = await requestApi(transport, peer, controllerApiProtocol, { op: 'ship-logs', records: [...records] }, { component, timeoutMs: requestTimeoutMs })
        if (reply.ok) {
          preferred = peer
          return
        }
        last = reply.error
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
      }
    }
    throw new Error(`${component}: no controller kept the final batch: ${last}`)
  }
}
