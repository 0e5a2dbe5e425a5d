/**
 * The API machine agents use (DESIGN.md §5, §10), a request protocol over the
 * Transport. `machine-model` answers a machine agent with its machine's view of the
 * model (runtime/model/machine-view.ts: every unit on it, with what their hooks may
 * read), read linearizably (ReadIndex) so it is at least as new as any notice the agent
 * has seen. Only the agent of that machine may ask: the caller's peer id is mapped to an
 * entity by `identify`, and anything else is refused with a one-line reason. One answer
 * for all units of a machine keeps an agent with many units at one round trip.
 * `application-status` answers a leader's `status-get --application` from the whole model
 * (runtime/model/application-status.ts), as Juju's uniter asks its controller: the view
 * carries only the machine's own units.
 */
import type { CharmManifest, CharmUploadState } from '../../runtime/charm/charm-manifest.ts'
import { decode, encode } from '../../runtime/codec.ts'
import type { Entity } from '../../runtime/model/model-types.ts'
import type { IncomingRequest } from '../../runtime/transport.ts'
import type { ModelReplica } from './model-replica.ts'
import type { ControllerAddresses } from './api-controllers.ts'
import type { PresenceTable } from './api-members.ts'
import type { LogRing } from '../../runtime/logs/log-ring.ts'
import { apiOperations, isInvalid, unknownOperation, type ApiContext, type ApiOperation, type WireBody } from './api-operations.ts'
import { apiOps, apiPermits, apiRefusal, isApiOp, type ApiOp } from './api-policy.ts'
import type { ApiReplies, ApiReply } from './api-requests.ts'
import { isPlainRecord } from '../../runtime/model/charm-summary.ts'

export type { ApplicationStatusReply } from '../../runtime/model/application-status.ts'
export type { ApiRequest, CharmChunkReply, CharmManifestReply, FullModelReply, MachineModelReply, RegisterReply, SummaryMachine, SummaryReply, SummaryUnit } from './api-requests.ts'

export { controllerApiProtocol } from './api-protocols.ts'

const component = 'controller api'

/**
 * Where this controller keeps charm archives, chunk by chunk (runtime/charm/
 * charm-manifest.ts; agent/controller/replicated-charm-store.ts in the agent).
 */
export interface CharmArchives {
  /** With `local`, only what this controller holds itself: never ask anyone else. */
  manifest (hash: string, options?: { local?: boolean }): Promise<CharmManifest | undefined>
  chunk (hash: string, index: number, options?: { local?: boolean }): Promise<Uint8Array | undefined>
  begin (manifest: CharmManifest): Promise<CharmUploadState>
  putChunk (hash: string, index: number, bytes: Uint8Array): Promise<void>
  commit (hash: string): Promise<void>
}

/** Whether a machine agent is heard from (runtime/presence), for the units' agent status. */
export type MachinePresence = (machine: string) => { status: 'alive' | 'lost', since: number | undefined, heardBy: string | undefined }

/** What the ops about the controllers themselves need beyond the node: its version and presence table. */
export interface ApiExtras {
  version?: string
  presenceTable?: PresenceTable
  controllerAddresses?: ControllerAddresses
  /** The log records this controller keeps (debug-log). */
  logs?: LogRing
  /** The agent bundles this controller keeps (`store: 'agent'` on the charm operations). */
  agentBinaries?: CharmArchives
}

/** Who a peer is, from its (authenticated) peer id; undefined for strangers. */
export type IdentifyPeer = (peerId: string) => Entity | undefined

export async function serveApiRequest (node: ModelReplica, identify: IdentifyPeer, request: IncomingRequest, charms?: CharmArchives, presence?: MachinePresence, extras: ApiExtras = {}): Promise<Uint8Array> {
  return encode(await answer(node, identify, request, charms, presence, extras), component)
}

async function answer (node: ModelReplica, identify: IdentifyPeer, request: IncomingRequest, charms: CharmArchives | undefined, presence: MachinePresence | undefined, extras: ApiExtras): Promise<ApiReply> {
  let body: unknown
  try {
    body = decode(request.data, component)
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
  if (!isPlainRecord(body) || !isApiOp(body.op)) return { ok: false, error: unknownOperation(body, apiOps) }
  const caller = identify(request.from)
  return await perform(body.op, body, { node, identify, request, caller, charms, presence, extras })
}

/** One op from its table entry: the policy first, then the request typed, then its handler. */
async function perform<Op extends ApiOp> (op: Op, body: WireBody, context: ApiContext): Promise<ApiReply> {
  const operation: ApiOperation<Op> = apiOperations[op]
  // The policy table first: a refused caller learns nothing, not even whether its target exists.
  const target = operation.target?.(body)
  if (!apiPermits(op, context.caller, target)) return { ok: false, error: apiRefusal(component, op, context.request.from, target) }
  const parsed = operation.parse(body, context.request.from)
  if (isInvalid(parsed)) return { ok: false, error: parsed.invalid }
  return await operation.answer(context, parsed)
}

/** What a request is about, for the policy table and its refusal: the machine, or the leader unit. */
export function apiTarget (op: string, body: unknown): unknown {
  if (!isPlainRecord(body) || !isApiOp(op)) return undefined
  return apiOperations[op].target?.(body)
}
