/**
 * Status words in colour on a terminal, as Juju's tabular status paints them
 * (cmd/juju/status/output_tabular.go with juju/ansiterm): healthy states green, states on
 * the way yellow, failures red, anything else plain. Off under --no-color, NO_COLOR, a
 * pipe or CI (cli-context.ts `fancy`): the words are then printed as they are.
 */
import { createColors } from 'picocolors'

const green = new Set(['active', 'idle', 'started', 'running', 'completed', 'joined', 'available'])
const yellow = new Set(['waiting', 'maintenance', 'pending', 'allocating', 'executing', 'rebooting', 'joining', 'suspending', 'stopped'])
const red = new Set(['error', 'blocked', 'failed', 'down', 'lost', 'provisioning error', 'broken', 'terminated'])

export type Paint = (word: string) => string

/** A painter for status words; `colour` false returns the word unchanged. */
export function statusPainter (colour: boolean): Paint {
  const c = createColors(colour)
  return word => green.has(word) ? c.green(word) : yellow.has(word) ? c.yellow(word) : red.has(word) ? c.red(word) : word
}
