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
import { decode, encode } from '../../runtime/codec.ts'
import { describeValue } from '../../runtime/errors.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import { machineModelView } from '../../runtime/model/machine-view.ts'
import { leaderApplicationStatus, type ApplicationStatusReply } from '../../runtime/model/application-status.ts'
import type { Entity, ModelContext } from '../../runtime/model/model-types.ts'
import { tableEntries, tableKeys } from '../../runtime/model/table.ts'
import type { IncomingRequest } from '../../runtime/transport.ts'
import type { ControllerNode } from './controller-node.ts'
import { addController, type AddControllerReply } from './api-add-controller.ts'
import { controllerStatus, type ControllerStatusReply } from './api-controller-status.ts'
import { members, type MembersReply, type PresenceTable } from './api-members.ts'
import { controllers, type ControllerAddresses, type ControllersReply } from './api-controllers.ts'
import { answerDebugLog, type DebugLogReply } from './api-debug-log.ts'
import type { LogRing } from '../../runtime/logs/log-ring.ts'
import { apiPermits, apiRefusal, isApiOp } from './api-policy.ts'
import { fullModelView } from './full-model-view.ts'

export const controllerApiProtocol = 'cantrip/api/1'
const component = 'controller api'

export type ApiRequest =
  /** The machine's view of the model (runtime/model/machine-view.ts), for its unit agents. */
  | { op: 'machine-model', machine: string }
  /**
   * `status-get --application` for `unit`, its application's leader: the application's
   * status and its units' (at most limits.applicationStatusReplyBytesMax of them).
   * Only the agent of the unit's machine (or a controller) may ask, while the unit holds
   * the lease on the answering controller's clock.
   */
  | { op: 'application-status', unit: string }
  /**
   * A charm archive by content address. A controller that lacks it fetches it from its
   * peer controllers first (agent/controller/replicated-charm-store.ts); `local: true`
   * asks for this controller's own store only, which is how those peers are asked, so
   * a fetch never goes further than one hop.
   */
  | { op: 'charm-archive', hash: string, local?: boolean }
  /** Admins only: put a charm archive into this controller's store. */
  | { op: 'put-charm', bytes: Uint8Array }
  /** Admins only: the revision and the machine ids, read linearizably (status, tests). */
  | { op: 'model-summary' }
  /**
   * Anyone: a new machine agent proves its one-time secret (from its bootstrap data); the
   * controllers bind the caller's peer id to the machine. Again by the same peer: ok.
   */
  | { op: 'register', machine: string, secret: string }
  /** Admins only: the whole model, read linearizably, with each machine agent's presence (status, the CLI). */
  | { op: 'model' }
  /** Admins and controllers: this controller's Raft state; on the leader each voter's commit lag (api-controller-status.ts). */
  | { op: 'controller-status' }
  /** Admins and controllers: the gossip membership this controller sees (api-members.ts). */
  | { op: 'members' }
  /** Admins only, on the leader: add a joining controller as a Raft voter (api-add-controller.ts). */
  | { op: 'add-controller', peer: string }
  /** Any known agent: every voter with the addresses this controller knows (api-controllers.ts). */
  | { op: 'controllers' }
  /** Admins only: the log records this controller keeps, filtered and paged (api-debug-log.ts). */
  | { op: 'debug-log', after?: number, lines?: number }

export type FullModelReply =
  | { ok: true, model: ModelContext, presence: Record<string, { status: 'alive' | 'lost', since: number | null, heardBy: string | null }>, leader: string, term: number }
  | { ok: false, error: string }

export type RegisterReply = { ok: true } | { ok: false, error: string }

export type MachineModelReply =
  | { ok: true, model: ModelContext }
  | { ok: false, error: string }

export type { ApplicationStatusReply }

export type CharmReply =
  | { ok: true, bytes: Uint8Array | null, hash?: string }
  | { ok: false, error: string }

/** Where this controller keeps charm archives (agent/controller/charm-store.ts in the agent). */
export interface CharmArchives {
  /** With `local`, only what this controller holds itself: never ask anyone else. */
  get (hash: string, options?: { local?: boolean }): Promise<Uint8Array | undefined>
  put (bytes: Uint8Array): Promise<string>
}

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

/** Whether a machine agent is heard from (runtime/presence), for the units' agent status. */
export type MachinePresence = (machine: string) => { status: 'alive' | 'lost', since: number | undefined, heardBy: string | undefined }

/** What the ops about the controllers themselves need beyond the node: its version and presence table. */
export interface ApiExtras {
  version?: string
  presenceTable?: PresenceTable
  controllerAddresses?: ControllerAddresses
  /** The log records this controller keeps (debug-log). */
  logs?: LogRing
}

/** Who a peer is, from its (authenticated) peer id; undefined for strangers. */
export type IdentifyPeer = (peerId: string) => Entity | undefined

export async function serveApiRequest (node: ControllerNode, identify: IdentifyPeer, request: IncomingRequest, charms?: CharmArchives, presence?: MachinePresence, extras: ApiExtras = {}): Promise<Uint8Array> {
  return encode(await answer(node, identify, request, charms, presence, extras), component)
}

async function answer (node: ControllerNode, identify: IdentifyPeer, request: IncomingRequest, charms: CharmArchives | undefined, presence: MachinePresence | undefined, extras: ApiExtras): Promise<SummaryReply | MachineModelReply | ApplicationStatusReply | CharmReply | RegisterReply | FullModelReply | ControllerStatusReply | MembersReply | AddControllerReply | ControllersReply | DebugLogReply> {
  let body: unknown
  try {
    body = decode(request.data, component)
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
  const op = typeof body === 'object' && body !== null ? (body as { op?: unknown }).op : undefined
  if (isApiOp(op)) {
    // The policy table first: a refused caller learns nothing, not even whether its target exists.
    const target = apiTarget(op, body)
    if (!apiPermits(op, identify(request.from), target)) return { ok: false, error: apiRefusal(component, op, request.from, target) }
  }
  if (op === 'model-summary') return await summary(node, identify, request, presence)
  if (op === 'register') return await register(node, request, body as { machine?: unknown, secret?: unknown })
  if (op === 'model') return await fullModel(node, identify, request, presence)
  if (op === 'machine-model') return await machineModel(node, identify, request, body as { machine?: unknown })
  if (op === 'application-status') return await applicationStatus(node, identify, request, body as { unit?: unknown })
  if (op === 'charm-archive' || op === 'put-charm') return await charmArchive(identify, request, body as Record<string, unknown>, charms)
  if (op === 'controller-status') return controllerStatus(node, identify, request, extras.version)
  if (op === 'members') return members(node, identify, request, extras.presenceTable)
  if (op === 'add-controller') return await addController(node, identify, request, body as { peer?: unknown })
  if (op === 'controllers') return controllers(node, identify, request, extras.controllerAddresses)
  if (op === 'debug-log') return answerDebugLog(node.id, identify, request, body as Record<string, unknown>, extras.logs)
  return { ok: false, error: `${component}: expected a request {op: "machine-model" | "application-status" | "charm-archive" | "put-charm" | "model-summary" | "register" | "model" | "controller-status" | "members" | "add-controller" | "controllers" | "debug-log"}, got ${describeValue(body)}` }
}

async function summary (node: ControllerNode, identify: IdentifyPeer, request: IncomingRequest, presence: MachinePresence | undefined): Promise<SummaryReply> {
  const caller = identify(request.from)
  if (!apiPermits('model-summary', caller)) return { ok: false, error: apiRefusal(component, 'model-summary', request.from) }
  try {
    const model = await node.read()
    const reader = readerOf(model)
    const machines = tableKeys(model.machines).filter(id => reader.machine(id) !== undefined)
    const machineStatus: Record<string, SummaryMachine> = {}
    for (const id of machines) {
      const machine = reader.machine(id)!
      machineStatus[id] = { agent: machine.agent.status, life: machine.life, instance: machine.instance.status, message: machine.instance.message, instanceId: machine.instanceId }
    }
    const units: Record<string, SummaryUnit> = {}
    for (const [name, unit] of tableEntries(model.units)) {
      // A unit's agent is `lost` while its machine agent is not heard from (DESIGN.md §5).
      const heard = presence?.(unit.machine)
      units[name] = {
        workload: unit.workload.status,
        message: unit.workload.message,
        agent: heard?.status === 'lost' ? 'lost' : unit.agent.status,
        // Left out rather than sent as undefined, so a reader sees only what presence knows.
        ...(heard?.since === undefined ? {} : { agentSince: heard.since }),
        ...(heard?.heardBy === undefined ? {} : { agentHeardBy: heard.heardBy })
      }
    }
    return { ok: true, revision: model.revision, machines, applications: tableKeys(model.applications), units, machineStatus }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}

async function fullModel (node: ControllerNode, identify: IdentifyPeer, request: IncomingRequest, presence: MachinePresence | undefined): Promise<FullModelReply> {
  const caller = identify(request.from)
  if (!apiPermits('model', caller)) return { ok: false, error: apiRefusal(component, 'model', request.from) }
  try {
    return { ok: true, ...fullModelView(await node.read(), presence), leader: node.host.leader, term: node.host.term }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}

/** The model checks the secret (runtime/model: `register-machine-agent`); this controller proposes it for the caller. */
async function register (node: ControllerNode, request: IncomingRequest, body: { machine?: unknown, secret?: unknown }): Promise<RegisterReply> {
  if (typeof body.machine !== 'string' || typeof body.secret !== 'string') {
    return { ok: false, error: `${component}: expected {op: "register", machine, secret} as strings, got ${typeof body.machine} and ${typeof body.secret}` }
  }
  try {
    const result = await node.submit({
      type: 'register-machine-agent',
      machine: body.machine,
      peer: request.from,
      secret: body.secret,
      // One id per peer, machine and secret: a retried registration applies once.
      requestId: `register/${request.from}/${body.machine}/${body.secret.slice(0, 8)}`,
      proposer: { kind: 'controller', id: node.id }
    })
    return result.ok ? { ok: true } : { ok: false, error: result.error }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}

async function machineModel (node: ControllerNode, identify: IdentifyPeer, request: IncomingRequest, body: { machine?: unknown }): Promise<MachineModelReply> {
  const machine = body.machine
  const caller = identify(request.from)
  // The machine's own agent, or a controller (which holds the whole model anyway; with
  // `cantripd --role both` it is also the agent of its machine).
  if (typeof machine !== 'string' || !apiPermits('machine-model', caller, machine)) {
    return { ok: false, error: apiRefusal(component, 'machine-model', request.from, machine) }
  }
  try {
    return { ok: true, model: machineModelView(await node.read(), machine) }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}

/** What a request is about, for the policy table and its refusal: the machine, or the leader unit. */
export function apiTarget (op: string, body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return undefined
  if (op === 'machine-model') return (body as { machine?: unknown }).machine
  if (op === 'application-status') return (body as { unit?: unknown }).unit
  return undefined
}

/**
 * The leader's application status. The table admitted the caller's kind; the model says
 * whether the unit leads (on this controller's clock) and, for a machine agent, whether
 * its machine hosts the unit. Any of these failing gets the table's one line.
 */
async function applicationStatus (node: ControllerNode, identify: IdentifyPeer, request: IncomingRequest, body: { unit?: unknown }): Promise<ApplicationStatusReply> {
  const unit = body.unit
  const caller = identify(request.from)
  const refusal = { ok: false as const, error: apiRefusal(component, 'application-status', request.from, unit) }
  if (typeof unit !== 'string' || !apiPermits('application-status', caller, unit)) return refusal
  try {
    const answer = leaderApplicationStatus(await node.read(), unit, node.clock.now(), caller?.kind === 'machine' ? caller.id : undefined)
    return answer === undefined ? refusal : { ok: true, ...answer }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}

/**
 * Any known agent may fetch an archive by its hash (it is checked again on unpacking); only
 * admins may add one. `local` needs no more permission than a plain fetch: it only asks for less.
 */
async function charmArchive (identify: IdentifyPeer, request: IncomingRequest, body: Record<string, unknown>, charms: CharmArchives | undefined): Promise<CharmReply> {
  const caller = identify(request.from)
  if (charms === undefined) return { ok: false, error: `${component}: this controller keeps no charm archives` }
  if (!apiPermits('charm-archive', caller)) return { ok: false, error: apiRefusal(component, 'charm-archive', request.from) }
  try {
    if (body.op === 'put-charm') {
      if (!apiPermits('put-charm', caller)) return { ok: false, error: apiRefusal(component, 'put-charm', request.from) }
      if (!(body.bytes instanceof Uint8Array)) return { ok: false, error: `${component}: expected archive bytes, got ${typeof body.bytes}` }
      return { ok: true, bytes: null, hash: await charms.put(body.bytes) }
    }
    if (typeof body.hash !== 'string') return { ok: false, error: `${component}: expected a charm hash, got ${typeof body.hash}` }
    if (body.local !== undefined && typeof body.local !== 'boolean') return { ok: false, error: `${component}: expected "local" to be a boolean, got ${typeof body.local}` }
    return { ok: true, bytes: (await charms.get(body.hash, { local: body.local === true })) ?? null }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}
