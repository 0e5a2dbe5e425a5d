/**
 * The `writes` workload of a scenario: clients that put and linearizably get keys of one
 * dedicated application's config through any running controller, recorded as a history
 * the linearizability checker (sim/linearizability) reads at the end. Every put a client
 * was told had committed is also handed to the Raft safety checker, which checks at the
 * end that it is in the applied log at its index (no acknowledged write lost).
 */
import type { ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { tableGet } from '../../runtime/model/table.ts'
import type { Random } from '../../runtime/random.ts'
import { HistoryRecorder } from '../linearizability/history.ts'
import type { KvInput, KvOutput } from '../linearizability/model.ts'
import type { RaftSafetyChecker } from '../invariants/raft-safety.ts'
import type { SystemWorld } from './system-world.ts'

/** The application whose config the clients use as a key-value store. */
export const writesApplication = 'sim-writes'
export const writesCharmUrl = 'local:sim-writes-0'
export const writesKeys = ['k0', 'k1', 'k2'] as const
/** Clients sharing one `writes` command's rate (each one is sequential, as a history needs). */
export const writeClientsPerCommand = 3

export class WriteClients {
  readonly history = new HistoryRecorder<KvInput, KvOutput>()
  acknowledged = 0
  readonly #world: SystemWorld
  readonly #random: Random
  readonly #raft: RaftSafetyChecker
  readonly #loops: Array<Promise<void>> = []
  #stopped = false
  #clients = 0

  constructor (world: SystemWorld, raft: RaftSafetyChecker) {
    this.#world = world
    this.#random = world.sim.random('workload')
    this.#raft = raft
  }

  /** Setup commands: the dedicated application (no units) with its keys as string options. */
  static setupCommands (world: SystemWorld): ModelCommand[] {
    const config = Object.fromEntries(writesKeys.map(key => [key, { type: 'string' as const, default: null }]))
    return [
      world.command('setup/writes-charm', { type: 'add-charm', url: writesCharmUrl, hash: 'ab'.repeat(8), metadata: { name: writesApplication, config } }),
      world.command('setup/writes-deploy', { type: 'deploy', application: writesApplication, charm: writesCharmUrl, config: {}, constraints: {}, numUnits: 0 })
    ]
  }

  /** Starts clients writing at `ratePerS` in all until simulated time `untilMs`. */
  start (ratePerS: number, untilMs: number): void {
    const meanGapMs = Math.max(1, Math.round(writeClientsPerCommand * 1_000 / Math.max(ratePerS, 0.001)))
    for (let c = 0; c < writeClientsPerCommand; c++) {
      const client = `client${this.#clients++}`
      this.#loops.push(this.#run(client, meanGapMs, untilMs))
    }
  }

  /** No new operations (the heal phase); those in flight finish on their own. */
  stop (): void {
    this.#stopped = true
  }

  get openCount (): number {
    return this.history.openCount
  }

  async #run (client: string, meanGapMs: number, untilMs: number): Promise<void> {
    const world = this.#world
    const random = this.#random
    const running = (): boolean => !this.#stopped && world.sim.clock.now() < untilMs
    for (let n = 0; running(); n++) {
      await world.sleep(random.int(1, 2 * meanGapMs))
      if (!running()) return
      const nodes = world.group.nodes()
      if (nodes.length === 0) continue
      const node = nodes[random.int(0, nodes.length - 1)]!
      const key = writesKeys[random.int(0, writesKeys.length - 1)]!
      if (random.next() < 0.5) {
        const value = `${client}.${n}`
        const id = this.history.invoke(client, { op: 'put', key, value }, world.sim.clock.now())
        const command = world.command(`${client}/${n}`, { type: 'set-config', application: writesApplication, config: { [key]: value } })
        try {
          const outcome = await node.submit(command)
          if (!outcome.ok) {
            // Refused when applied: it changed nothing.
            this.history.discard(id)
            world.sim.trace(`${client}: put refused: ${outcome.error}`)
            continue
          }
          this.history.complete(id, { op: 'put' }, world.sim.clock.now())
          this.#raft.onAcknowledged(command.requestId, outcome)
          this.acknowledged++
        } catch {
          // No answer: the put may still apply later; it stays open for good.
          this.history.abandon(id)
        }
      } else {
        const id = this.history.invoke(client, { op: 'get', key }, world.sim.clock.now())
        try {
          const model = await node.read()
          this.history.complete(id, { op: 'get', value: readKey(model, key) }, world.sim.clock.now())
        } catch {
          this.history.discard(id)
        }
      }
    }
  }

  /** Every client loop has returned. */
  async finished (): Promise<void> {
    await Promise.all(this.#loops)
  }
}

function readKey (model: ModelContext, key: string): string | undefined {
  const value = tableGet(model.applications, writesApplication)?.config[key]
  return typeof value === 'string' ? value : undefined
}
