import { Document, isMap, isSeq } from 'yaml'
import type { FaultEvent, HookBehaviour, Scenario, ScenarioCharm, WorkloadCommand } from './scenario-types.ts'

/**
 * A Scenario → scenario YAML in the file format parse-scenario.ts reads, with every
 * default written out, so `parseScenario(scenarioToYaml(s))` deep-equals `s`. Used for
 * shrunk scenarios: the minimal fault list as an ordinary file a user can read, edit and
 * replay. A charm with a path keeps it (absolute) and gets its endpoints from it again.
 */
export function scenarioToYaml (s: Scenario): string {
  const doc: Record<string, unknown> = {
    name: s.name,
    description: s.description,
    seed: s.seed,
    controllers: s.controllers,
    provider: {
      nodes: s.provider.nodes,
      latency: mapValues(s.provider.latencyMs, duration),
      'failure-rates': { ...s.provider.failureRates },
      ...(s.provider.startsInFlight === undefined ? {} : { 'starts-in-flight': s.provider.startsInFlight })
    },
    ...(s.raft === undefined ? {} : { raft: { tick: duration(s.raft.tickMs), 'election-ticks': s.raft.electionTicks, 'heartbeat-ticks': s.raft.heartbeatTicks, ...(s.raft.maxMessageBytes === undefined ? {} : { 'max-message-bytes': s.raft.maxMessageBytes }), ...(s.raft.snapshotEveryEntries === undefined ? {} : { 'snapshot-every': s.raft.snapshotEveryEntries }) } }),
    network: { latency: s.network.latencyMs.map(duration) },
    charms: mapValues(s.charms, charmYaml),
    applications: Object.fromEntries(s.applications.map(app => [app.name, { charm: app.charm, units: app.units, config: { ...app.config }, ...(app.to === undefined ? {} : { to: app.to.map(Number) }) }])),
    relations: s.relations.map(pair => [...pair]),
    workload: s.workload.map(commandYaml),
    faults: s.faults.map(faultYaml),
    ...(s.randomFaults === undefined
      ? {}
      : { 'random-faults': { profile: s.randomFaults.profile, events: s.randomFaults.events, from: duration(s.randomFaults.fromMs), until: duration(s.randomFaults.untilMs) } }),
    'faults-until': duration(s.faultsUntilMs),
    liveness: { budget: duration(s.livenessBudgetMs) },
    bugs: [...s.bugs]
  }
  const yaml = new Document(doc)
  // One line per relation, command and fault: a schedule reads as a list of events.
  for (const key of ['relations', 'workload', 'faults']) {
    const seq = yaml.get(key, true)
    if (isSeq(seq)) for (const item of seq.items) if (isMap(item) || isSeq(item)) item.flow = true
  }
  return yaml.toString({ lineWidth: 0 })
}

/** `5s` when whole seconds, else `500ms`. */
export function duration (ms: number): string {
  return ms % 1_000 === 0 && ms !== 0 ? `${ms / 1_000}s` : `${ms}ms`
}

function mapValues<T, U> (record: Readonly<Record<string, T>>, f: (value: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, f(value)]))
}

function charmYaml (charm: ScenarioCharm): Record<string, unknown> {
  const endpoints = charm.path !== undefined
    ? { path: charm.path }
    : { provides: { ...charm.provides }, requires: { ...charm.requires }, peers: { ...charm.peers }, subordinate: charm.subordinate }
  return { ...endpoints, hooks: mapValues(charm.hooks, hookYaml) }
}

function hookYaml (hook: HookBehaviour): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (hook.durationMs !== undefined) out['duration'] = Array.isArray(hook.durationMs) ? hook.durationMs.map(duration) : duration(hook.durationMs)
  if (hook.failTimes !== undefined) out['fail-times'] = hook.failTimes
  if (hook.failProbability !== undefined) out['fail-probability'] = hook.failProbability
  if (hook.status !== undefined) {
    out['status'] = hook.status.status
    if (hook.status.message !== undefined) out['message'] = hook.status.message
  }
  if (hook.relationSet !== undefined) out['relation-set'] = { ...hook.relationSet }
  if (hook.leaderSet !== undefined) out['leader-set'] = { ...hook.leaderSet }
  return out
}

function commandYaml (c: WorkloadCommand): Record<string, unknown> {
  const at = duration(c.at)
  switch (c.do) {
    case 'deploy': return { at, do: c.do, application: c.application, charm: c.charm, units: c.units, ...(c.config === undefined ? {} : { config: { ...c.config } }) }
    case 'add-unit': return { at, do: c.do, application: c.application, units: c.units }
    case 'remove-unit': return { at, do: c.do, unit: c.unit }
    case 'remove-application': return { at, do: c.do, application: c.application }
    case 'config': return { at, do: c.do, application: c.application, config: { ...c.config } }
    case 'integrate': case 'remove-relation': return { at, do: c.do, endpoints: [...c.endpoints] }
    case 'writes': return { at, do: c.do, rate: c.ratePerS, until: duration(c.untilMs) }
  }
}

/** One fault event in file form: kebab-case keys, durations, `for:` only where set. */
export function faultYaml (e: FaultEvent): Record<string, unknown> {
  const out: Record<string, unknown> = { at: duration(e.at), kind: e.kind }
  for (const [key, value] of Object.entries(e)) {
    if (key === 'at' || key === 'kind' || value === undefined) continue
    if (key === 'forMs') out['for'] = duration(value as number)
    else if (key === 'minMs') out['min'] = duration(value as number)
    else if (key === 'maxMs') out['max'] = duration(value as number)
    else if (key === 'extraMaxMs') out['extra-max'] = duration(value as number)
    else out[key] = Array.isArray(value) ? structuredClone(value) : value
  }
  return out
}
