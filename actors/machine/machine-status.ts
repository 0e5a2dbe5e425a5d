import type { SnapshotFrom } from 'xstate'
import type { MachineMachine } from './machine-machine.ts'
import type { MachineContext } from './machine-types.ts'

/** The machine's `State` column in `juju status` (juju-semantics.md §8). */
export type MachineAgentStatus = 'pending' | 'started' | 'stopped' | 'down' | 'error'

/**
 * The instance status (`machine-status` in YAML). Juju's own values are `allocating`,
 * `running` and `provisioning error`; `pending` is shown before provisioning starts
 * and `stopped` once a dying machine's instance has been stopped.
 */
export type MachineInstanceStatus = 'pending' | 'allocating' | 'running' | 'provisioning error' | 'stopped'

export interface MachineStatus {
  agentStatus: MachineAgentStatus
  instanceStatus: MachineInstanceStatus
  message: string
  /**
   * When this status began, on the host's clock. Absent when the change came from an
   * invoked actor settling or a back-off timer, whose moment the machine cannot know;
   * the host stamps such changes itself when it publishes them.
   */
  since?: number
}

/**
 * What status needs of a snapshot: a live one, or a persisted one read back from disk
 * or received in gossip (only `value` and `context` are used).
 */
export type MachineStatusSource = Pick<SnapshotFrom<MachineMachine>, 'value' | 'context'>

type Lifecycle =
  | 'pending' | 'provisioning' | 'provisioningBackoff' | 'provisioningError' | 'provisioned' | 'started'
  | 'dying' | 'dead' | 'removed'
type Agent = 'agentUnknown' | 'agentAlive' | 'agentDown' | 'agentStopped' | 'agentGone'

/** Juju's display fields for one machine, derived from its snapshot alone. Pure. */
export function machineStatus (snapshot: MachineStatusSource): MachineStatus {
  const { context } = snapshot
  const value = snapshot.value as Record<string, unknown>
  const [lifecycle, substate] = regionState(value.lifecycle) as [Lifecycle, string | undefined]
  const agent = regionState(value.agent)[0] as Agent

  const agentStatus = agentStatusOf(lifecycle, substate, agent, context)
  const instanceStatus = instanceStatusOf(lifecycle, context)
  const message = messageOf(lifecycle, substate, agentStatus, context)
  // The agent region decides the display only once the agent has reported in.
  const agentShown = agentStatus === 'started' || agentStatus === 'down' || (agentStatus === 'stopped' && lifecycle !== 'dead' && lifecycle !== 'removed')
  const since = agentShown ? later(context.lifecycleSince, context.agentSince) : context.lifecycleSince
  return since === null ? { agentStatus, instanceStatus, message } : { agentStatus, instanceStatus, message, since }
}

function regionState (value: unknown): [string, string | undefined] {
  if (typeof value === 'string') return [value, undefined]
  const [entry] = Object.entries(value as Record<string, unknown>)
  if (entry === undefined) return ['', undefined]
  return [entry[0], typeof entry[1] === 'string' ? entry[1] : undefined]
}

function later (a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : Math.max(a, b)
}

function agentPresence (agent: Agent, context: MachineContext): MachineAgentStatus {
  if (agent === 'agentDown') return 'down'
  if (agent === 'agentStopped') return 'stopped'
  return context.agentReportedAt === null ? 'pending' : 'started'
}

function agentStatusOf (lifecycle: Lifecycle, substate: string | undefined, agent: Agent, context: MachineContext): MachineAgentStatus {
  switch (lifecycle) {
    case 'pending':
    case 'provisioning':
    case 'provisioningBackoff':
    case 'provisioned':
      return 'pending'
    case 'provisioningError':
      return 'error'
    case 'started':
      return agentPresence(agent, context)
    case 'dying':
      if (substate === 'stopFailed') return 'error'
      return context.agentReportedAt === null ? 'pending' : agentPresence(agent, context)
    case 'dead':
    case 'removed':
      return 'stopped'
  }
}

function instanceStatusOf (lifecycle: Lifecycle, context: MachineContext): MachineInstanceStatus {
  switch (lifecycle) {
    case 'pending':
      return 'pending'
    case 'provisioning':
    case 'provisioningBackoff':
      return 'allocating'
    case 'provisioningError':
      return 'provisioning error'
    case 'provisioned':
    case 'started':
      return 'running'
    case 'dying':
    case 'dead':
    case 'removed':
      switch (context.instanceState) {
        case 'running':
        case 'abandoned':
          return 'running'
        case 'stopped':
          return 'stopped'
        case 'none':
        case 'allocated':
          return 'pending'
      }
  }
}

function messageOf (lifecycle: Lifecycle, substate: string | undefined, agentStatus: MachineAgentStatus, context: MachineContext): string {
  const machine = context.machineId
  const failure = context.lastFailure
  const instance = `instance "${context.instanceId ?? ''}"`
  switch (lifecycle) {
    case 'pending':
      return ''
    case 'provisioning': {
      const step = substate === 'deploying' ? context.progressMessage ?? 'deploying' : 'starting'
      const retry = context.startAttempt > 1 && failure !== null
        ? ` (attempt ${context.startAttempt} of ${context.policy.provisioningAttemptsMax}; last failure: ${failure.reason})`
        : ''
      const deferred = context.life === 'alive' ? '' : '; destroy requested, waiting for the start to finish'
      return step + retry + deferred
    }
    case 'provisioningBackoff': {
      // Juju's provisioner words it the same way.
      const left = context.policy.provisioningAttemptsMax - context.startAttempt
      return `failed to start machine ${machine} (${failure?.reason ?? 'unknown error'}), ` +
        `retrying in ${formatDuration(context.retryDelayMs)} (${left} more ${left === 1 ? 'attempt' : 'attempts'})`
    }
    case 'provisioningError':
      return `failed to start machine ${machine} after ${attempts(context.startAttempt)}: ${failure?.reason ?? 'unknown error'}`
    case 'provisioned':
      return 'running'
    case 'started':
      return agentStatus === 'down'
        ? `agent not heard from for ${formatDuration(context.policy.agentDownAfterMs)}`
        : agentStatus === 'stopped' ? 'agent stopped' : ''
    case 'dying':
      switch (substate) {
        case 'stopping': {
          const retry = context.stopAttempt > 1 && failure !== null
            ? ` (attempt ${context.stopAttempt} of ${context.policy.stopAttemptsMax}; last failure: ${failure.reason})`
            : ''
          return `stopping ${instance}${retry}`
        }
        case 'stopBackoff': {
          const left = context.policy.stopAttemptsMax - context.stopAttempt
          return `failed to stop ${instance} (${failure?.reason ?? 'unknown error'}), ` +
            `retrying in ${formatDuration(context.retryDelayMs)} (${left} more ${left === 1 ? 'attempt' : 'attempts'})`
        }
        case 'stopFailed':
          return `cannot stop ${instance} after ${attempts(context.stopAttempt)}: ${failure?.reason ?? 'unknown error'}`
        default:
          return `waiting for ${context.unitCount} ${context.unitCount === 1 ? 'unit' : 'units'} to be removed`
      }
    case 'dead':
    case 'removed':
      return context.instanceState === 'abandoned'
        ? `${instance} may still be running: cannot stop it: ${failure?.reason ?? 'unknown error'}`
        : ''
  }
}

function attempts (count: number): string {
  return `${count} ${count === 1 ? 'attempt' : 'attempts'}`
}

/** Go's duration style, as Juju prints it: `10s`, `1m20s`, `5m0s`, `12.345s`. */
function formatDuration (ms: number): string {
  if (ms < 60_000) return `${ms / 1000}s`
  const minutes = Math.floor(ms / 60_000)
  const rest = ms - minutes * 60_000
  if (minutes < 60) return `${minutes}m${rest / 1000}s`
  const hours = Math.floor(minutes / 60)
  return `${hours}h${minutes - hours * 60}m${rest / 1000}s`
}
