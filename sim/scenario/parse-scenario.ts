import { dirname, resolve } from 'node:path'
import { parse } from 'yaml'
import { endpointMap, readCharmEndpoints } from './charm-endpoints.ts'
import { Fields, join, type Json, type YamlMap } from './scenario-fields.ts'
import { agentRaftTiming } from '../system/system-world.ts'
import { limits } from '../../runtime/limits.ts'
import type {
  FaultEvent, FaultTarget, HookBehaviour, PartitionShape, PlantedBug, RandomFaults, Scenario, ScenarioApplication, ScenarioCharm, WorkloadCommand
} from './scenario-types.ts'

/**
 * A scenario file (YAML, kebab-case keys, durations as `2s`/`500ms`/ms numbers) → the
 * Scenario the runner takes (camelCase, ms), with every field checked, unknown keys
 * refused, defaults filled in and every reference resolved: applications name declared
 * charms, relation endpoints exist on their charms with matching interfaces, fault
 * targets are well-formed and hook faults name units of declared applications. A charm
 * with `path:` gets its endpoints from that directory's metadata.yaml (the path is
 * resolved against the scenario file's directory and kept absolute, so a scenario
 * written elsewhere — a shrunk one — still finds it).
 */

export const scenarioDefaults = {
  seed: 1,
  controllers: 3,
  /** Cloud nodes beyond the units the scenario can ever ask for. */
  spareNodes: 8,
  networkLatencyMs: [1, 10] as [number, number],
  /** The heal phase starts this long after the last fault or command. */
  healAfterMs: 2_000,
  livenessBudgetMs: 120_000,
  providerLatencyMs: { allocate: 200, deploy: 3_000, release: 500 },
  randomProfile: 'mixed'
} as const

/** Bounds that keep a scenario file from asking for more than a run can hold. */
export const scenarioLimits = {
  unitsPerCommandMax: 10_000,
  nodesMax: 100_000,
  eventsMax: 100_000,
  writesRateMax: 10_000,
  seedMax: 2 ** 32 - 1
} as const

const namePattern = /^[a-z0-9-]+$/
const entityPattern = /^[a-z][a-z0-9-]*$/
const unitPattern = /^([a-z][a-z0-9-]*)\/(\d+)$/
const controllerCounts = [1, 3, 5] as const
const bugs: readonly PlantedBug[] = ['raft-commit-previous-term']
const statuses = ['active', 'blocked', 'waiting', 'maintenance'] as const
const unitHooks = ['install', 'start', 'config-changed', 'upgrade-charm', 'stop', 'remove', 'leader-elected', 'leader-settings-changed', 'update-status']
const relationHookSuffixes = ['relation-created', 'relation-joined', 'relation-changed', 'relation-departed', 'relation-broken']
const providerSteps = ['allocate', 'deploy', 'release'] as const

const topKeys = ['name', 'description', 'seed', 'controllers', 'provider', 'raft', 'network', 'charms', 'applications', 'relations', 'workload', 'faults', 'random-faults', 'faults-until', 'liveness', 'bugs']

export function parseScenario (text: string, sourcePath = '<scenario>'): Scenario {
  const f = new Fields(sourcePath)
  let doc: Json
  try {
    doc = parse(text, { version: '1.2', schema: 'core', uniqueKeys: true, merge: false })
  } catch (error) {
    return f.refuse('', 'valid YAML', String((error as Error).message).split('\n')[0]!)
  }
  const top = f.map(doc, '', topKeys)
  const baseDir = sourcePath === '<scenario>' ? process.cwd() : dirname(resolve(sourcePath))

  const name = f.string(top['name'], 'name', namePattern, 'a name of a-z, 0-9 and -')
  const description = top['description'] === undefined ? '' : f.string(top['description'], 'description')
  const seed = top['seed'] === undefined ? scenarioDefaults.seed : f.integer(top['seed'], 'seed', 0, scenarioLimits.seedMax)
  const controllers = top['controllers'] === undefined ? scenarioDefaults.controllers : f.integer(top['controllers'], 'controllers', 1, 5)
  if (!(controllerCounts as readonly number[]).includes(controllers)) f.fail('controllers', '1, 3 or 5', controllers)

  const charms = parseCharms(f, top['charms'], baseDir)
  const applications = parseApplications(f, top['applications'], charms)
  const context = new References(f, charms, applications, controllers)
  const workload = f.optionalList(top['workload'], 'workload').map((item, i) => parseCommand(f, context, item, join('workload', i)))
  context.addDeployed(workload)
  workload.forEach((command, i) => context.command(command, join('workload', i)))
  const relations = f.optionalList(top['relations'], 'relations').map((item, i) => context.relation(item, join('relations', i)))
  const faults = f.optionalList(top['faults'], 'faults').map((item, i) => parseFault(f, context, item, join('faults', i)))
  const randomFaults = top['random-faults'] === undefined ? undefined : parseRandomFaults(f, top['random-faults'])

  const lastMs = Math.max(0,
    ...faults.map(e => e.at),
    ...workload.map(c => c.do === 'writes' ? Math.max(c.at, c.untilMs) : c.at),
    randomFaults?.untilMs ?? 0)
  const faultsUntilMs = top['faults-until'] === undefined ? lastMs + scenarioDefaults.healAfterMs : f.duration(top['faults-until'], 'faults-until')
  faults.forEach((event, i) => {
    if (event.at > faultsUntilMs) f.refuse(join(join('faults', i), 'at'), `a time no later than faults-until (${faultsUntilMs}ms)`, `${event.at}ms`)
  })
  if (randomFaults !== undefined && randomFaults.untilMs > faultsUntilMs) f.refuse('random-faults.until', `a time no later than faults-until (${faultsUntilMs}ms)`, `${randomFaults.untilMs}ms`)
  const liveness = f.optionalMap(top['liveness'], 'liveness', ['budget'])
  const livenessBudgetMs = liveness['budget'] === undefined ? scenarioDefaults.livenessBudgetMs : f.duration(liveness['budget'], 'liveness.budget')
  if (livenessBudgetMs === 0) f.fail('liveness.budget', 'a duration above 0', liveness['budget'])

  const scenario: Scenario = {
    name,
    description,
    seed,
    controllers,
    provider: parseProvider(f, top['provider'], unitsEver(applications, workload)),
    network: parseNetwork(f, top['network']),
    charms,
    applications,
    relations,
    workload,
    faults,
    faultsUntilMs,
    livenessBudgetMs,
    bugs: f.optionalList(top['bugs'], 'bugs').map((bug, i) => f.oneOf(bug, join('bugs', i), bugs))
  }
  if (top['raft'] !== undefined) scenario.raft = parseRaft(f, top['raft'])
  if (randomFaults !== undefined) scenario.randomFaults = randomFaults
  return scenario
}

/** Every unit the deployment and the workload may ask for, to size the default cloud. */
function unitsEver (applications: readonly ScenarioApplication[], workload: readonly WorkloadCommand[]): number {
  let units = applications.reduce((sum, app) => sum + app.units, 0)
  for (const command of workload) if (command.do === 'add-unit' || command.do === 'deploy') units += command.units
  return units
}

function parseProvider (f: Fields, value: Json, units: number): Scenario['provider'] {
  const provider = f.optionalMap(value, 'provider', ['nodes', 'latency', 'failure-rates', 'starts-in-flight'])
  const latency = f.optionalMap(provider['latency'], 'provider.latency', providerSteps)
  const rates = f.optionalMap(provider['failure-rates'], 'provider.failure-rates', providerSteps)
  const latencyMs: Scenario['provider']['latencyMs'] = { ...scenarioDefaults.providerLatencyMs }
  const failureRates = { allocate: 0, deploy: 0, release: 0 }
  for (const step of providerSteps) {
    if (latency[step] !== undefined) latencyMs[step] = f.duration(latency[step], `provider.latency.${step}`)
    if (rates[step] !== undefined) failureRates[step] = f.probability(rates[step], `provider.failure-rates.${step}`)
  }
  const nodes = provider['nodes'] === undefined ? units + scenarioDefaults.spareNodes : f.integer(provider['nodes'], 'provider.nodes', 1, scenarioLimits.nodesMax)
  const parsed: Scenario['provider'] = { nodes, latencyMs, failureRates }
  if (provider['starts-in-flight'] !== undefined) parsed.startsInFlight = f.integer(provider['starts-in-flight'], 'provider.starts-in-flight', 1, scenarioLimits.nodesMax)
  return parsed
}

function parseNetwork (f: Fields, value: Json): Scenario['network'] {
  const network = f.optionalMap(value, 'network', ['latency'])
  if (network['latency'] === undefined) return { latencyMs: [...scenarioDefaults.networkLatencyMs] }
  return { latencyMs: durationRange(f, network['latency'], 'network.latency') }
}

/** `[1ms, 10ms]`: a min and max duration, min ≤ max. */
function durationRange (f: Fields, value: Json, where: string): [number, number] {
  const list = f.list(value, where)
  if (list.length !== 2) f.fail(where, 'a list of two durations [min, max]', value)
  const min = f.duration(list[0], join(where, 0))
  const max = f.duration(list[1], join(where, 1))
  if (max < min) f.refuse(join(where, 1), `a duration no shorter than the minimum (${min}ms)`, `${max}ms`)
  return [min, max]
}

function parseRaft (f: Fields, value: Json): NonNullable<Scenario['raft']> {
  const raft = f.map(value, 'raft', ['tick', 'election-ticks', 'heartbeat-ticks', 'max-message-bytes', 'snapshot-every'])
  const tickMs = raft['tick'] === undefined ? agentRaftTiming.tickMs : f.duration(raft['tick'], 'raft.tick')
  if (tickMs === 0) f.fail('raft.tick', 'a duration above 0', raft['tick'])
  const electionTicks = raft['election-ticks'] === undefined ? agentRaftTiming.electionTicks : f.integer(raft['election-ticks'], 'raft.election-ticks', 2, 1_000)
  const heartbeatTicks = raft['heartbeat-ticks'] === undefined ? Math.min(agentRaftTiming.heartbeatTicks, electionTicks - 1) : f.integer(raft['heartbeat-ticks'], 'raft.heartbeat-ticks', 1, electionTicks - 1)
  const parsed: NonNullable<Scenario['raft']> = { tickMs, electionTicks, heartbeatTicks }
  // Below a few hundred bytes no command fits in one append at all.
  if (raft['max-message-bytes'] !== undefined) parsed.maxMessageBytes = f.integer(raft['max-message-bytes'], 'raft.max-message-bytes', 256, 64 * 1024 * 1024)
  if (raft['snapshot-every'] !== undefined) parsed.snapshotEveryEntries = f.integer(raft['snapshot-every'], 'raft.snapshot-every', 1, limits.raftSnapshotEveryEntries)
  return parsed
}

function parseCharms (f: Fields, value: Json, baseDir: string): Record<string, ScenarioCharm> {
  const charms: Record<string, ScenarioCharm> = {}
  for (const [name, spec] of Object.entries(f.map(value, 'charms'))) {
    const where = join('charms', name)
    if (!entityPattern.test(name)) f.fail(where, 'a charm name like kv or web', name)
    const body = f.optionalMap(spec, where, ['path', 'provides', 'requires', 'peers', 'subordinate', 'hooks'])
    let charm: ScenarioCharm
    if (body['path'] !== undefined) {
      for (const key of ['provides', 'requires', 'peers', 'subordinate']) {
        if (body[key] !== undefined) f.fail(join(where, key), 'no endpoints beside path: (they come from its metadata.yaml)', body[key])
      }
      const path = resolve(baseDir, f.string(body['path'], join(where, 'path'), /./, 'a charm directory'))
      charm = { name, path, ...readCharmEndpoints(path), hooks: {} }
    } else {
      const subordinate = body['subordinate'] ?? false
      if (typeof subordinate !== 'boolean') f.fail(join(where, 'subordinate'), 'true or false', subordinate)
      charm = {
        name,
        provides: endpointMap(f, body['provides'], join(where, 'provides'), ['interface']),
        requires: endpointMap(f, body['requires'], join(where, 'requires'), ['interface']),
        peers: endpointMap(f, body['peers'], join(where, 'peers'), ['interface']),
        subordinate,
        hooks: {}
      }
    }
    const endpoints = [...Object.keys(charm.provides), ...Object.keys(charm.requires), ...Object.keys(charm.peers)]
    if (new Set(endpoints).size !== endpoints.length) f.fail(where, 'each endpoint name once across provides, requires and peers', endpoints.join(', '))
    for (const [hook, behaviour] of Object.entries(f.optionalMap(body['hooks'], join(where, 'hooks')))) {
      const at = join(join(where, 'hooks'), hook)
      if (hook !== '*' && !hookNames(charm).includes(hook)) f.fail(at, `* or a hook of charm ${name} (${hookNames(charm).slice(0, 4).join(', ')}, ...)`, hook)
      charm.hooks[hook] = parseHook(f, behaviour, at)
    }
    charms[name] = charm
  }
  return charms
}

/** Every hook a charm can run: the unit hooks and each endpoint's relation hooks. */
export function hookNames (charm: ScenarioCharm): string[] {
  const endpoints = [...Object.keys(charm.provides), ...Object.keys(charm.requires), ...Object.keys(charm.peers)]
  return [...unitHooks, ...endpoints.flatMap(endpoint => relationHookSuffixes.map(suffix => `${endpoint}-${suffix}`))]
}

function parseHook (f: Fields, value: Json, where: string): HookBehaviour {
  const hook = f.optionalMap(value, where, ['duration', 'fail-times', 'fail-probability', 'status', 'message', 'relation-set', 'leader-set'])
  const out: HookBehaviour = {}
  if (hook['duration'] !== undefined) {
    out.durationMs = Array.isArray(hook['duration']) ? durationRange(f, hook['duration'], join(where, 'duration')) : f.duration(hook['duration'], join(where, 'duration'))
  }
  if (hook['fail-times'] !== undefined) out.failTimes = f.integer(hook['fail-times'], join(where, 'fail-times'), 0, 1_000)
  if (hook['fail-probability'] !== undefined) out.failProbability = f.probability(hook['fail-probability'], join(where, 'fail-probability'))
  if (hook['status'] !== undefined) {
    out.status = { status: f.oneOf(hook['status'], join(where, 'status'), statuses) }
    if (hook['message'] !== undefined) out.status.message = f.string(hook['message'], join(where, 'message'))
  } else if (hook['message'] !== undefined) f.fail(join(where, 'message'), 'a message only with a status', hook['message'])
  if (hook['relation-set'] !== undefined) out.relationSet = f.strings(hook['relation-set'], join(where, 'relation-set'))
  if (hook['leader-set'] !== undefined) out.leaderSet = f.strings(hook['leader-set'], join(where, 'leader-set'))
  return out
}

function parseApplications (f: Fields, value: Json, charms: Record<string, ScenarioCharm>): ScenarioApplication[] {
  return Object.entries(f.optionalMap(value, 'applications')).map(([name, spec]) => {
    const where = join('applications', name)
    if (!entityPattern.test(name)) f.fail(where, 'an application name like kv or web', name)
    const app = f.optionalMap(spec, where, ['charm', 'units', 'config', 'to'])
    const charm = app['charm'] === undefined ? name : f.string(app['charm'], join(where, 'charm'))
    if (charms[charm] === undefined) f.fail(join(where, 'charm'), `a charm declared under charms: (${Object.keys(charms).join(', ') || 'none'})`, charm)
    const units = app['units'] === undefined ? 1 : f.integer(app['units'], join(where, 'units'), 0, scenarioLimits.unitsPerCommandMax)
    const parsed: ScenarioApplication = { name, charm, units, config: f.config(app['config'], join(where, 'config')) }
    if (app['to'] !== undefined) parsed.to = parsePlacement(f, app['to'], join(where, 'to'), units)
    return parsed
  })
}

/** `to: [0, 1]`: a machine id for each unit in turn, at most one per unit. */
function parsePlacement (f: Fields, value: Json, where: string, units: number): string[] {
  const list = f.list(value, where)
  if (list.length > units) f.fail(where, `at most ${units} machines (one per unit)`, `${list.length}`)
  return list.map((item, i) => {
    const id = typeof item === 'number' ? String(item) : item
    if (typeof id !== 'string' || !/^(0|[1-9][0-9]*)$/.test(id)) f.fail(`${where}[${i}]`, 'a machine id like 0 or 12', item)
    return id
  })
}

/** What names in the scenario may refer to: charms, applications (declared or deployed by the workload), controllers. */
class References {
  readonly #apps = new Map<string, string>()

  constructor (readonly f: Fields, readonly charms: Record<string, ScenarioCharm>, applications: readonly ScenarioApplication[], readonly controllers: number) {
    for (const app of applications) this.#apps.set(app.name, app.charm)
  }

  addDeployed (workload: readonly WorkloadCommand[]): void {
    for (const command of workload) if (command.do === 'deploy') this.#apps.set(command.application, command.charm)
  }

  /** The names a workload command refers to (checked once every deployed application is known). */
  command (command: WorkloadCommand, where: string): void {
    switch (command.do) {
      case 'add-unit': case 'remove-application': case 'config': this.application(command.application, join(where, 'application')); break
      case 'remove-unit': this.unit(command.unit, join(where, 'unit')); break
      case 'integrate': case 'remove-relation': this.relation(command.endpoints, join(where, 'endpoints')); break
      default: break
    }
  }

  charm (name: Json, where: string): string {
    const charm = this.f.string(name, where)
    if (this.charms[charm] === undefined) this.f.fail(where, `a charm declared under charms: (${Object.keys(this.charms).join(', ') || 'none'})`, charm)
    return charm
  }

  application (name: Json, where: string): string {
    const app = this.f.string(name, where)
    if (!this.#apps.has(app)) this.f.fail(where, `an application of the scenario (${[...this.#apps.keys()].join(', ') || 'none'})`, app)
    return app
  }

  /** A unit `app/N` of a known application. */
  unit (name: Json, where: string): string {
    const unit = this.f.string(name, where, unitPattern, 'a unit like kv/0')
    this.application(unit.split('/')[0], where)
    return unit
  }

  /** A unit `app/N`, or an application (all its units), for hook faults; the hook must be one its charm has. */
  hookTarget (name: Json, hook: Json, where: string): { unit: string, hook: string } {
    const unit = this.f.string(name, join(where, 'unit'), /^[a-z][a-z0-9-]*(\/\d+)?$/, 'a unit like kv/0 or an application like kv')
    const app = unit.split('/')[0]!
    this.application(app, join(where, 'unit'))
    const charm = this.charms[this.#apps.get(app)!]!
    const hookName = this.f.string(hook, join(where, 'hook'))
    if (!hookNames(charm).includes(hookName)) this.f.fail(join(where, 'hook'), `a hook of charm ${charm.name}`, hookName)
    return { unit, hook: hookName }
  }

  target (value: Json, where: string): FaultTarget {
    const target = this.f.string(value, where, /^(leader|follower|controller\/\d+|machine\/\d+)$/, 'leader, follower, controller/N or machine/N')
    if (target.startsWith('controller/') && Number(target.slice('controller/'.length)) >= this.controllers) {
      this.f.fail(where, `a controller from controller/0 to controller/${this.controllers - 1}`, target)
    }
    return target as FaultTarget
  }

  /** `[web:backend, kv:db]`: both endpoints exist, one provides and one requires the same interface (or both name one peer endpoint). */
  relation (value: Json, where: string): [string, string] {
    const list = this.f.list(value, where)
    if (list.length !== 2) this.f.fail(where, 'two endpoints like [web:backend, kv:db]', value)
    const ends = list.map((item, i) => {
      const at = join(where, i)
      const text = this.f.string(item, at, /^[a-z][a-z0-9-]*:[a-z][a-z0-9-]*$/, 'an endpoint like kv:db')
      const [app, endpoint] = text.split(':') as [string, string]
      this.application(app, at)
      const charm = this.charms[this.#apps.get(app)!]!
      const role = charm.provides[endpoint] !== undefined ? 'provides' : charm.requires[endpoint] !== undefined ? 'requires' : charm.peers[endpoint] !== undefined ? 'peers' : undefined
      if (role === undefined) this.f.fail(at, `an endpoint of charm ${charm.name} (${hookEndpoints(charm)})`, endpoint)
      return { text, role, iface: charm[role][endpoint]! }
    }) as [{ text: string, role: string, iface: string }, { text: string, role: string, iface: string }]
    const [a, b] = ends
    const roles = [a.role, b.role].sort().join('+')
    if (roles !== 'provides+requires') this.f.refuse(where, 'one provides and one requires endpoint', `${a.role} and ${b.role}`)
    if (a.iface !== b.iface) this.f.refuse(where, 'endpoints of one interface', `${a.iface} and ${b.iface}`)
    return [a.text, b.text]
  }
}

function hookEndpoints (charm: ScenarioCharm): string {
  return [...Object.keys(charm.provides), ...Object.keys(charm.requires), ...Object.keys(charm.peers)].join(', ') || 'none'
}

const commandKeys: Record<WorkloadCommand['do'], readonly string[]> = {
  deploy: ['application', 'charm', 'units', 'config'],
  'add-unit': ['application', 'units'],
  'remove-unit': ['unit'],
  'remove-application': ['application'],
  config: ['application', 'config'],
  integrate: ['endpoints'],
  'remove-relation': ['endpoints'],
  writes: ['rate', 'until']
}

function parseCommand (f: Fields, refs: References, value: Json, where: string): WorkloadCommand {
  const kind = f.oneOf(f.map(value, where)['do'], join(where, 'do'), Object.keys(commandKeys) as Array<WorkloadCommand['do']>)
  const c = f.map(value, where, ['at', 'do', ...commandKeys[kind]])
  const at = f.duration(c['at'], join(where, 'at'))
  const units = (): number => c['units'] === undefined ? 1 : f.integer(c['units'], join(where, 'units'), 1, scenarioLimits.unitsPerCommandMax)
  const endpoints = (): [string, string] => {
    const list = f.list(c['endpoints'], join(where, 'endpoints'))
    if (list.length !== 2) f.fail(join(where, 'endpoints'), 'two endpoints like [web:backend, kv:db]', c['endpoints'])
    return [f.string(list[0], join(join(where, 'endpoints'), 0)), f.string(list[1], join(join(where, 'endpoints'), 1))]
  }
  switch (kind) {
    case 'deploy': {
      const application = f.string(c['application'], join(where, 'application'), entityPattern, 'an application name like kv')
      const command: WorkloadCommand = { at, do: kind, application, charm: refs.charm(c['charm'] ?? application, join(where, 'charm')), units: units() }
      if (c['config'] !== undefined) command.config = f.config(c['config'], join(where, 'config'))
      return command
    }
    case 'add-unit': return { at, do: kind, application: f.string(c['application'], join(where, 'application')), units: units() }
    case 'remove-unit': return { at, do: kind, unit: f.string(c['unit'], join(where, 'unit'), unitPattern, 'a unit like kv/0') }
    case 'remove-application': return { at, do: kind, application: f.string(c['application'], join(where, 'application')) }
    case 'config': return { at, do: kind, application: f.string(c['application'], join(where, 'application')), config: f.config(c['config'], join(where, 'config')) }
    case 'integrate': return { at, do: kind, endpoints: endpoints() }
    case 'remove-relation': return { at, do: kind, endpoints: endpoints() }
    case 'writes': {
      const untilMs = f.duration(c['until'], join(where, 'until'))
      if (untilMs <= at) f.refuse(join(where, 'until'), `a time after at (${at}ms)`, `${untilMs}ms`)
      const ratePerS = f.number(c['rate'], join(where, 'rate'), Number.MIN_VALUE, scenarioLimits.writesRateMax)
      return { at, do: kind, ratePerS, untilMs }
    }
  }
}

const faultKeys: Record<FaultEvent['kind'], readonly string[]> = {
  crash: ['target'],
  restart: ['target'],
  pause: ['target', 'for'],
  resume: ['target'],
  partition: ['shape', 'target', 'minority', 'groups', 'bridge', 'from', 'to', 'machines', 'for'],
  heal: [],
  'reset-connection': ['from', 'to'],
  loss: ['probability', 'for'],
  duplicate: ['probability', 'for'],
  delay: ['min', 'max', 'for'],
  reorder: ['probability', 'extra-max', 'for'],
  'clock-drift': ['target', 'rate'],
  'disk-error': ['target', 'writes'],
  'disk-full': ['target', 'for'],
  'provider-failure': ['step', 'rate', 'for'],
  'hook-fail': ['unit', 'hook', 'times'],
  'hook-hang': ['unit', 'hook', 'for']
}

const partitionKeys: Record<string, readonly string[]> = {
  isolate: ['target'],
  'majority-minority': ['minority'],
  split: ['groups'],
  bridge: ['bridge'],
  'one-way': ['from', 'to'],
  'machines-from-controllers': ['machines']
}

/** A fault event; every kind's own keys only, `for:` → forMs where the kind lasts. */
function parseFault (f: Fields, refs: References, value: Json, where: string): FaultEvent {
  const kind = f.oneOf(f.map(value, where)['kind'], join(where, 'kind'), Object.keys(faultKeys) as Array<FaultEvent['kind']>)
  const e = f.map(value, where, ['at', 'kind', ...faultKeys[kind]])
  const at = f.duration(e['at'], join(where, 'at'))
  const forMs = (): { forMs?: number } => e['for'] === undefined ? {} : { forMs: f.duration(e['for'], join(where, 'for')) }
  const target = (key = 'target'): FaultTarget => refs.target(e[key], join(where, key))
  const probability = (): number => f.probability(e['probability'], join(where, 'probability'))
  switch (kind) {
    case 'crash': case 'restart': case 'resume': return { at, kind, target: target() }
    case 'pause': return { at, kind, target: target(), ...forMs() }
    case 'heal': return { at, kind }
    case 'reset-connection': return { at, kind, from: target('from'), to: target('to') }
    case 'loss': case 'duplicate': return { at, kind, probability: probability(), ...forMs() }
    case 'delay': {
      const [minMs, maxMs] = durationRange(f, [e['min'], e['max']], where)
      return { at, kind, minMs, maxMs, ...forMs() }
    }
    case 'reorder': return { at, kind, probability: probability(), extraMaxMs: f.duration(e['extra-max'], join(where, 'extra-max')), ...forMs() }
    case 'clock-drift': return { at, kind, target: target(), rate: f.number(e['rate'], join(where, 'rate'), -0.5, 0.5) }
    case 'disk-error': return { at, kind, target: target(), writes: f.integer(e['writes'] ?? 1, join(where, 'writes'), 1, 1_000_000) }
    case 'disk-full': return { at, kind, target: target(), ...forMs() }
    case 'provider-failure': return { at, kind, step: f.oneOf(e['step'] ?? 'all', join(where, 'step'), [...providerSteps, 'all'] as const), rate: f.probability(e['rate'] ?? 1, join(where, 'rate')), ...forMs() }
    case 'hook-fail': return { at, kind, ...refs.hookTarget(e['unit'], e['hook'], where), times: f.integer(e['times'] ?? 1, join(where, 'times'), 1, 1_000) }
    case 'hook-hang': return { at, kind, ...refs.hookTarget(e['unit'], e['hook'], where), ...forMs() }
    case 'partition': return { at, kind, ...forMs(), ...parsePartition(f, refs, e, where) } as FaultEvent
  }
}

function parsePartition (f: Fields, refs: References, e: YamlMap, where: string): PartitionShape {
  const shape = f.oneOf(e['shape'], join(where, 'shape'), Object.keys(partitionKeys))
  for (const key of Object.keys(e)) {
    if (!['at', 'kind', 'shape', 'for', ...partitionKeys[shape]!].includes(key)) f.refuse(join(where, key), `only ${partitionKeys[shape]!.join(', ')} and for with shape ${shape}`, `unknown key ${JSON.stringify(key)}`)
  }
  switch (shape) {
    case 'isolate': return { shape, target: refs.target(e['target'], join(where, 'target')) }
    case 'majority-minority': {
      const largest = Math.floor((refs.controllers - 1) / 2)
      if (largest < 1) f.fail(join(where, 'minority'), 'a partition of 3 or 5 controllers (this scenario has 1)', e['minority'])
      return { shape, minority: f.integer(e['minority'] ?? 1, join(where, 'minority'), 1, largest) }
    }
    case 'split': {
      const groups = f.list(e['groups'], join(where, 'groups')).map((group, g) =>
        f.list(group, join(join(where, 'groups'), g)).map((member, m) => {
          const at = join(join(join(where, 'groups'), g), m)
          const target = refs.target(member, at)
          if (target === 'leader' || target === 'follower') f.fail(at, 'controller/N or machine/N', target)
          return target as string
        }))
      if (groups.length < 2 || groups.some(group => group.length === 0)) f.fail(join(where, 'groups'), 'two or more non-empty groups', e['groups'])
      return { shape, groups }
    }
    case 'bridge': return { shape, bridge: refs.target(e['bridge'], join(where, 'bridge')) }
    case 'one-way': return { shape, from: refs.target(e['from'], join(where, 'from')), to: refs.target(e['to'], join(where, 'to')) }
    default: {
      const machines = e['machines'] ?? 'all'
      if (machines === 'all') return { shape: 'machines-from-controllers', machines }
      const list = f.list(machines, join(where, 'machines')).map((m, i) => f.string(m, join(join(where, 'machines'), i), /^machine\/\d+$/, 'machine/N'))
      return { shape: 'machines-from-controllers', machines: list }
    }
  }
}

function parseRandomFaults (f: Fields, value: Json): RandomFaults {
  const r = f.map(value, 'random-faults', ['profile', 'events', 'from', 'until'])
  const fromMs = r['from'] === undefined ? 0 : f.duration(r['from'], 'random-faults.from')
  const untilMs = f.duration(r['until'], 'random-faults.until')
  if (untilMs <= fromMs) f.refuse('random-faults.until', `a time after from (${fromMs}ms)`, `${untilMs}ms`)
  return {
    profile: r['profile'] === undefined ? scenarioDefaults.randomProfile : f.string(r['profile'], 'random-faults.profile', entityPattern, 'a profile name like mixed'),
    events: f.integer(r['events'], 'random-faults.events', 0, scenarioLimits.eventsMax),
    fromMs,
    untilMs
  }
}
