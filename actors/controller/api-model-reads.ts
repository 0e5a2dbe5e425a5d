/**
 * The API ops that read the model or propose to it for their caller: `model-summary`,
 * `model`, `machine-model`, `application-status` and `register`. Each gets its request
 * typed and its caller admitted by the operation table (api-operations.ts); what is left
 * here is what needs the model.
 */
import { encode } from '../../runtime/codec.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import { leaderApplicationStatus, type ApplicationStatusReply } from '../../runtime/model/application-status.ts'
import { goalStateOf } from '../../runtime/model/goal-state.ts'
import { tableEntries, tableKeys } from '../../runtime/model/table.ts'
import type { ApiContext } from './api-operations.ts'
import { fullModelView } from './full-model-view.ts'
import { apiPermits, apiRefusal } from './api-policy.ts'
import type { ApiRequests, FullModelReply, GoalStateReply, MachineModelReply, RegisterReply, SummaryMachine, SummaryReply, SummaryUnit } from './api-requests.ts'

const component = 'controller api'

function failure (error: unknown): { ok: false, error: string } {
  return { ok: false, error: error instanceof Error ? error.message : String(error) }
}

export async function summary ({ node, presence }: ApiContext): Promise<SummaryReply> {
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
    return failure(error)
  }
}

export async function fullModel ({ node, presence }: ApiContext): Promise<FullModelReply> {
  try {
    return { ok: true, ...fullModelView(await node.read(), presence), leader: node.host.leader, term: node.host.term }
  } catch (error) {
    return failure(error)
  }
}

/** The model checks the secret (runtime/model: `register-machine-agent`); this controller proposes it for the caller. */
export async function register ({ node, request: { from } }: ApiContext, { machine, secret }: ApiRequests['register']): Promise<RegisterReply> {
  try {
    const result = await node.submit({
      type: 'register-machine-agent',
      machine,
      peer: from,
      secret,
      // One id per peer, machine and secret: a retried registration applies once.
      requestId: `register/${from}/${machine}/${secret.slice(0, 8)}`,
      proposer: { kind: 'controller', id: node.id }
    })
    return result.ok ? { ok: true } : { ok: false, error: result.error }
  } catch (error) {
    return failure(error)
  }
}

/**
 * The machine's own agent, or a controller (which holds the whole model anyway; with
 * `cantripd --role both` it is also the agent of its machine): the table admitted it.
 */
export async function machineModel ({ node }: ApiContext, { machine, since }: ApiRequests['machine-model']): Promise<MachineModelReply> {
  try {
    const model = await node.read()
    // The views sent are kept with the watches (a restarted controller starts afresh).
    return node.watches.cache.answer(model, machine, since)
  } catch (error) {
    return failure(error)
  }
}

/**
 * A machine agent's watch of its view (machine-watches.ts): served from the state this
 * controller applied, without a read through the leader; the table admitted the caller.
 */
export async function machineWatch ({ node, request }: ApiContext, { machine, since, revision, push }: ApiRequests['machine-watch']): Promise<MachineModelReply> {
  const send = push === true ? request.push : undefined
  return await node.watches.watch(machine, since, revision, send === undefined ? undefined : reply => send(encodedPush(reply)))
}

/**
 * A pushed change's encoding, made once per reply object: one look at the held watches
 * hands every agent whose change says the same the same object (machine-watches.ts), and
 * the transport copies the bytes into each agent's frame. Kept only while the reply is.
 */
const encodedPushes = new WeakMap<object, Uint8Array>()
function encodedPush (reply: MachineModelReply): Uint8Array {
  let bytes = encodedPushes.get(reply)
  if (bytes === undefined) {
    bytes = encode(reply, component)
    encodedPushes.set(reply, bytes)
  }
  return bytes
}

/**
 * The leader's application status. The table admitted the caller's kind; the model says
 * whether the unit leads (on this controller's clock) and, for a machine agent, whether
 * its machine hosts the unit. Any of these failing gets the table's one line.
 */
export async function applicationStatus ({ node, caller, request: { from } }: ApiContext, { unit }: ApiRequests['application-status']): Promise<ApplicationStatusReply> {
  const refusal = { ok: false as const, error: apiRefusal(component, 'application-status', from, unit) }
  if (!apiPermits('application-status', caller, unit)) return refusal
  try {
    const answer = leaderApplicationStatus(await node.read(), unit, node.clock.now(), caller?.kind === 'machine' ? caller.id : undefined)
    return answer === undefined ? refusal : { ok: true, ...answer }
  } catch (error) {
    return failure(error)
  }
}

/**
 * `goal-state` for a unit: the table admitted a controller or a machine agent; a machine
 * agent must host the unit. A unit that does not exist gets the same refusal, so the
 * caller learns nothing of other machines' units.
 */
export async function goalState ({ node, caller, request: { from } }: ApiContext, { unit }: ApiRequests['goal-state']): Promise<GoalStateReply> {
  const refusal = { ok: false as const, error: apiRefusal(component, 'goal-state', from, unit) }
  if (!apiPermits('goal-state', caller, unit)) return refusal
  try {
    const model = await node.read()
    const record = readerOf(model).unit(unit)
    if (record === undefined || (caller?.kind === 'machine' && record.machine !== caller.id)) return refusal
    const answer = goalStateOf(model, unit, node.clock.now())
    return answer === undefined ? refusal : { ok: true, goalState: answer }
  } catch (error) {
    return failure(error)
  }
}
