/**
 * What `cantrip status` shows of an agent's liveness, as pure rules over the model and the
 * answering controller's presence (juju-semantics.md §8): a unit on a machine whose agent
 * is not heard from shows agent `lost`, and such a machine, once its agent had started,
 * shows `down`. The CLI's status document (agent/cli/status-document.ts) and the
 * simulator's status-truth check (sim/invariants/status-truth.ts) both read status
 * through these, so what the simulator checks is what a user sees.
 */
import type { MachineRecord, StatusRecord, UnitRecord } from './model-types.ts'

/** The agent message of a unit whose machine agent is lost. */
export const lostAgentMessage = 'agent lost, see \'cantrip show-status-log\''

/** The unit's workload and agent as Juju shows them. */
export function displayedUnit (unit: UnitRecord, machineLost: boolean): { workload: StatusRecord<string>, agent: StatusRecord<string> } {
  if (unit.agent.status === 'error') {
    return { workload: { ...unit.agent, status: 'error' }, agent: { ...unit.agent, status: 'idle', message: '' } }
  }
  return { workload: unit.workload, agent: machineLost ? { ...unit.agent, status: 'lost', message: lostAgentMessage } : unit.agent }
}

/** The machine's agent (`juju-status`) as Juju shows it: `down` while a started agent is not heard from. */
export function displayedMachineAgent (machine: MachineRecord, machineLost: boolean): StatusRecord<string> {
  return machineLost && machine.agent.status === 'started' ? { ...machine.agent, status: 'down' } : machine.agent
}
