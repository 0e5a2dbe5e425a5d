/**
 * `cantrip deploy <charm-dir|file.charm|bundle.yaml> [application] [-n N] [--to M[,M...]]
 * [--config key=value|file.yaml ...] [--constraints "k=v ..."] [--trust] [--resource NAME=PATH ...]`,
 * as Juju's. Each `--resource` file is uploaded to the controllers' store before the
 * application is deployed with it (agent/cli/resource-upload.ts).
 *
 * A charm directory is packed, uploaded to the controllers' store, added to the model and
 * deployed. Its URL is `local:<name>-<revision>` with Juju's local revisions: content
 * already in the model under that charm name keeps its URL (so deploying the same
 * directory twice, or re-running a bundle, adds nothing), new content takes the next
 * revision. The model refuses the same URL for other content, so a URL always names one
 * archive, and `refresh` always finds a new URL for changed content.
 *
 * A bundle deploys every charm, then the machines it declares (only those a new
 * application is placed on), every application (num_units, options, constraints, to),
 * then the relations, then exposes; applications and relations already in the model are
 * left as they are (units are added up to num_units), so re-running a bundle succeeds.
 *
 * Planning (`planDeploy`) is pure: it takes the prepared charms and the model and returns
 * the steps; `executePlan` sends them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { CantripError, InvalidInputError } from '../../../runtime/errors.ts'
import type { CharmSummaryInput, ConfigValue, ModelContext, StorageDirectiveInput } from '../../../runtime/model/model-types.ts'
import { parseStorageDirectives } from '../../../runtime/model/storage-directives.ts'
import { tableGet, tableValues } from '../../../runtime/model/table.ts'
import type { ModelCommandBody } from '../../../runtime/model/command-proposer.ts'
import { packCharm } from '../../charm/charm-archive.ts'
import { isCharmArchivePath, loadCharmArchive } from '../../charm/charm-file.ts'
import { loadCharmDir } from '../../charm/load-charm.ts'
import { charmRequirementsProblem } from '../../../runtime/charm/charm-requirements.ts'
import type { CharmMetadata } from '../../../runtime/charm/charm-metadata.ts'
import { charmHookNames } from '../../../runtime/charm/charm-hook-names.ts'
import { type Bundle, isBundlePath, parseConstraintText, readBundle } from '../bundle.ts'
import { checkDeclared, parseResourceArgs, readResourceFile, type ResourceFile, uploadResource } from '../resource-upload.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import {
  applicationRecord, checkApplication, collect, configFromPairs, configFromValues, controllerFlags, controllerHelp,
  type Connect, type ModelClient, type Out, parseCount, parseKeyValues, parseMachineList, readModel
} from './model-common.ts'

const component = 'cantrip deploy'

export interface PreparedCharm {
  /** Absolute path of the charm directory. */
  readonly dir: string
  readonly name: string
  readonly hash: string
  readonly bytes: Uint8Array
  readonly summary: CharmSummaryInput
}

export type DeployRequest =
  | {
    readonly kind: 'charm'
    readonly dir: string
    readonly application?: string
    /** undefined: -n not given. */
    readonly numUnits?: number
    readonly to: readonly string[]
    /** `--config file.yaml` documents, in order, then `--config key=value` pairs (which win). */
    readonly configFiles: ReadonlyArray<{ readonly file: string, readonly values: unknown }>
    readonly configPairs: ReadonlyArray<[string, string]>
    readonly constraints: Readonly<Record<string, string>>
    readonly trust: boolean
    /** `--storage NAME=…` directives, by storage name. */
    readonly storage: Readonly<Record<string, StorageDirectiveInput>>
    /** `--resource NAME=PATH` files, read. */
    readonly resources?: readonly ResourceFile[]
  }
  /** `mapMachines`: `--map-machines existing`, bundle machines taken by the model's machines of the same ids. */
  | { readonly kind: 'bundle', readonly bundle: Bundle, readonly mapMachines?: boolean }

export type DeployStep =
  /** Upload the archive and add the charm (skipped when `exists`: the model has it). */
  | { readonly kind: 'charm', readonly charm: PreparedCharm, readonly url: string, readonly exists: boolean, readonly say: string }
  /** Upload a resource file to the controllers' store (before the deploy that names it). */
  | { readonly kind: 'resource', readonly file: ResourceFile, readonly say: string }
  /** add-machine; its id stands for bundle machine `ref` in later placements. */
  /** A bundle machine: added (`body`), or an existing one of the model (`existing`, `--map-machines existing`). */
  | { readonly kind: 'machine', readonly ref: string, readonly body?: Extract<ModelCommandBody, { type: 'add-machine' }>, readonly existing?: string, readonly say: string }
  /** A model command (none: only a line to say); `placementRefs` (bundle machine refs) become its `placement`. */
  | { readonly kind: 'submit', readonly body?: ModelCommandBody, readonly placementRefs?: readonly string[], readonly say: string }

export interface DeployPlan {
  readonly steps: readonly DeployStep[]
}

/** `min-juju-version` and `assumes` against the Juju version cantrip provides (runtime/charm/charm-requirements.ts). */
function checkRequirements (label: string, metadata: CharmMetadata): void {
  const problem = charmRequirementsProblem(metadata)
  if (problem !== undefined) throw new CantripError(`${label}: charm ${JSON.stringify(metadata.name)}: ${problem}`)
}

/**
 * Reads, checks and packs a charm directory as Juju packs one (its hooks made
 * executable, .jujuignore applied), or reads a pre-built .charm archive as it is.
 */
export async function prepareCharm (dir: string, label = component): Promise<PreparedCharm> {
  const root = resolve(dir)
  if (isCharmArchivePath(root) && existsSync(root) && statSync(root).isFile()) {
    const { charm, packed } = await loadCharmArchive(root)
    checkRequirements(label, charm.metadata)
    return { dir: root, name: charm.summary.name, hash: packed.hash, bytes: packed.bytes, summary: charm.summary }
  }
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new InvalidInputError(label, 'a charm directory, a .charm file or a bundle .yaml file', dir)
  if (!existsSync(join(root, 'metadata.yaml')) && !existsSync(join(root, 'charmcraft.yaml'))) throw new InvalidInputError(label, 'a charm directory with metadata.yaml or charmcraft.yaml', dir)
  const loaded = await loadCharmDir(root)
  checkRequirements(label, loaded.metadata)
  const packed = await packCharm(root, { hooks: charmHookNames(loaded.summary), generated: loaded.generated })
  return { dir: root, name: loaded.summary.name, hash: packed.hash, bytes: packed.bytes, summary: loaded.summary }
}

/**
 * The URL for `charm`: the one the model already has for this content and name, else
 * `local:<name>-<next revision>` (past every revision in the model and in `taken`).
 */
export function chooseCharmUrl (model: ModelContext, charm: { name: string, hash: string }, taken: ReadonlyMap<string, string> = new Map()): { url: string, exists: boolean } {
  const charms = tableValues(model.charms)
  const existing = charms.filter(c => c.hash === charm.hash && c.metadata.name === charm.name).map(c => c.url).sort()[0]
  if (existing !== undefined) return { url: existing, exists: true }
  for (const [url, hash] of taken) if (hash === charm.hash && url.startsWith(`local:${charm.name}-`)) return { url, exists: false }
  const pattern = new RegExp(`^local:${charm.name.replace(/[.+]/g, '\\$&')}-(\\d+)$`)
  let next = 0
  for (const url of [...charms.map(c => c.url), ...taken.keys()]) {
    const match = pattern.exec(url)
    if (match !== null) next = Math.max(next, Number(match[1]) + 1)
  }
  return { url: `local:${charm.name}-${next}`, exists: false }
}

/** The steps that deploy `request` into `model`, given its charms prepared (by directory). */
export function planDeploy (request: DeployRequest, charms: ReadonlyMap<string, PreparedCharm>, model: ModelContext): DeployPlan {
  const steps: DeployStep[] = []
  const taken = new Map<string, string>()
  const urls = new Map<string, string>()
  const charmStep = (dir: string, bundleFile?: string): { charm: PreparedCharm, url: string } => {
    const charm = charms.get(resolve(dir))
    if (charm === undefined) throw new InvalidInputError(component, 'a prepared charm', dir)
    const known = urls.get(charm.hash + ' ' + charm.name)
    if (known !== undefined) return { charm, url: known }
    const { url, exists } = chooseCharmUrl(model, charm, taken)
    taken.set(url, charm.hash)
    urls.set(charm.hash + ' ' + charm.name, url)
    const near = bundleFile === undefined ? '' : relative(resolve(bundleFile, '..'), charm.dir)
    const shown = bundleFile === undefined ? charm.dir : near.startsWith('..') ? charm.dir : `./${near}`
    steps.push({ kind: 'charm', charm, url, exists, say: exists ? `- charm ${shown} is in the model as ${url}` : `- upload charm ${shown} as ${url}` })
    return { charm, url }
  }

  if (request.kind === 'charm') {
    const { charm, url } = charmStep(request.dir)
    const application = checkApplication(component, request.application ?? charm.name)
    const subordinate = charm.summary.subordinate === true
    if (subordinate && request.numUnits !== undefined) throw new InvalidInputError(component, `no -n for subordinate charm "${charm.name}" (it gets units by integrating)`, String(request.numUnits))
    const numUnits = request.numUnits ?? (subordinate ? 0 : 1)
    if (request.to.length > numUnits) throw new InvalidInputError(component, `at most -n (${numUnits}) machines in --to`, request.to.join(','))
    const specs = charm.summary.config ?? {}
    const config: Record<string, ConfigValue> = {}
    for (const { file, values } of request.configFiles) {
      const forApp = isRecord(values) ? values[application] : undefined
      if (!isRecord(forApp)) throw new InvalidInputError(`${component}: ${file}`, `a map with the application "${application}" holding its options`, values)
      Object.assign(config, configFromValues(`${component}: ${file}: ${application}`, charm.name, specs, forApp))
    }
    Object.assign(config, configFromPairs(component, charm.name, specs, request.configPairs))
    const files = request.resources ?? []
    for (const file of files) {
      checkDeclared(component, charm.summary, file.name)
      steps.push({ kind: 'resource', file, say: `- upload resource "${file.name}" from ${file.path} (${file.bytes.byteLength} bytes)` })
    }
    const resources = Object.fromEntries(files.map(file => [file.name, { hash: file.hash, size: file.bytes.byteLength }]))
    steps.push({
      kind: 'submit',
      body: { type: 'deploy', application, charm: url, config, constraints: request.constraints, numUnits, ...(request.to.length > 0 ? { placement: [...request.to] } : {}), ...(request.trust ? { trust: true } : {}), ...(Object.keys(request.storage).length > 0 ? { storage: request.storage } : {}), ...(files.length > 0 ? { resources } : {}) },
      say: `Deploying "${application}" from local charm "${charm.name}", revision ${url.slice(url.lastIndexOf('-') + 1)}`
    })
    return { steps }
  }

  const { bundle } = request
  const machineSteps: DeployStep[] = []
  const appSteps: DeployStep[] = []
  const declared = new Map(bundle.machines.map(m => [m.id, m]))
  const needed = new Set<string>()
  let fresh = 0
  for (const app of bundle.applications) {
    const { charm, url } = charmStep(app.charm, bundle.file)
    const key = `${bundle.file}: applications.${app.name}`
    const subordinate = charm.summary.subordinate === true
    if (subordinate && (app.numUnits ?? 0) > 0) throw new InvalidInputError(`${component}: ${key}.num_units`, `0 for subordinate charm "${charm.name}"`, app.numUnits)
    const numUnits = app.numUnits ?? (subordinate ? 0 : 1)
    const config = configFromValues(`${component}: ${key}.options`, charm.name, charm.summary.config ?? {}, app.options)
    const existing = applicationRecord(model, app.name)
    if (existing !== undefined) {
      if (existing.charm !== url) appSteps.push({ kind: 'submit', say: `- application ${app.name} exists (charm ${existing.charm}); left as it is (use refresh)` })
      if (!subordinate && existing.scale < numUnits) {
        appSteps.push({ kind: 'submit', body: { type: 'add-unit', application: app.name, numUnits: numUnits - existing.scale }, say: `- add ${numUnits - existing.scale} unit(s) to ${app.name}` })
      }
      continue
    }
    // Trailing "new" placements are what the model does anyway; a "new" before a declared
    // machine gets its own add-machine so the list stays positional.
    let to = [...app.to]
    while (to.at(-1) === 'new') to = to.slice(0, -1)
    const refs = to.map(entry => {
      if (entry !== 'new') { needed.add(entry); return `bundle:${entry}` }
      const ref = `new:${fresh++}`
      machineSteps.push({ kind: 'machine', ref, body: { type: 'add-machine' }, say: `- add new machine for ${app.name}` })
      return ref
    })
    appSteps.push({
      kind: 'submit',
      body: { type: 'deploy', application: app.name, charm: url, config, constraints: app.constraints, numUnits, ...(app.trust ? { trust: true } : {}) },
      ...(refs.length > 0 ? { placementRefs: refs } : {}),
      say: `- deploy application ${app.name} from ${url} with ${numUnits} unit(s)`
    })
  }
  for (const id of [...needed].sort((a, b) => Number(a) - Number(b))) {
    // Juju's --map-machines=existing (cmd/juju/application/deploy.go): an existing machine
    // with the bundle machine's id is used as it is, one added over ssh among them.
    const existing = request.mapMachines === true ? tableGet(model.machines, id) : undefined
    if (existing !== undefined && existing.life === 'alive') {
      machineSteps.unshift({ kind: 'machine', ref: `bundle:${id}`, existing: id, say: `- use existing machine ${id} (bundle machine ${id})` })
      continue
    }
    const constraints = declared.get(id)!.constraints
    machineSteps.unshift({ kind: 'machine', ref: `bundle:${id}`, body: { type: 'add-machine', ...(Object.keys(constraints).length > 0 ? { constraints } : {}) }, say: `- add new machine (bundle machine ${id})` })
  }
  const relationSteps: DeployStep[] = []
  for (const [a, b] of bundle.relations) {
    if (relationExists(model, a, b)) continue
    relationSteps.push({ kind: 'submit', body: { type: 'integrate', a, b }, say: `- add relation ${a} - ${b}` })
  }
  const exposeSteps: DeployStep[] = bundle.applications
    .filter(app => app.expose && applicationRecord(model, app.name)?.exposed !== true)
    .map(app => ({ kind: 'submit', body: { type: 'expose', application: app.name }, say: `- expose all endpoints of ${app.name}` }))
  steps.push(...machineSteps, ...appSteps, ...relationSteps, ...exposeSteps)
  return { steps }
}

/** A relation of the model joining endpoint refs `a` and `b` (`app` or `app:endpoint`). */
export function findRelations (model: ModelContext, a: string, b: string): number[] {
  const [appA, epA] = a.split(':') as [string, string | undefined]
  const [appB, epB] = b.split(':') as [string, string | undefined]
  const matches = (ref: { application: string, name: string }, app: string, ep: string | undefined): boolean => ref.application === app && (ep === undefined || ref.name === ep)
  return tableValues(model.relations)
    .filter(r => !r.peer && r.life === 'alive' && r.endpoints.length === 2)
    .filter(r => {
      const [x, y] = r.endpoints as [typeof r.endpoints[0], typeof r.endpoints[0]]
      return (matches(x, appA, epA) && matches(y, appB, epB)) || (matches(x, appB, epB) && matches(y, appA, epA))
    })
    .map(r => r.id)
    .sort((p, q) => p - q)
}

function relationExists (model: ModelContext, a: string, b: string): boolean {
  return findRelations(model, a, b).length > 0
}

/** Sends the plan's steps in order; refusals throw (`controller 0.1.0: cannot …`). */
export async function executePlan (client: ModelClient, plan: DeployPlan, out: Out): Promise<void> {
  const machines = new Map<string, string>()
  for (const step of plan.steps) {
    out(step.say)
    if (step.kind === 'charm') {
      if (step.exists) continue
      const hash = await client.putCharm(step.charm.bytes)
      if (hash !== step.charm.hash) throw new InvalidInputError(component, `the controller to store charm ${step.charm.dir} as ${step.charm.hash}`, hash)
      expectOk(await client.submit({ type: 'add-charm', url: step.url, hash, metadata: step.charm.summary }))
    } else if (step.kind === 'resource') {
      await uploadResource(component, client, step.file)
    } else if (step.kind === 'machine') {
      if (step.body === undefined) { machines.set(step.ref, step.existing ?? ''); continue }
      const result = expectOk(await client.submit(step.body))
      machines.set(step.ref, result.machines?.[0] ?? '')
    } else if (step.body !== undefined) {
      const body = step.placementRefs === undefined ? step.body : placed(step.body, step.placementRefs.map(ref => machines.get(ref)!))
      const result = expectOk(await client.submit(body))
      if (body.type === 'deploy' || body.type === 'add-unit') {
        for (const unit of result.units ?? []) out(`  - unit ${unit}`)
      }
    }
  }
}

/** Everything `deploy` does, from the arguments on (the action, minus connecting). */
export async function runDeploy (connect: Connect, target: string, application: string | undefined, options: DeployOptions, out: Out): Promise<void> {
  const request = deployRequest(target, application, options)
  const dirs = request.kind === 'charm' ? [request.dir] : [...new Set(request.bundle.applications.map(a => a.charm))]
  const charms = new Map<string, PreparedCharm>()
  for (const dir of dirs) charms.set(resolve(dir), await prepareCharm(dir))
  const client = await connect()
  const plan = planDeploy(request, charms, await readModel(client))
  if (request.kind === 'bundle' && !plan.steps.some(sends)) {
    out('No changes to apply.')
    return
  }
  if (request.kind === 'bundle') out('Executing changes:')
  await executePlan(client, plan, out)
  if (request.kind === 'bundle') out('Deploy of bundle completed.')
}

export interface DeployOptions {
  n?: string
  to?: string
  config?: string[]
  constraints?: string
  trust?: boolean
  storage?: string[]
  resource?: string[]
  mapMachines?: string
}

/** Checks the command line and reads the files it names; nothing is sent. */
export function deployRequest (target: string, application: string | undefined, options: DeployOptions): DeployRequest {
  if (isBundlePath(target)) {
    for (const [flag, given] of [['-n', options.n], ['--to', options.to], ['--config', options.config?.length === 0 ? undefined : options.config], ['--constraints', options.constraints], ['--storage', options.storage?.length === 0 ? undefined : options.storage], ['--resource', options.resource?.length === 0 ? undefined : options.resource], ['application', application]] as const) {
      if (given !== undefined) throw new InvalidInputError(component, `no ${flag} with a bundle (the bundle says)`, Array.isArray(given) ? given.join(' ') : given)
    }
    if (options.mapMachines !== undefined && options.mapMachines !== 'existing') throw new InvalidInputError(component, '--map-machines existing', options.mapMachines)
    return { kind: 'bundle', bundle: readBundle(component, target), ...(options.mapMachines === undefined ? {} : { mapMachines: true }) }
  }
  if (application !== undefined) checkApplication(component, application)
  const numUnits = options.n === undefined ? undefined : parseCount(component, options.n, 1)
  const to = parseMachineList(component, options.to)
  const configFiles: Array<{ file: string, values: unknown }> = []
  const pairs: string[] = []
  for (const item of options.config ?? []) {
    if (!item.includes('=') && /\.ya?ml$/i.test(item)) {
      let values: unknown
      try {
        values = parseYaml(readFileSync(item, 'utf8')) as unknown
      } catch (error) {
        throw new InvalidInputError(component, '--config file.yaml to be a readable YAML file', item, { cause: error })
      }
      configFiles.push({ file: item, values })
    } else {
      pairs.push(item)
    }
  }
  const configPairs = parseKeyValues(component, pairs, '--config key=value or --config file.yaml')
  const constraints = parseConstraintText(options.constraints ?? '', got => { throw new InvalidInputError(component, '--constraints like "mem=4G cores=2"', got) })
  const parsed = parseStorageDirectives(options.storage ?? [])
  if ('error' in parsed) throw new InvalidInputError(component, `--storage NAME=[COUNT,][SIZE] like "data=10G" or "data=2,10G" (${parsed.error})`, (options.storage ?? []).join(' '))
  const storage = parsed.directives
  const resources = [...parseResourceArgs(component, options.resource ?? [])].map(([name, path]) => readResourceFile(component, name, path))
  return { kind: 'charm', dir: target, ...(application === undefined ? {} : { application }), ...(numUnits === undefined ? {} : { numUnits }), to, configFiles, configPairs, constraints, trust: options.trust === true, storage, ...(resources.length === 0 ? {} : { resources }) }
}

/** Whether the step sends anything to the controllers. */
export function sends (step: DeployStep): boolean {
  return step.kind === 'charm' ? !step.exists : step.kind === 'resource' || step.body !== undefined
}

/** A unit-creating command placed on machines made earlier in the plan (no other command takes a placement). */
function placed (body: ModelCommandBody, placement: string[]): ModelCommandBody {
  return body.type === 'deploy' || body.type === 'add-unit' ? { ...body, placement } : body
}

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export const registerDeploy: RegisterCommand = (program, context) => {
  program.command('deploy')
    .description('deploy a local charm directory, a .charm archive or a bundle')
    .addHelpText('after', '\nExamples:\n  cantrip deploy ./charms/kv\n  cantrip deploy ./charms/kv store -n 2 --config port=8080\n  cantrip deploy examples/bundle.yaml')
    .argument('<charm-or-bundle>', 'a charm directory, a .charm file or a bundle .yaml file')
    .argument('[application]', 'application name (default: the charm name)')
    .option('-n, --num-units <n>', 'number of units to add')
    .option('--to <machines>', 'machines for the units in turn, e.g. 0,1')
    .option('--config <key=value|file.yaml>', 'option value, or a YAML file of application: {option: value} (repeatable)', collect, [])
    .option('--constraints <constraints>', 'machine constraints, e.g. "mem=4G cores=2"')
    .option('--trust', 'grant the charm access to cloud credentials')
    .option('--storage <directive>', 'storage for each unit, NAME=[COUNT,][SIZE] e.g. data=10G (repeatable)', collect, [])
    .option('--resource <name=path>', 'a file for one of the charm\'s resources (repeatable)', collect, [])
    .option('--map-machines <existing>', 'with a bundle: use the model\'s machines with the ids of the bundle\'s machines')
    .option(controllerFlags, controllerHelp)
    .action(async (target: string, application: string | undefined, options: DeployOptions & { numUnits?: string, controller?: string }) => {
      const parsed: DeployOptions = { ...options, ...(options.numUnits === undefined ? {} : { n: options.numUnits }) }
      await runDeploy(async () => await context.connect(options.controller), target, application, parsed, context.out)
    })
}
