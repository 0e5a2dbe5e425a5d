/**
 * What `cantrip status` shows of an agent's liveness, as pure rules over the model and the
 * answering controller's presence (juju-semantics.md §8). The CLI's status document
 * (agent/cli/status-document.ts) and the simulator's status-truth check
 * (sim/invariants/status-truth.ts) both read status through these, so what the simulator
 * checks is what a user sees.
 *
 * Where "lost" is computed: here, when status is read, from the answering controller's
 * presence — as Juju's status code does from agent presence (apiserver/common
 * ModelPresenceContext.UnitStatus and MachineStatus). The model keeps what the agents
 * last reported, so the moment the agent is heard again status shows that, with no write
 * needed to undo "lost", and a controller that does not hear an agent says so even when
 * the Raft leader is elsewhere. What the model does get is the history: the leader's
 * provisioner writes the lost and down periods into the status history through Raft
 * (`record-agent-presence`, runtime/model/apply/presence-commands.ts) when its machine
 * actor calls the agent down and again when it is back, so `show-status-log` lists them.
 */
import type { MachineRecord, StatusRecord, UnitRecord } from './model-types.ts'

/** The workload message of a unit whose agent is lost (Juju's, naming our CLI). */
export function lostAgentMessage (unit: string): string {
  return `agent lost, see 'cantrip show-status-log ${unit}'`
}

/** The agent message of a lost unit agent and of a down machine agent, as Juju words it. */
export const notCommunicatingMessage = 'agent is not communicating with the server'

/** Juju's MessageInstallingCharm and the waiting messages of a unit whose agent has not installed yet. */
const installingMessage = 'installing charm software'
const notInstalledWaiting = ['waiting for machine', 'installing agent', 'agent initialising']

/**
 * Juju's canBeLost: a unit still allocating or installing is not judged by presence (its
 * agent may not be up yet); one past install is. A dead unit is never lost.
 */
export function unitCanBeLost (unit: UnitRecord): boolean {
  if (unit.life === 'dead') return false
  const { agent, workload } = unit
  if (agent.status === 'allocating') return false
  // The deploy operation's `installing charm` comes before install, as allocating does.
  if (agent.status === 'executing') return agent.message !== 'running install hook' && agent.message !== 'installing charm'
  if (workload.status === 'maintenance') return workload.message !== installingMessage
  if (workload.status === 'waiting') return !notInstalledWaiting.includes(workload.message)
  return true
}

/**
 * The unit's workload and agent as Juju shows them: a failed hook is workload `error` and
 * agent `idle`; a unit whose machine agent is lost shows agent `lost` and workload
 * `unknown` "agent lost, see …" — keeping an error, whose information would otherwise be
 * hidden until the agent is back (Juju's rule too).
 */
export function displayedUnit (unit: UnitRecord, machineLost: boolean): { workload: StatusRecord<string>, agent: StatusRecord<string> } {
  const inError = unit.agent.status === 'error'
  let workload: StatusRecord<string> = inError ? { ...unit.agent, status: 'error' } : unit.workload
  let agent: StatusRecord<string> = inError ? { ...unit.agent, status: 'idle', message: '' } : unit.agent
  if (machineLost && unitCanBeLost(unit)) {
    if (!inError) workload = { ...workload, status: 'unknown', message: lostAgentMessage(unit.name), data: null }
    agent = { ...agent, status: 'lost', message: notCommunicatingMessage, data: null }
  }
  return { workload, agent }
}

/** The machine's agent (`juju-status`) as Juju shows it: `down` while a started agent is not heard from. */
export function displayedMachineAgent (machine: MachineRecord, machineLost: boolean): StatusRecord<string> {
  return machineLost && machine.agent.status === 'started' ? { ...machine.agent, status: 'down', message: notCommunicatingMessage } : machine.agent
}
