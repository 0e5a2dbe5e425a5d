import { randomUUID } from 'node:crypto'
import { CommandProposer } from '../../runtime/model/command-proposer.ts'
import type { ModelReplica } from '../../actors/controller/model-replica.ts'
import type { Logger } from '../../runtime/logger.ts'

/**
 * Gives a model its UUID (JUJU_MODEL_UUID) when it has none: run by the controller that
 * holds the model's singular lease, it proposes `set-model-uuid` with `chosen` (the
 * registry's UUID for a hosted model) or a random v4 UUID (the "default" model, or a
 * model added before models had one). It tries at start and after applied entries until
 * one is applied; the model keeps the first, so a second leader's attempt changes nothing.
 */
export function modelUuidWorker (node: ModelReplica, controllerId: string, chosen: string | undefined, listeners: Set<() => void>, logger: Logger): { stop: () => void } {
  const uuid = chosen !== undefined && chosen !== '' ? chosen : randomUUID()
  const proposer = new CommandProposer({ proposer: { kind: 'controller', id: controllerId }, requestPrefix: `model-uuid/${controllerId}/${uuid}` })
  let inFlight = false
  let stopped = false
  const attempt = (): void => {
    if (stopped || inFlight || node.host.state().uuid !== '') return
    inFlight = true
    proposer.submit(node, { type: 'set-model-uuid', uuid })
      .then(result => { if (!result.ok) logger.log('warning', `cannot set the model's UUID: ${result.error}`) })
      .catch((error: unknown) => { logger.log('debug', `model UUID not set yet: ${error instanceof Error ? error.message : String(error)}`) })
      .finally(() => { inFlight = false })
  }
  listeners.add(attempt)
  attempt()
  return {
    stop: () => {
      stopped = true
      listeners.delete(attempt)
    }
  }
}
