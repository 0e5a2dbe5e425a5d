import { actorKey, type InspectMessage } from './inspect-message.ts'
import { transitionLabel } from './statechart-graph.ts'
import type { ViewState } from './view-state.ts'

/**
 * The message sequence across the mesh: every `@xstate.event` that has a source, as an
 * arrow from the source actor's lane to the target's. Events an actor sends itself or
 * that come from outside (no source) are shown as self-arrows on the target lane.
 */

export interface SequenceStep {
  index: number
  at: number
  from: string
  to: string
  event: string
}

/** Arrows the sequence diagram shows at once (the newest up to the selected message). */
export const sequenceStepsMax = 200

/**
 * The last `max` events up to messages[upTo], newest last; `keep` (from, to actor keys)
 * chooses which count.
 */
export function messageSequence (messages: readonly InspectMessage[], upTo: number, max = sequenceStepsMax, keep?: (from: string, to: string) => boolean): SequenceStep[] {
  const steps: SequenceStep[] = []
  for (let i = Math.min(upTo, messages.length - 1); i >= 0 && steps.length < max; i--) {
    const message = messages[i]!
    if (message.type !== '@xstate.event') continue
    const to = actorKey(message.agent, message.sessionId)
    const from = message.sourceId === undefined ? to : actorKey(message.agent, message.sourceId)
    if (keep !== undefined && !keep(from, to)) continue
    steps.push({ index: i, at: message.at, from, to, event: eventLabel(message.event.type) })
  }
  // Agents' streams arrive interleaved (one agent's replay after another's live messages): the window is drawn in time order.
  return steps.reverse().sort((a, b) => a.at - b.at || a.index - b.index)
}

/** XState's long done-event names shortened: `xstate.done.actor.0.unit.running.uniter.loading` → `done: loading`. */
export function eventLabel (type: string): string {
  return transitionLabel(type)
}

/** A lane's name: the agent and actor name, XState's helper actors by their last name only. */
function laneLabel (agent: string, name: string, kind: string): string {
  return kind === 'other' ? `${agent}/…${name.split('.').at(-1)}` : `${agent}/${name}`
}

/** The lanes of a sequence, in first-appearance order, with display names (`machine-1/unit-kv-0`). */
export function sequenceLanes (steps: readonly SequenceStep[], state: ViewState): Array<{ key: string, label: string }> {
  const seen = new Map<string, string>()
  for (const step of steps) {
    for (const key of [step.from, step.to]) {
      if (seen.has(key)) continue
      const actor = state.actors.get(key)
      seen.set(key, actor === undefined ? key : laneLabel(actor.agent, actor.name, actor.kind))
    }
  }
  return [...seen].map(([key, label]) => ({ key, label }))
}
