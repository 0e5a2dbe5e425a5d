/**
 * The controller API's requests and replies, one of each per op (api-policy.ts lists the
 * ops): the server's operation table (api-operations.ts) and every client (the machine
 * agent's controller client, the CLI, the charm fetchers) build and read them from these
 * types, so a request is typed from the caller's hand to the handler. The wire format is
 * the request itself, msgpack-encoded (runtime/codec.ts).
 */
import { decode, encode } from '../../runtime/codec.ts'
import { describeValue } from '../../runtime/errors.ts'
import type { ApplicationStatusReply } from '../../runtime/model/application-status.ts'
import type { ModelContext } from '../../runtime/model/model-types.ts'
import type { RequestOptions, Transport } from '../../runtime/transport.ts'
import type { AddControllerReply } from './api-add-controller.ts'
import type { ControllerStatusReply } from './api-controller-status.ts'
import type { ControllersReply } from './api-controllers.ts'
import type { DebugLogReply, DebugLogRequest } from './api-debug-log.ts'
import type { MembersReply } from './api-members.ts'
import type { ShipLogsReply, ShipLogsRequest } from './api-ship-logs.ts'
import type { ApiOp } from './api-policy.ts'

export interface ApiRequests {
  /**
   * The machine's view of the model (runtime/model/machine-view.ts), for its unit agents;
   * `since`, the revision of the view the agent holds, lets the controller answer
   * `unchanged` (machine-view-cache.ts).
   */
  'machine-model': { op: 'machine-model', machine: string, since?: number }
  /**
   * `status-get --application` for `unit`, its application's leader: the application's
   * status and its units' (at most limits.applicationStatusReplyBytesMax of them).
   * Only the agent of the unit's machine (or a controller) may ask, while the unit holds
   * the lease on the answering controller's clock.
   */
  'application-status': { op: 'application-status', unit: string }
  /**
   * A charm archive by content address. A controller that lacks it fetches it from its
   * peer controllers first (agent/controller/replicated-charm-store.ts); `local: true`
   * asks for this controller's own store only, which is how those peers are asked, so
   * a fetch never goes further than one hop.
   */
  'charm-archive': { op: 'charm-archive', hash: string, local?: boolean }
  /** Admins only: put a charm archive into this controller's store. */
  'put-charm': { op: 'put-charm', bytes: Uint8Array }
  /** Admins only: the revision and the machine ids, read linearizably (status, tests). */
  'model-summary': { op: 'model-summary' }
  /**
   * Anyone: a new machine agent proves its one-time secret (from its bootstrap data); the
   * controllers bind the caller's peer id to the machine. Again by the same peer: ok.
   */
  register: { op: 'register', machine: string, secret: string }
  /** Admins only: the whole model, read linearizably, with each machine agent's presence (status, the CLI). */
  model: { op: 'model' }
  /** Admins and controllers: this controller's Raft state; on the leader each voter's commit lag (api-controller-status.ts). */
  'controller-status': { op: 'controller-status' }
  /** Admins and controllers: the gossip membership this controller sees (api-members.ts). */
  members: { op: 'members' }
  /** Admins only, on the leader: add a joining controller as a Raft voter (api-add-controller.ts). */
  'add-controller': { op: 'add-controller', peer: string }
  /** Any known agent: every voter with the addresses this controller knows (api-controllers.ts). */
  controllers: { op: 'controllers' }
  /** Admins only: the log records this controller keeps, filtered and paged (api-debug-log.ts). */
  'debug-log': DebugLogRequest
  /** Machine agents and controllers: a final batch of log records, acknowledged (api-ship-logs.ts). */
  'ship-logs': ShipLogsRequest
}

/** Any API request. */
export type ApiRequest = ApiRequests[ApiOp]

/**
 * One unit in the model summary. `agentSince` and `agentHeardBy` come from presence
 * whenever it knows the unit's machine agent (alive or lost): since when it has been in
 * that state (ms), and which peer's observation says so.
 */
export interface SummaryUnit {
  workload: string
  message: string
  agent: string
  agentSince?: number
  agentHeardBy?: string
}

export interface SummaryMachine {
  agent: string
  life: string
  instance: string
  /** The instance status's message: the provider's reason while provisioning fails. */
  message: string
  instanceId: string | null
}

export type SummaryReply =
  | { ok: true, revision: number, machines: string[], applications: string[], units: Record<string, SummaryUnit>, machineStatus: Record<string, SummaryMachine> }
  | { ok: false, error: string }

export type FullModelReply =
  | { ok: true, model: ModelContext, presence: Record<string, { status: 'alive' | 'lost', since: number | null, heardBy: string | null }>, leader: string, term: number }
  | { ok: false, error: string }

export type RegisterReply = { ok: true } | { ok: false, error: string }

export type MachineModelReply =
  | { ok: true, model: ModelContext }
  /** The view of revision `since` is still the machine's; the model has moved on to `revision`. */
  | { ok: true, unchanged: true, revision: number, term: number }
  | { ok: false, error: string }

export type CharmReply =
  | { ok: true, bytes: Uint8Array | null, hash?: string }
  | { ok: false, error: string }

export interface ApiReplies {
  'machine-model': MachineModelReply
  'application-status': ApplicationStatusReply
  'charm-archive': CharmReply
  'put-charm': CharmReply
  'model-summary': SummaryReply
  register: RegisterReply
  model: FullModelReply
  'controller-status': ControllerStatusReply
  members: MembersReply
  'add-controller': AddControllerReply
  controllers: ControllersReply
  'debug-log': DebugLogReply
  'ship-logs': ShipLogsReply
}

/** What every reply is at least: ok, or one line saying why not. */
export type ApiReplyBase = { ok: true } | { ok: false, error: string }
export type ApiReply = ApiReplies[ApiOp]
export type ApiSuccess<Op extends ApiOp> = Extract<ApiReplies[Op], { ok: true }>

// The compiler checks that the two maps name exactly the policy's ops, and that every reply has the base shape.
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : never) : never
const requestsNameEveryOp: SameKeys<ApiRequests, Record<ApiOp, unknown>> = true
const repliesNameEveryOp: SameKeys<ApiReplies, Record<ApiOp, unknown>> = true
const repliesHaveTheBase: ApiReply extends ApiReplyBase ? true : never = true
void [requestsNameEveryOp, repliesNameEveryOp, repliesHaveTheBase]

/** A request as it goes on the wire. */
export function encodeApiRequest (request: ApiRequest, component: string): Uint8Array {
  return encode(request, component)
}

/**
 * The reply to a request of `op`, as the server built it from the same types. Only its
 * envelope is checked here (an ok flag, and an error line when not ok): the server is a
 * controller of this model, and the fields were typed where it built them.
 */
export function decodeApiReply<Op extends ApiOp> (op: Op, bytes: Uint8Array, component: string): ApiReplies[Op] {
  const reply = decode(bytes, component)
  if (typeof reply !== 'object' || reply === null || !('ok' in reply) || typeof reply.ok !== 'boolean' ||
    (reply.ok === false && (!('error' in reply) || typeof reply.error !== 'string'))) {
    throw new Error(`${component}: expected a reply {ok, ...} to ${JSON.stringify(op)}, got ${describeValue(reply)}`)
  }
  return reply as ApiReplies[Op]
}

/**
 * Sends `request` to `peer` over `protocol` (the API's, or a model's: model-scope.ts) and
 * reads the reply its op gets. Transport failures reject; a refusal is an `ok: false` reply.
 */
export async function requestApi<Op extends ApiOp> (
  transport: Pick<Transport, 'request'>, peer: string, protocol: string, request: ApiRequests[Op] & { readonly op: Op }, options: RequestOptions & { component: string }
): Promise<ApiReplies[Op]> {
  const data = await transport.request(peer, protocol, encodeApiRequest(request, options.component), { timeoutMs: options.timeoutMs })
  return decodeApiReply(request.op, data, options.component)
}
