/**
 * The controller API as a table of operations, one entry per op (api-policy.ts lists
 * them and says who may call each): how the untyped wire body becomes the op's typed
 * request (api-requests.ts), or one line naming the component, what was expected and
 * what arrived; what the request is about, for the policy; and the handler, which gets
 * only the typed request. The compiler proves every op has an entry.
 */
import { describeValue } from '../../runtime/errors.ts'
import type { Entity } from '../../runtime/model/model-types.ts'
import type { IncomingRequest } from '../../runtime/transport.ts'
import { addController, parseAddController } from './api-add-controller.ts'
import { parseRemoveController, removeController } from './api-remove-controller.ts'
import { controllerStatus } from './api-controller-status.ts'
import { controllers } from './api-controllers.ts'
import { parseDebugLogRequest, queryDebugLog } from './api-debug-log.ts'
import { members } from './api-members.ts'
import { parseShipLogsRequest, shipLogs } from './api-ship-logs.ts'
import { parseRevealSecret, parseSecretContent, revealSecret, secretContent } from './api-secrets.ts'
import { applicationStatus, fullModel, goalState, machineModel, machineWatch, register, summary } from './api-model-reads.ts'
import { apiRefusal, type ApiOp } from './api-policy.ts'
import type { ApiReplies, ApiRequests } from './api-requests.ts'
import type { ApiExtras, CharmArchives, IdentifyPeer, MachinePresence } from './controller-api.ts'
import { parseCharmChunkRequest, parseCharmManifestRequest, parsePutCharmBegin, parsePutCharmChunk, parsePutCharmCommit, withCharms } from './api-charms.ts'
import type { ModelReplica } from './model-replica.ts'

const component = 'controller api'

/** A request as it arrived: a map whose `op` named an operation. */
export type WireBody = Readonly<Record<string, unknown>>

/** Why a wire body is not the op's request: the one line the caller gets. */
export interface Invalid {
  readonly invalid: string
}

/** What a handler may use besides its request. */
export interface ApiContext {
  readonly node: ModelReplica
  readonly identify: IdentifyPeer
  readonly request: IncomingRequest
  /** Who the caller is (`identify(request.from)`), admitted by the policy already. */
  readonly caller: Entity | undefined
  readonly charms: CharmArchives | undefined
  readonly presence: MachinePresence | undefined
  readonly extras: ApiExtras
}

export interface ApiOperation<Op extends ApiOp> {
  /** What the request is about, for the policy (the machine, or the leader unit). */
  readonly target?: (body: WireBody) => unknown
  /** The wire body as the typed request; `peer` names the caller in a refusal. */
  readonly parse: (body: WireBody, peer: string) => ApiRequests[Op] | Invalid
  readonly answer: (context: ApiContext, request: ApiRequests[Op]) => ApiReplies[Op] | Promise<ApiReplies[Op]>
}

export function isInvalid<T extends object> (parsed: T | Invalid): parsed is Invalid {
  return 'invalid' in parsed && typeof parsed.invalid === 'string'
}

const machineTarget = (body: WireBody): unknown => body.machine
const isRevision = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0
const unitTarget = (body: WireBody): unknown => body.unit

export const apiOperations: { readonly [Op in ApiOp]: ApiOperation<Op> } = {
  'machine-model': {
    target: machineTarget,
    // A target that is not a machine id is one the caller may not read: it learns nothing more.
    parse: (body, peer) => {
      if (typeof body.machine !== 'string') return { invalid: apiRefusal(component, 'machine-model', peer, body.machine) }
      if (body.since === undefined) return { op: 'machine-model', machine: body.machine }
      if (!Number.isSafeInteger(body.since) || (body.since as number) < 0) {
        return { invalid: `${component}: expected "since" to be a revision (an integer >= 0), got ${describeValue(body.since)}` }
      }
      return { op: 'machine-model', machine: body.machine, since: body.since as number }
    },
    answer: machineModel
  },
  'machine-watch': {
    target: machineTarget,
    parse: (body, peer) => {
      if (typeof body.machine !== 'string') return { invalid: apiRefusal(component, 'machine-watch', peer, body.machine) }
      const bad = ['since', 'revision'].find(key => (key === 'revision' || body[key] !== undefined) && !isRevision(body[key]))
      if (bad !== undefined) return { invalid: `${component}: machine-watch: expected ${JSON.stringify(bad)} to be a revision (an integer >= 0), got ${describeValue(body[bad])}` }
      if (body.push !== undefined && body.push !== true) return { invalid: `${component}: machine-watch: expected "push" to be true or absent, got ${describeValue(body.push)}` }
      const since = body.since === undefined ? {} : { since: body.since as number }
      return { op: 'machine-watch', machine: body.machine, ...since, revision: body.revision as number, ...(body.push === true ? { push: true as const } : {}) }
    },
    answer: machineWatch
  },
  'application-status': {
    target: unitTarget,
    parse: (body, peer) => typeof body.unit === 'string'
      ? { op: 'application-status', unit: body.unit }
      : { invalid: apiRefusal(component, 'application-status', peer, body.unit) },
    answer: applicationStatus
  },
  'goal-state': {
    target: unitTarget,
    parse: (body, peer) => typeof body.unit === 'string'
      ? { op: 'goal-state', unit: body.unit }
      : { invalid: apiRefusal(component, 'goal-state', peer, body.unit) },
    answer: goalState
  },
  'charm-manifest': {
    parse: parseCharmManifestRequest,
    answer: async (context, request) => await withCharms(context, request, async store => ({ ok: true, manifest: (await store.manifest(request.hash, { local: request.local === true })) ?? null }))
  },
  'charm-chunk': {
    parse: parseCharmChunkRequest,
    answer: async (context, request) => await withCharms(context, request, async store => ({ ok: true, bytes: (await store.chunk(request.hash, request.index, { local: request.local === true })) ?? null }))
  },
  'put-charm-begin': {
    parse: parsePutCharmBegin,
    answer: async (context, request) => await withCharms(context, request, async store => ({ ok: true, ...await store.begin(request.manifest) }))
  },
  'put-charm-chunk': {
    parse: parsePutCharmChunk,
    answer: async (context, request) => await withCharms(context, request, async store => {
      await store.putChunk(request.hash, request.index, request.bytes)
      return { ok: true }
    })
  },
  'put-charm-commit': {
    parse: parsePutCharmCommit,
    answer: async (context, request) => await withCharms(context, request, async store => {
      await store.commit(request.hash)
      return { ok: true, hash: request.hash }
    })
  },
  'model-summary': { parse: () => ({ op: 'model-summary' }), answer: summary },
  register: {
    parse: body => typeof body.machine === 'string' && typeof body.secret === 'string'
      ? { op: 'register', machine: body.machine, secret: body.secret }
      : { invalid: `${component}: expected {op: "register", machine, secret} as strings, got ${typeof body.machine} and ${typeof body.secret}` },
    answer: register
  },
  model: { parse: () => ({ op: 'model' }), answer: fullModel },
  'model-watch': {
    parse: body => isRevision(body.since)
      ? { op: 'model-watch', since: body.since as number }
      : { invalid: `${component}: model-watch: expected "since" to be a revision (an integer >= 0), got ${describeValue(body.since)}` },
    answer: async ({ node }, { since }) => await node.modelWatches.watch(since)
  },
  'controller-status': {
    parse: () => ({ op: 'controller-status' }),
    answer: ({ node, identify, request, extras }) => controllerStatus(node, identify, request, extras.version)
  },
  members: {
    parse: () => ({ op: 'members' }),
    answer: ({ node, identify, request, extras }) => members(node, identify, request, extras.presenceTable)
  },
  'add-controller': {
    parse: parseAddController,
    answer: async ({ node }, request) => await addController(node, request)
  },
  'remove-controller': {
    parse: parseRemoveController,
    answer: async ({ node }, request) => await removeController(node, request)
  },
  controllers: {
    parse: () => ({ op: 'controllers' }),
    answer: ({ node, identify, request, extras }) => controllers(node, identify, request, extras.controllerAddresses)
  },
  'debug-log': {
    parse: parseDebugLogRequest,
    answer: ({ node, extras }, request) => queryDebugLog(node.id, request, extras.logs)
  },
  'ship-logs': { parse: parseShipLogsRequest, answer: shipLogs },
  'secret-content': { target: unitTarget, parse: parseSecretContent, answer: secretContent },
  'reveal-secret': { parse: parseRevealSecret, answer: revealSecret }
}

/** The one line for a body that names no operation. */
export function unknownOperation (body: unknown, ops: readonly string[]): string {
  return `${component}: expected a request {op: ${ops.map(op => JSON.stringify(op)).join(' | ')}}, got ${describeValue(body)}`
}
