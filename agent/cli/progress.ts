/**
 * Progress for a blocking command: on a terminal one line redrawn in place; in a pipe,
 * under CI or with --no-color/NO_COLOR, one plain line per step.
 */
import type { CliContext } from './cli-context.ts'

export interface Progress {
  update (step: string): void
  done (summary: string): void
}

export function progress (context: CliContext, title: string): Progress {
  const started = Date.now()
  const elapsed = (): string => `${((Date.now() - started) / 1000).toFixed(1)}s`
  if (!context.fancy) {
    context.err(`${title}...`)
    return {
      update: step => { context.err(`${title}: ${step}`) },
      done: summary => { context.out(summary) }
    }
  }
  const draw = (text: string): void => { process.stderr.write(`\r\x1b[2K${text}`) }
  draw(`${title}...`)
  return {
    update: step => { draw(`${title}: ${step} (${elapsed()})`) },
    done: summary => {
      process.stderr.write('\r\x1b[2K')
      context.out(summary)
    }
  }
}
