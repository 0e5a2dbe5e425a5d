/**
 * `cantrip add-model NAME`, `cantrip models`, `cantrip switch [controller:]MODEL` and
 * `cantrip destroy-model NAME --no-prompt [--timeout 10m]`, as Juju's. Every model is a
 * Raft group of its own on the same controllers; the registry of them lives in the
 * "default" model (runtime/model: add-model, destroy-model, remove-model). add-model and
 * switch make the model the controller's current one, in $CANTRIP_HOME.
 *
 * destroy-model, as Juju's, removes everything of the model: it marks the model dying
 * (no other command may then use it), removes its applications and machines, waits
 * until the machines are gone (and, on the local provider, their directories), then
 * drops the model; every controller then stops the model's group and deletes its data.
 * Run again after a timeout, it carries on where it stopped.
 */
import { randomUUID } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { CantripError, InvalidInputError } from '../../../runtime/errors.ts'
import { defaultModelName, isModelName } from '../../../runtime/ids.ts'
import type { ModelContext } from '../../../runtime/model/model-types.ts'
import { tableGet, tableKeys, tableValues } from '../../../runtime/model/table.ts'
import { modelMachinesHome } from '../../../providers/local-provider.ts'
import { cantripVersion, expectOk, type CliContext, type RegisterCommand } from '../cli-context.ts'
import { AgentVersionError, clientAgentBundle, controllerVersion, fetchAgentBinary, putAgentBinary, recordedBinaries, recordedBinary } from '../agent-binaries.ts'
import { compareAgentVersions, noAgentBinaries, parseAgentVersion } from '../../../runtime/model/agent-binaries.ts'
import { agentPlatform, type AgentBundle } from '../../tools/agent-bundle.ts'
import { controllerEntry, readControllers, setCurrentModel, type ControllerEntry } from '../cli-home.ts'
import { plainTable } from '../plain-table.ts'
import type { Connection } from '../connection.ts'
import { progress } from '../progress.ts'
import { controllerFlags, controllerHelp, parseDuration, untilModel, untilServed } from './model-common.ts'
import { ask } from '../ask.ts'

/** How long add-model waits for the new model's group to elect a leader and answer. */
const addModelReadyMs = 60_000
/** Between polls for a destroyed model's local agents to stop. */
const readyPollMs = 250
const formats = ['tabular', 'yaml', 'json'] as const

/**
 * The agent-version a new model gets: the one asked for, else the controllers'. As Juju's
 * model manager (juju/juju apiserver/facades/client/modelmanager/modelmanager.go,
 * checkAgentVersion): a version above the controllers' is refused ("agent-version cannot
 * be greater than the server"), and any other must have agent binaries the server can
 * serve — the client's own, which it uploads, or one the controller store (the default
 * model's) holds, which is copied into the new model's. Without a bundle to give the
 * model (a client of another version than the controllers, none asked for) it keeps none,
 * and its agents run the controllers' version.
 */
async function modelAgentVersionFor (connection: Connection, name: string, asked: string | undefined): Promise<NewModelAgent | undefined> {
  const controller = await controllerVersion(connection)
  const wanted = asked ?? controller
  if (parseAgentVersion(wanted) === undefined) throw new InvalidInputError('cantrip add-model', '--agent-version as a version like "0.2.0"', wanted)
  const fail = (why: string): never => { throw new AgentVersionError(`controller ${controller}: cannot add model "${name}" at agent ${wanted}: ${why}`) }
  if (compareAgentVersions(wanted, controller) > 0) fail(`agent-version cannot be greater than the server's ${controller}`)
  if (wanted === cantripVersion) return { wanted, bundle: clientAgentBundle() }
  const { model } = await connection.model()
  const record = recordedBinary(model, wanted)
  if (record !== undefined) return { wanted, bundle: await fetchAgentBinary(connection, record) }
  if (asked === undefined) return undefined
  const have = [...recordedBinaries(model).filter(b => b.platform === agentPlatform).map(b => b.version), ...(compareAgentVersions(cantripVersion, controller) <= 0 ? [cantripVersion] : [])]
  return fail(noAgentBinaries(wanted, agentPlatform, 'the controller store', have))
}

interface NewModelAgent {
  wanted: string
  /** Its bundle, from this client or the controller store (read before the connection turns to the new model). */
  bundle: AgentBundle
}

/** Gives the new model (the connection's) the bundle and sets its agent-version. */
async function setNewModelAgent (connection: Connection, agent: NewModelAgent): Promise<void> {
  await putAgentBinary(connection, agent.bundle)
  expectOk(await connection.submit({ type: 'set-agent-version', version: agent.wanted }))
}

function checkName (component: string, name: string): string {
  if (!isModelName(name)) throw new InvalidInputError(component, 'a model name like "staging" or "dev-2" (lower-case letters, digits and hyphens, at most 63 characters)', name)
  return name
}

/** The registry, as the default model holds it. */
async function registry (connection: Connection): Promise<ModelContext['models']> {
  connection.useModel(defaultModelName)
  return (await connection.model()).model.models
}

/** Opens the controller on its default model (the registry), whatever -m or the current (perhaps dying) model say. */
async function openRegistry (context: CliContext, controller: string): Promise<Connection> {
  const given = context.model
  context.model = `${controller}:${defaultModelName}`
  try {
    return await context.connect(controller)
  } finally {
    context.model = given
  }
}

export const registerModels: RegisterCommand = (program, context) => {
  program.command('add-model')
    .description('add a model to the controller (its own Raft group on the same controllers) and switch to it')
    .addHelpText('after', '\nExamples:\n  cantrip add-model staging\n  cantrip add-model staging -c prod')
    .argument('<name>', 'model name')
    .option('--agent-version <version>', 'the agent version of the model (default: the controllers\')')
    .option(controllerFlags, controllerHelp)
    .action(async (name: string, options: { controller?: string, agentVersion?: string }) => {
      const component = 'cantrip add-model'
      checkName(component, name)
      const { name: controller } = controllerEntry(options.controller)
      const connection = await openRegistry(context, controller)
      // Checked before the model exists, so a version the server cannot serve leaves nothing behind.
      const agentVersion = await modelAgentVersionFor(connection, name, options.agentVersion)
      // The UUID is chosen here, outside the replicated core, so every replica applies the same one.
      expectOk(await connection.submit({ type: 'add-model', name, uuid: randomUUID() }))
      // The model exists from here on: what fails later says so, and how to reach it, as
      // Juju's add-model does when it cannot update the client's store.
      try {
        setCurrentModel(controller, name)
      } catch (error) {
        throw new CantripError(`${component}: model "${name}" was created on controller "${controller}", but it could not be made current: ${(error as Error).message}; use it with -m ${controller}:${name}`, { cause: error })
      }
      connection.useModel(name)
      const unanswered = await untilServed(connection, Date.now() + addModelReadyMs)
      if (unanswered !== undefined) throw new CantripError(`${component}: model "${name}" was added and is the current model, but its controllers did not answer within ${addModelReadyMs / 1000}s: ${unanswered}`)
      if (agentVersion !== undefined) await setNewModelAgent(connection, agentVersion)
      context.out(`Added '${name}' model on ${controller}/localhost with credential 'admin' for user 'admin'`)
    })

  program.command('models')
    .description('list the controller\'s models, the current one starred')
    .option('--format <format>', 'tabular, yaml or json', 'tabular')
    .option(controllerFlags, controllerHelp)
    .action(async (options: { format: string, controller?: string }) => {
      if (!formats.includes(options.format as typeof formats[number])) throw new InvalidInputError('cantrip models', `--format ${formats.join(', ')}`, options.format)
      const { name: controller, entry } = controllerEntry(options.controller)
      const connection = await openRegistry(context, controller)
      const records = tableValues(await registry(connection))
      const current = entry['current-model'] ?? defaultModelName
      const rows: ModelRow[] = []
      for (const model of [{ name: defaultModelName, life: 'alive' }, ...records.sort((a, b) => a.name.localeCompare(b.name))]) {
        connection.useModel(model.name)
        const counts = await modelCounts(connection)
        rows.push({ name: model.name, status: model.life === 'alive' ? 'available' : 'destroying', ...counts })
      }
      context.out(renderModels(controller, entry, current, rows, options.format))
    })

  program.command('switch')
    .description('make a model (and its controller) the current one')
    .argument('<target>', '[controller:]model, or a controller name')
    .action(async (target: string) => {
      const component = 'cantrip switch'
      const file = readControllers()
      // A bare controller name switches to that controller (and its current model), as Juju's does.
      const bareController = !target.includes(':') && file.controllers[target] !== undefined ? target : undefined
      const before = `${file['current-controller'] ?? '(none)'}:${file['current-controller'] === null ? '' : file.controllers[file['current-controller']]?.['current-model'] ?? defaultModelName}`
      const controller = bareController ?? (target.includes(':') ? target.slice(0, target.indexOf(':')) : controllerEntry().name)
      const { entry } = controllerEntry(controller)
      const model = bareController !== undefined ? entry['current-model'] ?? defaultModelName : checkName(component, target.slice(target.indexOf(':') + 1))
      if (model !== defaultModelName) {
        const connection = await openRegistry(context, controller)
        const record = tableGet(await registry(connection), model)
        if (record === undefined) throw new InvalidInputError(component, `a model of controller "${controller}" (${[defaultModelName, ...tableKeys(await registry(connection))].join(', ')})`, model)
      }
      setCurrentModel(controller, model)
      context.out(`${before} -> ${controller}:${model}`)
    })

  program.command('destroy-model')
    .description('remove a model with its applications and machines, and wait until it is gone')
    .argument('<name>', 'model name ([controller:]model)')
    .option('--no-prompt', 'do not ask for confirmation (required when not on a terminal)')
    .option('--timeout <duration>', 'give up waiting after this long', '10m')
    .option(controllerFlags, controllerHelp)
    .action(async (target: string, options: { prompt: boolean, timeout: string, controller?: string }) => {
      const component = 'cantrip destroy-model'
      const colon = target.indexOf(':')
      const name = checkName(component, target.slice(colon + 1))
      const timeoutMs = parseDuration(component, '--timeout', options.timeout)
      if (name === defaultModelName) throw new InvalidInputError(component, 'a model other than "default" (the controller group\'s own model goes with destroy-controller)', name)
      if (options.prompt) {
        if (process.stdin.isTTY !== true) throw new InvalidInputError(component, '--no-prompt when not on a terminal', 'no terminal to ask')
        const answer = await ask(`This destroys model "${name}" with its applications, units and machines. Continue? (y/N) `)
        if (!/^y(es)?$/i.test(answer.trim())) throw new CantripError(`${component}: aborted`)
      }
      const { name: controller, entry } = controllerEntry(colon >= 0 ? target.slice(0, colon) : options.controller)
      const connection = await openRegistry(context, controller)
      const models = await registry(connection)
      if (tableGet(models, name) === undefined) throw new InvalidInputError(component, `a model of controller "${controller}" (${tableKeys(models).join(', ') || 'none but "default"'})`, name)
      const step = progress(context, `destroying model "${name}"`)
      expectOk(await connection.submit({ type: 'destroy-model', name }))
      connection.useModel(name)
      const removed = await emptyModel(connection, entry, name, timeoutMs, text => { step.update(text) })
      if (!removed.ok) throw new CantripError(`${component}: model "${name}" still has ${removed.left} after ${options.timeout}; run destroy-model again to carry on`)
      connection.useModel(defaultModelName)
      expectOk(await connection.submit({ type: 'remove-model', name }))
      const after = readControllers().controllers[controller]
      if (after?.['current-model'] === name) setCurrentModel(controller, defaultModelName)
      step.done(`Destroyed model "${name}": ${removed.machines} machine${removed.machines === 1 ? '' : 's'} and ${removed.applications} application${removed.applications === 1 ? '' : 's'} removed`)
    })
}

interface Emptied { ok: boolean, left: string, machines: number, applications: number }

/** Removes every application and machine of the model and waits until the machines (and their local directories) are gone. */
async function emptyModel (connection: Connection, entry: ControllerEntry, name: string, timeoutMs: number, update: (text: string) => void): Promise<Emptied> {
  const start = (await connection.model()).model
  const applications = tableValues(start.applications).filter(app => app.life === 'alive').map(app => app.name)
  const machines = tableValues(start.machines).filter(machine => machine.life === 'alive').map(machine => machine.id)
  update(`removing ${applications.length} applications and ${machines.length} machines`)
  for (const application of applications) expectOk(await connection.submit({ type: 'remove-application', application }))
  for (const machine of machines) {
    const result = await connection.submit({ type: 'remove-machine', machine, force: true })
    // Removing its last unit may have taken the machine already (Juju's remove-application does).
    if (!result.ok && result.error.endsWith(`machine "${machine}" not found`)) continue
    expectOk(result)
  }
  // On the local provider the instance directories go when the agents have been stopped.
  const localHome = entry.provider === 'local' ? modelMachinesHome(join(entry.dir, 'machines'), name) : undefined
  const localLeft = (): number => localHome === undefined || !existsSync(localHome) ? 0 : readdirSync(localHome).filter(d => d.startsWith('machine-')).length
  let left = ''
  const ok = await untilModel(connection, async full => {
    let processes = localLeft()
    const remaining = full.model.machines.size + full.model.applications.size
    // The model may be empty a moment before the last agent process is stopped.
    while (remaining === 0 && processes > 0 && !(await sleep(readyPollMs))) processes = localLeft()
    left = `${full.model.machines.size} machines, ${full.model.applications.size} applications, ${processes} agent processes`
    update(`waiting: ${left} left`)
    return remaining === 0 && processes === 0
  }, timeoutMs)
  return { ok, left, machines: machines.length, applications: applications.length }
}

async function sleep (ms: number): Promise<false> {
  await new Promise(resolve => setTimeout(resolve, ms))
  return false
}

interface ModelRow { name: string, uuid: string, status: string, machines: number, units: number }

async function modelCounts (connection: Connection): Promise<{ uuid: string, machines: number, units: number }> {
  try {
    const model = (await connection.model()).model
    return { uuid: model.uuid, machines: model.machines.size, units: model.units.size }
  } catch {
    // A model being removed may stop answering: shown with nothing.
    return { uuid: '', machines: 0, units: 0 }
  }
}

function renderModels (controller: string, entry: ControllerEntry, current: string, rows: ModelRow[], format: string): string {
  if (format !== 'tabular') {
    const doc = {
      models: rows.map(row => ({
        name: `admin/${row.name}`,
        'short-name': row.name,
        'model-uuid': row.uuid,
        'controller-name': controller,
        'cloud-region': `${entry.provider}/localhost`,
        type: 'iaas',
        status: { current: row.status },
        machines: row.machines,
        units: row.units,
        access: 'admin'
      })),
      'current-model': current
    }
    return format === 'json' ? JSON.stringify(doc) : stringify(doc).trimEnd()
  }
  const table = [['Model', 'Cloud/Region', 'Type', 'Status', 'Machines', 'Units', 'Access'], ...rows.map(row => [
    // The local provider's cloud is Juju's localhost/localhost, as controllers and status show it.
    `${row.name}${row.name === current ? '*' : ''}`, entry.provider === 'local' ? 'localhost/localhost' : `${entry.provider}/localhost`, 'iaas', row.status, String(row.machines), String(row.units), 'admin'
  ])]
  return [`Controller: ${controller}`, '', plainTable(table)].join('\n')
}
