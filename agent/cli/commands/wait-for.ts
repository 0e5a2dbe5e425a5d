/**
 * `cantrip wait-for application|unit|machine|model NAME [--query Q] [--status S]
 * [--timeout 10m] [--no-summary]`, as Juju's `juju wait-for` (cmd/juju/waitfor): waits
 * until the query holds for the entity (Juju's default per kind when none is given),
 * re-evaluating on every change the controllers push (model-watch, not polling), then
 * prints Juju's summary. A query that does not parse is refused before connecting; an
 * unknown name fails at the first read that finds the entity, as in Juju. A model not
 * (yet) in the controller's registry is waited for, as Juju's modelCommand logs "model
 * not found, waiting..." until it appears or the timeout passes.
 */
import type { Command } from 'commander'
import { InvalidInputError } from '../../../runtime/errors.ts'
import { defaultModelName, isApplicationName, isMachineId, isModelName, isUnitName } from '../../../runtime/ids.ts'
import { tableGet } from '../../../runtime/model/table.ts'
import type { CliContext, RegisterCommand } from '../cli-context.ts'
import type { Connection } from '../connection.ts'
import { parseDuration, untilModel, untilServed } from './model-common.ts'
import { defaultQueries, timedOut, waitForComponent, waitForGoal, waitForStep, type WaitForStep } from '../wait-for-goal.ts'
import { waitForTarget, type WaitForKind } from '../wait-for-scopes.ts'
import { summaryLine, summaryYaml } from '../wait-for-summary.ts'

interface WaitForFlags { query?: string, status?: string, timeout: string, summary: boolean, controller?: string }

const names: Record<WaitForKind, { valid: (name: string) => boolean, example: string }> = {
  application: { valid: isApplicationName, example: 'an application name like "kv"' },
  unit: { valid: isUnitName, example: 'a unit name like "kv/0"' },
  machine: { valid: isMachineId, example: 'a machine id like "0"' },
  model: { valid: isModelName, example: 'a model name like "default"' }
}

const examples: Record<WaitForKind, string> = {
  application: `cantrip wait-for application kv --query 'status=="active"'`,
  unit: `cantrip wait-for unit kv/0 --query 'workload-status=="active" && agent-status=="idle"'`,
  machine: `cantrip wait-for machine 0 --query 'life=="alive" && status=="started"'`,
  model: `cantrip wait-for model default --query 'forEach(units, unit => unit.workload-status == "active")'`
}

export const registerWaitFor: RegisterCommand = (program, context) => {
  const waitFor = program.command('wait-for')
    .description('wait until an application, unit, machine or model reaches a goal state (event-driven)')
  for (const kind of ['application', 'machine', 'model', 'unit'] as const) addKind(waitFor, context, kind)
}

function addKind (waitFor: Command, context: CliContext, kind: WaitForKind): void {
  waitFor.command(kind)
    .description(`wait for ${kind === 'application' ? 'an' : 'a'} ${kind} to reach a goal state`)
    .addHelpText('after', `\nExample:\n  ${examples[kind]}`)
    .argument('<name>', kind === 'machine' ? 'the machine id' : `the ${kind} name`)
    .option('--query <query>', `the goal state (default: '${defaultQueries[kind]}')`)
    .option('--status <status>', 'shorthand for a query on the status (machine: agent or instance status; "missing": gone)')
    .option('--timeout <duration>', 'how long to wait before timing out', '10m')
    .option('--no-summary', 'print no summary of the query on exit')
    .option('-c, --controller <name>', 'controller (default: the current one)')
    .action(async (name: string, flags: WaitForFlags) => { await waitForEntity(context, kind, name, flags) })
}

async function waitForEntity (context: CliContext, kind: WaitForKind, name: string, flags: WaitForFlags): Promise<void> {
  if (!names[kind].valid(name)) throw new InvalidInputError(waitForComponent, names[kind].example, name)
  const goal = waitForGoal(kind, flags)
  const timeoutMs = parseDuration(waitForComponent, '--timeout', flags.timeout)
  const deadline = Date.now() + timeoutMs
  // A model is reached through the default model, whose registry says when it exists.
  if (kind === 'model') context.model = modelSpec(context.model, defaultModelName)
  const connection = await context.connect(flags.controller)
  let seen = false
  let shown = ''
  let finished: Extract<WaitForStep, { done: true }> | undefined
  const progress = (line: string): void => {
    if (line !== shown) { shown = line; report(context, line) }
  }
  try {
    if (kind === 'model' && name !== defaultModelName) {
      if (!await untilRegistered(connection, name, progress, deadline)) throw timedOut(name)
      connection.useModel(name)
      // A model just added answers once its group has started.
      if (await untilServed(connection, deadline) !== undefined) throw timedOut(name)
    }
    const reached = await untilModel(connection, full => {
      const target = waitForTarget(kind, full, name)
      const step = waitForStep(kind, name, goal, target, seen)
      seen ||= target !== undefined
      if (step.done) { finished = step; return true }
      progress(step.progress)
      return false
    }, Math.max(0, deadline - Date.now()))
    if (!reached || finished === undefined) throw timedOut(name)
  } finally {
    // A drawn progress line has no newline of its own: end it so what follows starts a line.
    if (context.fancy && shown !== '') process.stderr.write('\n')
  }
  if (!flags.summary) return
  context.err(summaryLine(kind, name, finished.life))
  if (finished.life !== 'dead' && finished.life !== 'dying') context.out(summaryYaml(kind, finished.reads))
}

/** Waits until the controller's model registry (held by the default model) has `model`; false at the deadline. */
async function untilRegistered (connection: Connection, model: string, progress: (line: string) => void, deadline: number): Promise<boolean> {
  return await untilModel(connection, full => {
    const present = tableGet(full.model.models, model) !== undefined
    if (!present) progress(`model ${JSON.stringify(model)} not found, waiting...`)
    return present
  }, Math.max(0, deadline - Date.now()))
}

/** `-m ctl:other` with `wait-for model NAME` keeps the controller and waits on NAME. */
function modelSpec (spec: string | undefined, model: string): string {
  const colon = spec?.indexOf(':') ?? -1
  return colon >= 0 ? `${spec!.slice(0, colon)}:${model}` : model
}

function report (context: CliContext, line: string): void {
  if (context.fancy) process.stderr.write(`\r\x1b[2K${line}`)
  else context.err(line)
}
