/**
 * The API machine agents use (DESIGN.md §5, §10), a request protocol over the
 * Transport. One request, `machine-view`, answers a machine agent with the remote state
 * of every unit the model assigns to its machine, read linearizably (ReadIndex) so it is
 * at least as new as any notice the agent has seen. Only the agent of that machine may
 * ask: the caller's peer id is mapped to an entity by `identify`, and anything else is
 * refused with a one-line reason. Batching all units of a machine in one answer keeps an
 * agent with many units at one round trip.
 */
import { decode, encode } from '../../runtime/codec.ts'
import { limits } from '../../runtime/limits.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { Entity } from '../../runtime/model/model-types.ts'
import { remoteStateFor } from '../../runtime/model/remote-state-view.ts'
import { tableKeys } from '../../runtime/model/table.ts'
import type { RemoteState } from '../../runtime/unit-remote-state.ts'
import type { IncomingRequest } from '../../runtime/transport.ts'
import type { ControllerNode } from './controller-node.ts'

export const controllerApiProtocol = 'cantrip/api/1'
const component = 'controller api'

export type ApiRequest =
  | { op: 'machine-view', machine: string }
  /** Admins only: the revision and the machine ids, read linearizably (status, tests). */
  | { op: 'model-summary' }

export type ApiReply =
  | { ok: true, revision: number, units: Record<string, RemoteState> }
  | { ok: false, error: string }

export type SummaryReply =
  | { ok: true, revision: number, machines: string[], applications: string[] }
  | { ok: false, error: string }

/** Who a peer is, from its (authenticated) peer id; undefined for strangers. */
export type IdentifyPeer = (peerId: string) => Entity | undefined

export async function serveApiRequest (node: ControllerNode, identify: IdentifyPeer, request: IncomingRequest): Promise<Uint8Array> {
  return encode(await answer(node, identify, request), component)
}

async function answer (node: ControllerNode, identify: IdentifyPeer, request: IncomingRequest): Promise<ApiReply | SummaryReply> {
  let body: unknown
  try {
    body = decode(request.data, component)
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
  if (typeof body === 'object' && body !== null && (body as { op?: unknown }).op === 'model-summary') return await summary(node, identify, request)
  if (typeof body !== 'object' || body === null || (body as { op?: unknown }).op !== 'machine-view' || typeof (body as { machine?: unknown }).machine !== 'string') {
    return { ok: false, error: `${component}: expected a request {op: "machine-view", machine}, got ${JSON.stringify(body)?.slice(0, 200)}` }
  }
  const machine = (body as { machine: string }).machine
  const caller = identify(request.from)
  if (caller === undefined || caller.kind !== 'machine' || caller.id !== machine) {
    return { ok: false, error: `${component}: permission denied: peer "${request.from}" may not read machine ${JSON.stringify(machine)}` }
  }
  let model
  try {
    model = await node.read()
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
  const units: Record<string, RemoteState> = {}
  const assigned = readerOf(model).machine(machine)?.units ?? []
  for (const unit of assigned.slice(0, limits.apiUnitsPerMachineMax)) {
    const state = remoteStateFor(model, unit, node.clock.now())
    if (state !== undefined) units[unit] = state
  }
  return { ok: true, revision: model.revision, units }
}

async function summary (node: ControllerNode, identify: IdentifyPeer, request: IncomingRequest): Promise<SummaryReply> {
  const caller = identify(request.from)
  if (caller === undefined || (caller.kind !== 'user' && caller.kind !== 'controller')) {
    return { ok: false, error: `${component}: permission denied: peer "${request.from}" may not read the model summary` }
  }
  try {
    const model = await node.read()
    const reader = readerOf(model)
    const machines = tableKeys(model.machines).filter(id => reader.machine(id) !== undefined)
    return { ok: true, revision: model.revision, machines, applications: tableKeys(model.applications) }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}
