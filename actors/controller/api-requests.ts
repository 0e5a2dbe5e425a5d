/**
 * The controller API's requests and replies, one of each per op (api-policy.ts lists the
 * ops): the server's operation table (api-operations.ts) and every client (the machine
 * agent's controller client, the CLI, the charm fetchers) build and read them from these
 * types, so a request is typed from the caller's hand to the handler. The wire format is
 * the request itself, msgpack-encoded (runtime/codec.ts).
 */
import type { CharmManifest, CharmUploadState } from '../../runtime/charm/charm-manifest.ts'
import { decode, encode } from '../../runtime/codec.ts'
import { describeValue } from '../../runtime/errors.ts'
import type { ApplicationStatusReply } from '../../runtime/model/application-status.ts'
import type { GoalState } from '../../runtime/model/goal-state.ts'
import type { ViewChanges } from '../../runtime/model/machine-view.ts'
import type { ModelContext } from '../../runtime/model/model-types.ts'
import type { RequestOptions, Transport } from '../../runtime/transport.ts'
import type { AddControllerReply } from './api-add-controller.ts'
import type { RemoveControllerReply } from './api-remove-controller.ts'
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
   * A watch of the machine's view (machine-watches.ts): answered, like `machine-model`,
   * once the view at this controller differs from the one of revision `since`, and never
   * at a revision below `revision`, the one the agent has reached; held until then, or
   * answered `unchanged` after limits.machineWatchHoldMs. With `push`, where the transport
   * carries pushes (IncomingRequest.push), each later change of the view is pushed on the
   * same request as it happens, and the answer comes only when the hold ends (or the watch
   * is refused, replaced or cannot push): one message per change instead of an answer and
   * a new watch. A controller that predates `push` ignores it and answers once.
   */
  'machine-watch': { op: 'machine-watch', machine: string, since?: number, revision: number, push?: true }
  /**
   * `status-get --application` for `unit`, its application's leader: the application's
   * status and its units' (at most limits.applicationStatusReplyBytesMax of them).
   * Only the agent of the unit's machine (or a controller) may ask, while the unit holds
   * the lease on the answering controller's clock.
   */
  'application-status': { op: 'application-status', unit: string }
  /**
   * `goal-state` for `unit` (runtime/model/goal-state.ts), from the whole model: only the
   * agent of the unit's machine (or a controller) may ask.
   */
  'goal-state': { op: 'goal-state', unit: string }
  /** `secret-get` for `unit`: by id or label, `refresh` or `peek` (api-secrets.ts). */
  'secret-content': { op: 'secret-content', unit: string, id?: string, label?: string, refresh?: boolean, peek?: boolean }
  /** Admins only: `show-secret --reveal`, a revision's content (the latest by default). */
  'reveal-secret': { op: 'reveal-secret', id: string, revision?: number }
  /**
   * A charm archive's manifest by content address (runtime/charm/charm-manifest.ts): its
   * size and chunk hashes. A controller that lacks the archive fetches it from its peer
   * controllers first, chunk by chunk (agent/controller/replicated-charm-store.ts);
   * `local: true` asks for this controller's own store only, which is how those peers are
   * asked, so a fetch never goes further than one hop.
   */
  'charm-manifest': { op: 'charm-manifest', hash: string, local?: boolean } & StoreSelector
  /** One chunk of a charm archive (at most limits.charmChunkBytesMax), as `charm-manifest` finds it. */
  'charm-chunk': { op: 'charm-chunk', hash: string, index: number, local?: boolean } & StoreSelector
  /** Admins only: begin (or resume) an upload; the reply lists the chunks still to send. */
  'put-charm-begin': { op: 'put-charm-begin', manifest: CharmManifest } & StoreSelector
  /** Admins only: one chunk of an upload begun on this controller, checked against its manifest. */
  'put-charm-chunk': { op: 'put-charm-chunk', hash: string, index: number, bytes: Uint8Array } & StoreSelector
  /**
   * Admins only: the whole archive checked against its hash and made readable; answered
   * once a majority of the controllers hold it, so any of them can serve it after a failover.
   */
  'put-charm-commit': { op: 'put-charm-commit', hash: string } & StoreSelector
  /** Admins only: the revision and the machine ids, read linearizably (status, tests). */
  'model-summary': { op: 'model-summary' }
  /**
   * Anyone: a new machine agent proves its one-time secret (from its bootstrap data); the
   * controllers bind the caller's peer id to the machine. Again by the same peer: ok.
   */
  register: { op: 'register', machine: string, secret: string }
  /** Admins only: the whole model, read linearizably, with each machine agent's presence (status, the CLI). */
  model: { op: 'model' }
  /**
   * Admins only: answered once the model this controller applied is past revision `since`
   * (at once if it is), else with its own revision after limits.modelWatchHoldMs
   * (model-watches.ts). What `status --watch` and `wait-for` wait on.
   */
  'model-watch': { op: 'model-watch', since: number }
  /** Admins and controllers: this controller's Raft state; on the leader each voter's commit lag (api-controller-status.ts). */
  'controller-status': { op: 'controller-status' }
  /** Admins and controllers: the gossip membership this controller sees (api-members.ts). */
  members: { op: 'members' }
  /** Admins only, on the leader: add a joining controller as a Raft voter (api-add-controller.ts). */
  'add-controller': { op: 'add-controller', peer: string }
  /** Admins only, on the leader: remove a voter that is down (api-remove-controller.ts, enable-ha). */
  'remove-controller': { op: 'remove-controller', peer: string }
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

/** The revision this controller applied: past the watch's `since` when the model moved, else the hold ran out. */
export type ModelWatchReply = { ok: true, revision: number } | { ok: false, error: string }

export type FullModelReply =
  | { ok: true, model: ModelContext, presence: Record<string, { status: 'alive' | 'lost', since: number | null, heardBy: string | null }>, leader: string, term: number }
  | { ok: false, error: string }

export type RegisterReply = { ok: true } | { ok: false, error: string }

export type MachineModelReply =
  | { ok: true, model: ModelContext }
  /** The view of revision `since` is still the machine's; the model has moved on to `revision`. */
  | { ok: true, unchanged: true, revision: number, term: number }
  /**
   * The view at `changed.revision`, given as what differs from the view of revision
   * `since` the agent holds: the parts not in `changed` are as they were there.
   */
  | { ok: true, since: number, changed: ViewChanges }
  | { ok: false, error: string }

export type GoalStateReply =
  | { ok: true, goalState: GoalState }
  | { ok: false, error: string }

/**
 * Which content-addressed store the five charm operations address: the charm archives
 * (absent) or the agent bundles (`store: 'agent'`, agent/tools/agent-bundle.ts), which
 * are kept, replicated, fetched and checked exactly as charm archives are.
 */
export interface StoreSelector { store?: 'agent' }

export type CharmManifestReply =
  | { ok: true, manifest: CharmManifest | null }
  | { ok: false, error: string }

export type CharmChunkReply =
  | { ok: true, bytes: Uint8Array | null }
  | { ok: false, error: string }

export type CharmUploadReply =
  | ({ ok: true } & CharmUploadState)
  | { ok: false, error: string }

export type CharmCommitReply =
  | { ok: true, hash: string }
  | { ok: false, error: string }

export type CharmChunkPutReply = { ok: true } | { ok: false, error: string }

export type SecretContentReply =
  | { ok: true, id: string, revision: number, content: Record<string, string> }
  | { ok: false, error: string }

export type RevealSecretReply =
  | { ok: true, revision: number, content: Record<string, string> }
  | { ok: false, error: string }

export interface ApiReplies {
  'secret-content': SecretContentReply
  'reveal-secret': RevealSecretReply
  'machine-model': MachineModelReply
  'machine-watch': MachineModelReply
  'application-status': ApplicationStatusReply
  'goal-state': GoalStateReply
  'charm-manifest': CharmManifestReply
  'charm-chunk': CharmChunkReply
  'put-charm-begin': CharmUploadReply
  'put-charm-chunk': CharmChunkPutReply
  'put-charm-commit': CharmCommitReply
  'model-summary': SummaryReply
  register: RegisterReply
  model: FullModelReply
  'model-watch': ModelWatchReply
  'controller-status': ControllerStatusReply
  members: MembersReply
  'add-controller': AddControllerReply
  'remove-controller': RemoveControllerReply
  controllers: ControllersReply
  'debug-log': DebugLogReply
  'ship-logs': ShipLogsReply
}

/** What every reply is at least: ok, or one line saying why not. */
export type ApiReplyBase = { ok: true } | { ok: false, error: string }
export type ApiReply = ApiReplies[ApiOp]
/** Each op's success, as a mapped type: indexed by a generic op it stays deferred (a plain Extract over the union of every reply is more than the compiler will expand, TS2590). */
type ApiSuccesses = { readonly [Op in ApiOp]: Extract<ApiReplies[Op], { ok: true }> }
export type ApiSuccess<Op extends ApiOp> = ApiSuccesses[Op]

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
  const data = await transport.request(peer, protocol, encodeApiRequest(request, options.component), options.onPush === undefined ? { timeoutMs: options.timeoutMs } : { timeoutMs: options.timeoutMs, onPush: options.onPush })
  return decodeApiReply(request.op, data, options.component)
}
