/**
 * An agent's link to the model as its workers use it: the latest view, the agent's clock,
 * change notification and command submission. A machine agent's ControllerClient is
 * one; so is a test's in-memory model. The machiner and every unit host read it.
 */
import type { CommandResult, ModelCommand, ModelContext } from './model-types.ts'

export interface ModelLink {
  /** The latest view of the model this agent has. */
  model (): ModelContext
  /** This agent's clock, for leadership belief and status stamps. */
  now (): number
  /** Called after every change of the view; returns the unsubscribe function. */
  onChange (listener: () => void): () => void
  submit (command: ModelCommand): Promise<CommandResult>
}
