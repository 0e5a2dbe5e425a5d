import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { UnitName } from '../runtime/ids.ts'
import { limits } from '../runtime/limits.ts'
import { believesLeader } from '../runtime/model/leases.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import type { CommandOf, CommandResult, Entity, LeaseRecord, ModelCommand, ModelCommandType, ModelContext } from '../runtime/model/model-types.ts'
import { remoteStateFor } from '../runtime/model/remote-state-view.ts'
import { tableGet } from '../runtime/model/table.ts'
import { SeededRandom } from '../runtime/random.ts'

const admin: Entity = { kind: 'user', name: 'admin' }
const margin = limits.leadershipClockDriftMarginMs
const durationMin = limits.leadershipLeaseDurationMsMin
const durationMax = limits.leadershipLeaseDurationMsMax

class Model {
  context: ModelContext = emptyModel()
  index = 0
  requests = 0

  apply<T extends ModelCommandType> (type: T, fields: Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>, proposer: Entity = admin): CommandResult {
    const command = { type, requestId: `req-${this.requests++}`, proposer, ...fields } as unknown as ModelCommand
    const outcome = applyCommand(this.context, command, { index: ++this.index })
    this.context = outcome.context
    return outcome.result
  }

  lease (application: string): LeaseRecord | undefined {
    return tableGet(this.context.leases, application)
  }
}

function deployed (units: number): Model {
  const model = new Model()
  model.apply('add-charm', { url: 'local:web-0', hash: '0123456789abcdef', metadata: { name: 'web' } })
  const result = model.apply('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: units })
  assert.ok(result.ok)
  return model
}

const unit = (name: UnitName): Entity => ({ kind: 'unit', name })

// ---------------------------------------------------------------------------------

const rules = suite('model: leadership lease rules')

rules('claim grants when free or expired, refuses while held by another, extends for the holder', () => {
  const model = deployed(3)
  const claim = (name: UnitName, now: number, durationMs = 60_000): CommandResult =>
    model.apply('claim-leadership', { application: 'web', unit: name, now, durationMs }, unit(name))

  assert.equal(claim('web/0', 1_000), { ok: true, index: 3, lease: { holder: 'web/0', expiry: 61_000 } })
  const refused = claim('web/1', 60_999)
  assert.equal(refused, { ok: false, index: 4, error: 'controller: cannot claim leadership of "web" for "web/1": "web/0" holds it until 1970-01-01T00:01:01Z' })
  assert.equal(claim('web/0', 30_000), { ok: true, index: 5, lease: { holder: 'web/0', expiry: 90_000 } }, 'the holder claiming again extends')
  assert.equal(claim('web/1', 90_000), { ok: true, index: 6, lease: { holder: 'web/1', expiry: 150_000 } }, 'granted at expiry')
  assert.is(model.lease('web')!.start, 90_000)
  assert.is(model.lease('web')!.grantedAt, 6)
})

rules('extend only by the holder before expiry, never earlier; release frees it at once', () => {
  const model = deployed(2)
  const extend = (name: UnitName, now: number, durationMs = 60_000): CommandResult =>
    model.apply('extend-leadership', { application: 'web', unit: name, now, durationMs }, unit(name))
  assert.match(errorOf(extend('web/0', 0)), 'controller: cannot extend leadership of "web" for "web/0": unit "web/0" does not hold the lease')
  model.apply('claim-leadership', { application: 'web', unit: 'web/0', now: 0, durationMs: 100_000 }, unit('web/0'))
  assert.match(errorOf(extend('web/1', 10)), 'does not hold the lease')
  assert.equal(extend('web/0', 10_000, durationMin), { ok: true, index: 6, lease: { holder: 'web/0', expiry: 100_000 } }, 'a shorter extension keeps the expiry')
  assert.equal(extend('web/0', 50_000), { ok: true, index: 7, lease: { holder: 'web/0', expiry: 110_000 } })
  assert.match(errorOf(extend('web/0', 110_000)), 'the lease expired at 110000; claim it again')
  assert.match(errorOf(extend('web/0', 1_000, durationMax + 1)), `duration must be ${durationMin} to ${durationMax} ms`)

  assert.match(errorOf(model.apply('release-leadership', { application: 'web', unit: 'web/1' }, unit('web/1'))), '"web/0" holds the lease')
  assert.ok(model.apply('release-leadership', { application: 'web', unit: 'web/0' }, unit('web/0')).ok)
  assert.is(model.lease('web'), undefined)
  assert.ok(model.apply('claim-leadership', { application: 'web', unit: 'web/1', now: 1, durationMs: 60_000 }, unit('web/1')).ok, 'free at once after release')
})

rules('a dying unit cannot claim or extend; its lease runs out; a dead unit loses it at once', () => {
  const model = deployed(2)
  model.apply('claim-leadership', { application: 'web', unit: 'web/0', now: 0, durationMs: 60_000 }, unit('web/0'))
  model.apply('remove-unit', { unit: 'web/0' })
  assert.not.ok(remoteStateFor(model.context, 'web/0', 1_000)!.leader, 'a dying unit never believes it leads')
  assert.match(errorOf(model.apply('extend-leadership', { application: 'web', unit: 'web/0', now: 1_000, durationMs: 60_000 }, unit('web/0'))), 'unit "web/0" is dying')
  assert.match(errorOf(model.apply('claim-leadership', { application: 'web', unit: 'web/1', now: 59_999, durationMs: 60_000 }, unit('web/1'))), 'holds it until 1970-01-01T00:01:00Z')
  model.apply('unit-dead', { unit: 'web/0' }, unit('web/0'))
  assert.is(model.lease('web'), undefined)
  assert.ok(model.apply('claim-leadership', { application: 'web', unit: 'web/1', now: 2_000, durationMs: 60_000 }, unit('web/1')).ok)
})

rules('only the holder writes leader settings and the application databag; units of other applications cannot claim', () => {
  const model = deployed(2)
  assert.match(errorOf(model.apply('leader-settings', { application: 'web', unit: 'web/0', settings: { a: '1' } }, unit('web/0'))), 'unit "web/0" is not the leader')
  model.apply('claim-leadership', { application: 'web', unit: 'web/0', now: 0, durationMs: 60_000 }, unit('web/0'))
  assert.ok(model.apply('leader-settings', { application: 'web', unit: 'web/0', settings: { a: '1' } }, unit('web/0')).ok)
  assert.match(errorOf(model.apply('leader-settings', { application: 'web', unit: 'web/1', settings: { a: '2' } }, unit('web/1'))), 'not the leader')
  assert.match(errorOf(model.apply('claim-leadership', { application: 'web', unit: 'web/1', now: 0, durationMs: 60_000 }, unit('web/0'))), 'permission denied for unit-web-0')
  assert.match(errorOf(model.apply('claim-leadership', { application: 'db', unit: 'web/1', now: 0, durationMs: 60_000 }, unit('web/1'))), 'application "db" not found')
})

rules.run()

function errorOf (result: CommandResult): string {
  assert.not.ok(result.ok, 'expected a refusal')
  return result.ok ? '' : result.error
}

// ---------------------------------------------------------------------------------
// The safety property, checked over seeded random histories.

interface Agent {
  name: UnitName
  /** This agent's clock minus true time: within half the margin either way. */
  offset: number
  /** The model as this agent last fetched it (its watcher may lag). */
  copy: ModelContext
  dead: boolean
}

type Believes = (context: ModelContext, unit: UnitName, now: number) => boolean

const modelBelief: Believes = (context, name, now) => remoteStateFor(context, name, now)?.leader === true
/** What a rule without the drift margin would say: used to show the test can find violations. */
const naiveBelief: Believes = (context, name, now) => {
  const lease = tableGet(context.leases, 'web')
  return lease !== undefined && lease.holder === name && now < lease.expiry
}

interface History {
  violations: string[]
  handovers: number
  grants: number
}

/**
 * One random history: units claim, extend and release at random, controllers with drifting
 * clocks stamp the commands (the Raft leader changes), agents refresh their copy of the
 * model at random, and units are removed and die. After every step, at the current time
 * and at sample points until the next step, at most one agent may believe it leads.
 */
function history (seed: number, believes: Believes, steps: number): History {
  const random = new SeededRandom(seed)
  const drift = (): number => random.int(-margin / 2, margin / 2)
  const units = random.int(2, 5)
  const model = deployed(units)
  const agents: Agent[] = Array.from({ length: units }, (_, i) => ({ name: `web/${i}`, offset: drift(), copy: model.context, dead: false }))
  const controllers = Array.from({ length: 3 }, drift)
  let raftLeader = 0
  let now = random.int(0, 1_000_000)
  const out: History = { violations: [], handovers: 0, grants: 0 }
  let lastHolder: UnitName | undefined

  const check = (at: number, label: string): void => {
    const believers = agents.filter(agent => !agent.dead && believes(agent.copy, agent.name, at + agent.offset)).map(a => a.name)
    if (believers.length > 1) out.violations.push(`seed ${seed} ${label} at ${at}: ${believers.join(' and ')} both believe they lead`)
  }

  for (let step = 0; step < steps; step++) {
    const agent = agents[random.int(0, agents.length - 1)]!
    const stamp = now + controllers[raftLeader]!
    const durationMs = random.next() < 0.9 ? random.int(durationMin, 3 * durationMin) : random.int(durationMin, durationMax)
    const roll = random.next()
    if (!agent.dead) {
      if (roll < 0.4) {
        const result = model.apply('claim-leadership', { application: 'web', unit: agent.name, now: stamp, durationMs }, unit(agent.name))
        if (result.ok) out.grants++
      } else if (roll < 0.65) {
        model.apply('extend-leadership', { application: 'web', unit: agent.name, now: stamp, durationMs }, unit(agent.name))
      } else if (roll < 0.72) {
        // The holder stops believing before it proposes the release: its copy is the released state.
        if (model.apply('release-leadership', { application: 'web', unit: agent.name }, unit(agent.name)).ok) agent.copy = model.context
      } else if (roll < 0.74) {
        model.apply('remove-unit', { unit: agent.name })
        agent.copy = model.context
      } else if (roll < 0.76 && tableGet(model.context.units, agent.name)?.life === 'dying') {
        // The agent terminates first, then the controller hears of it.
        agent.dead = true
        model.apply('unit-dead', { unit: agent.name }, unit(agent.name))
      }
    }
    if (random.next() < 0.1) raftLeader = random.int(0, controllers.length - 1)
    for (const other of agents) if (random.next() < 0.5) other.copy = model.context
    const holder = tableGet(model.context.leases, 'web')?.holder
    if (holder !== undefined && holder !== lastHolder) { out.handovers++; lastHolder = holder }

    check(now, `step ${step}`)
    // Time moves in small steps, or jumps to within a margin of the lease's expiry, where
    // handovers happen and clock drift matters.
    const expiry = tableGet(model.context.leases, 'web')?.expiry
    const target = expiry !== undefined && random.next() < 0.6 ? expiry + random.int(-margin, margin) : now + random.int(0, 3_000)
    const advance = Math.max(0, target - now)
    for (let sample = 0; sample < 3; sample++) check(now + random.int(0, advance), `after step ${step}`)
    now += advance
  }
  return out
}

const safety = suite('model: no two units believe they lead at once')

safety('random claims, extensions, releases, removals and clock drift (seeded)', () => {
  const seeds = process.env.CANTRIP_LONG === '1' ? 2_000 : 150
  let handovers = 0
  let grants = 0
  for (let seed = 1; seed <= seeds; seed++) {
    const run = history(seed, modelBelief, 300)
    assert.equal(run.violations, [], run.violations[0])
    handovers += run.handovers
    grants += run.grants
  }
  // The histories must actually move the lease between units for the property to mean something.
  assert.ok(handovers > seeds * 5, `only ${handovers} handovers in ${seeds} histories`)
  assert.ok(grants > seeds * 5, `only ${grants} grants in ${seeds} histories`)
})

safety('the same histories do find overlaps when the margin is ignored', () => {
  let found: string | undefined
  for (let seed = 1; seed <= 150 && found === undefined; seed++) found = history(seed, naiveBelief, 300).violations[0]
  assert.ok(found !== undefined, 'a belief rule without the margin should overlap under clock drift')
  assert.match(found, /both believe they lead/)
})

safety('believesLeader: the margin comes off the end of the lease', () => {
  const lease: LeaseRecord = { application: 'web', holder: 'web/0', start: 0, expiry: 60_000, grantedAt: 1 }
  assert.ok(believesLeader(lease, 'web/0', 60_000 - margin - 1))
  assert.not.ok(believesLeader(lease, 'web/0', 60_000 - margin))
  assert.not.ok(believesLeader(lease, 'web/1', 0))
  assert.not.ok(believesLeader(undefined, 'web/0', 0))
})

safety.run()
