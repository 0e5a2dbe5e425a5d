/**
 * Random fault schedules: a scenario's `random-faults` names a profile, and the run draws
 * a concrete list of FaultEvents from the "faults" stream of its seed. The drawn list is
 * an ordinary schedule (merged with the scenario's own faults into RunResult.faults), so
 * a failing seed can be shrunk and written back as a scenario file like any other.
 *
 * Each event stands alone: what a fault needs undone later carries its own `forMs` (or
 * is undone by the heal phase), so removing any event leaves a valid schedule. Targets
 * such as `leader` are resolved when the event fires, not when it is drawn.
 */
import type { FaultEvent, FaultTarget } from '../scenario/scenario-types.ts'
import type { Random } from '../../runtime/random.ts'

/** Profiles a scenario may name; `mixed` draws one of the others per seed. */
export const faultProfiles = ['raft', 'network', 'agents', 'cloud', 'hooks'] as const
export type FaultProfile = typeof faultProfiles[number]
export const faultProfileNames: readonly string[] = [...faultProfiles, 'mixed']

export interface DrawContext {
  fromMs: number
  untilMs: number
  /** Events to draw (a crash drawn with its restart counts as two). */
  events: number
  controllers: number
  /** Machine ids the deployment will have (targets of `machine/N`). */
  machines: readonly string[]
  /** Units the deployment will have (targets of hook faults). */
  units?: readonly string[]
  /** The controllers' election timeout: outages are drawn as a few of them. */
  electionTimeoutMs?: number
}

const electionTimeoutMsDefault = 600

/** Most events one draw may produce, whatever the scenario asks. */
export const drawnFaultEventsMax = 10_000

/** Hooks every unit runs, the usual targets of hook faults. */
const commonHooks = ['install', 'config-changed', 'start', 'leader-elected', 'update-status'] as const

type Drawer = (random: Random, at: number, context: DrawContext) => FaultEvent[]

/** The profile `mixed` stands for on this draw, or the profile itself. */
export function resolveProfile (random: Random, profile: string): FaultProfile {
  if (profile === 'mixed') return faultProfiles[random.int(0, faultProfiles.length - 1)]!
  if ((faultProfiles as readonly string[]).includes(profile)) return profile as FaultProfile
  throw new RangeError(`sim: random faults: expected a profile of ${faultProfileNames.join(', ')}, got ${JSON.stringify(profile)}`)
}

/**
 * Draws `events` fault events of `profile` at times uniform in [fromMs, untilMs), in
 * time order. A pair (crash then restart) shares the budget, so at most `events` come out.
 */
export function drawFaults (random: Random, profile: string, context: DrawContext): FaultEvent[] {
  const chosen = resolveProfile(random, profile)
  const wanted = Math.min(Math.max(0, Math.floor(context.events)), drawnFaultEventsMax)
  const span = Math.max(1, context.untilMs - context.fromMs)
  const drawn: FaultEvent[] = []
  while (drawn.length < wanted) {
    const at = context.fromMs + random.int(0, span - 1)
    const batch = drawers[chosen](random, at, context)
    drawn.push(...batch.slice(0, wanted - drawn.length))
  }
  return sortFaults(drawn)
}

/** Time order, stable for events at the same time. */
export function sortFaults (faults: readonly FaultEvent[]): FaultEvent[] {
  return faults.map((fault, i) => ({ fault, i })).sort((a, b) => a.fault.at - b.fault.at || a.i - b.i).map(x => x.fault)
}

function controller (random: Random, context: DrawContext): FaultTarget {
  return `controller/${random.int(0, Math.max(0, context.controllers - 1))}`
}

function machine (random: Random, context: DrawContext): FaultTarget {
  if (context.machines.length === 0) return 'machine/0'
  return `machine/${context.machines[random.int(0, context.machines.length - 1)]!}`
}

/** A crash, and the restart of the same controller shortly after (Figure 8 needs servers back with their logs). */
function crashAndRestart (random: Random, at: number, target: FaultTarget, downMinMs: number, downMaxMs: number): FaultEvent[] {
  return [
    { at, kind: 'crash', target },
    { at: at + random.int(downMinMs, downMaxMs), kind: 'restart', target }
  ]
}

/**
 * Controllers: crash/restart, pauses and partitions that cost the leader its seat. The
 * outages are short (a few election timeouts), so leaders change often while old
 * leaders come back holding entries of their terms that never committed: the history
 * a commit-of-a-previous-term bug (Raft §5.4.2, Figure 8) needs.
 */
const drawRaft: Drawer = (random, at, context) => {
  const roll = random.int(1, 100)
  const election = context.electionTimeoutMs ?? electionTimeoutMsDefault
  const briefly = (): number => random.int(Math.ceil(election / 2), election * 4)
  if (roll <= 20) return crashAndRestart(random, at, controller(random, context), Math.ceil(election / 4), election * 3)
  if (roll <= 30) return leaderLosesQuorum(random, at, context, election)
  if (roll <= 45) return crashAndRestart(random, at, 'leader', Math.ceil(election / 4), election * 3).map((fault, i) => i === 0 ? fault : { ...fault, target: controller(random, context) })
  if (roll <= 65) return [{ at, kind: 'partition', shape: 'isolate', target: 'leader', forMs: briefly() }]
  if (roll <= 75) return [{ at, kind: 'partition', shape: 'majority-minority', minority: Math.max(1, Math.floor((context.controllers - 1) / 2)), forMs: briefly() }]
  if (roll <= 83) return [{ at, kind: 'pause', target: random.next() < 0.5 ? 'leader' : controller(random, context), forMs: briefly() }]
  if (roll <= 88) return [{ at, kind: 'partition', shape: 'one-way', from: 'leader', to: controller(random, context), forMs: briefly() }]
  if (roll <= 93 && context.controllers >= 3) return [{ at, kind: 'partition', shape: 'bridge', bridge: controller(random, context), forMs: briefly() }]
  if (roll <= 97) return [{ at, kind: 'crash', target: 'follower' }]
  return [{ at, kind: 'clock-drift', target: controller(random, context), rate: (random.int(-20, 20)) / 1_000 }]
}

/**
 * The leader goes on taking writes it can no longer commit: a follower is down and the
 * leader is cut off until it steps down; then the follower comes back and the old
 * leader, holding the longest log, may win again and must not commit those entries of
 * its old term by counting replicas (Figure 8).
 */
function leaderLosesQuorum (random: Random, at: number, context: DrawContext, election: number): FaultEvent[] {
  const follower = controller(random, context)
  const cutMs = random.int(election * 2, election * 5)
  const isolateAt = at + random.int(0, election)
  return [
    { at, kind: 'crash', target: follower },
    { at: isolateAt, kind: 'partition', shape: 'isolate', target: 'leader', forMs: cutMs },
    { at: isolateAt + cutMs + random.int(0, election), kind: 'restart', target: follower }
  ]
}

/** The network: partitions of every shape, reset connections, loss, duplication, delay and reordering. */
const drawNetwork: Drawer = (random, at, context) => {
  const roll = random.int(1, 100)
  const forMs = random.int(300, 4_000)
  if (roll <= 15) return [{ at, kind: 'loss', probability: random.int(5, 40) / 100, forMs }]
  if (roll <= 25) return [{ at, kind: 'duplicate', probability: random.int(5, 30) / 100, forMs }]
  if (roll <= 35) {
    const minMs = random.int(5, 50)
    return [{ at, kind: 'delay', minMs, maxMs: minMs + random.int(10, 300), forMs }]
  }
  if (roll <= 45) return [{ at, kind: 'reorder', probability: random.int(5, 40) / 100, extraMaxMs: random.int(5, 100), forMs }]
  if (roll <= 55) return [{ at, kind: 'partition', shape: 'isolate', target: random.next() < 0.5 ? 'leader' : machine(random, context), forMs }]
  if (roll <= 65) return [{ at, kind: 'partition', shape: 'majority-minority', minority: Math.max(1, Math.floor((context.controllers - 1) / 2)), forMs }]
  if (roll <= 75) {
    const machines = context.machines.filter(() => random.next() < 0.5)
    return [{ at, kind: 'partition', shape: 'machines-from-controllers', machines: machines.length === 0 ? 'all' : [...machines], forMs }]
  }
  if (roll <= 83) {
    const members = [
      ...Array.from({ length: context.controllers }, (_, i) => `controller/${i}`),
      ...context.machines.map(id => `machine/${id}`)
    ]
    const left = members.filter(() => random.next() < 0.5)
    return [{ at, kind: 'partition', shape: 'split', groups: [left, members.filter(m => !left.includes(m))].filter(g => g.length > 0), forMs }]
  }
  if (roll <= 90 && context.controllers >= 3) return [{ at, kind: 'partition', shape: 'bridge', bridge: controller(random, context), forMs }]
  if (roll <= 93) return [{ at, kind: 'partition', shape: 'one-way', from: machine(random, context), to: 'leader', forMs }]
  // A machine's connection to a controller drops: its held watch (and the changes pushed on it) with it.
  if (roll <= 97) return [{ at, kind: 'reset-connection', from: machine(random, context), to: random.next() < 0.5 ? 'leader' : controller(random, context) }]
  return [{ at, kind: 'heal' }]
}

/** Machine agents: kill -9 and restart, SIGSTOP, clock drift, disk errors. */
const drawAgents: Drawer = (random, at, context) => {
  const roll = random.int(1, 100)
  const target = machine(random, context)
  if (roll <= 35) return crashAndRestart(random, at, target, 200, 5_000)
  if (roll <= 55) return [{ at, kind: 'pause', target, forMs: random.int(200, 5_000) }]
  if (roll <= 70) return [{ at, kind: 'clock-drift', target, rate: random.int(-50, 50) / 1_000 }]
  if (roll <= 85) return [{ at, kind: 'disk-error', target, writes: random.int(1, 3) }]
  if (roll <= 95) return [{ at, kind: 'disk-full', target, forMs: random.int(200, 3_000) }]
  return [{ at, kind: 'crash', target }]
}

/** The cloud: failing steps, and the provisioner moving with the controller lease. */
const drawCloud: Drawer = (random, at, context) => {
  const roll = random.int(1, 100)
  const steps = ['allocate', 'deploy', 'release', 'all'] as const
  if (roll <= 60) return [{ at, kind: 'provider-failure', step: steps[random.int(0, steps.length - 1)]!, rate: random.int(10, 100) / 100, forMs: random.int(500, 8_000) }]
  if (roll <= 80) return crashAndRestart(random, at, 'leader', 500, 4_000).map((fault, i) => i === 0 ? fault : { ...fault, target: controller(random, context) })
  if (roll <= 90) return [{ at, kind: 'disk-error', target: controller(random, context), writes: random.int(1, 2) }]
  return [{ at, kind: 'partition', shape: 'isolate', target: 'leader', forMs: random.int(300, 3_000) }]
}

/** Hooks: failures (resolved by retries) and hangs, on the hooks every unit runs. */
const drawHooks: Drawer = (random, at, context) => {
  const units = context.units ?? []
  if (units.length === 0) return drawAgents(random, at, context)
  const unit = units[random.int(0, units.length - 1)]!
  const hook = commonHooks[random.int(0, commonHooks.length - 1)]!
  if (random.int(1, 100) <= 65) return [{ at, kind: 'hook-fail', unit, hook, times: random.int(1, 3) }]
  return [{ at, kind: 'hook-hang', unit, hook, forMs: random.int(500, 8_000) }]
}

const drawers: Record<FaultProfile, Drawer> = { raft: drawRaft, network: drawNetwork, agents: drawAgents, cloud: drawCloud, hooks: drawHooks }
