/**
 * Test fixture: a controller group of one in the test's own process — a ModelReplica
 * (Raft host, model, controller actor) on LevelDB in `dir`, with the system clock and a
 * SoloTransport — serving a deployer's unit hosts in the same process
 * (`UnitControllerApi`, `UnitHostController`) without a mesh, for tests of the real
 * hooks and charms. Deployments run cantripd processes over the mesh; this is not one.
 */
import { randomUUID } from 'node:crypto'
import { CommandProposer, type ModelCommandBody } from '../../runtime/model/command-proposer.ts'
import { ModelReplica } from '../../actors/controller/model-replica.ts'
import type { CommandResult, CommandSucceeded, ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { SeededRandom } from '../../runtime/random.ts'
import { leaderApplicationStatus, type ApplicationStatusReply } from '../../runtime/model/application-status.ts'
import type { UnitHostController } from '../../actors/unit/unit-host.ts'
import type { UnitControllerApi } from '../../agent/uniter/unit-hook-context.ts'
import { LevelStorage } from '../../agent/level-storage.ts'
import { SystemClock } from '../../agent/system-clock.ts'
import { CharmStore } from '../../agent/controller/charm-store.ts'
import { SoloTransport } from './solo-transport.ts'

export class OneControllerFixture implements UnitControllerApi, UnitHostController {
  readonly node: ModelReplica
  /** Charm archives by content address, in the controller's own store. */
  readonly charms: CharmStore
  readonly #storage: LevelStorage
  readonly #clock: SystemClock
  readonly #listeners = new Set<() => void>()
  readonly #admin = new CommandProposer({ proposer: { kind: 'user', name: 'admin' }, requestPrefix: `admin/${randomUUID()}` })
  readonly #self: CommandProposer

  private constructor (node: ModelReplica, storage: LevelStorage, clock: SystemClock) {
    this.node = node
    this.charms = new CharmStore(storage)
    this.#storage = storage
    this.#clock = clock
    this.#self = new CommandProposer({ proposer: { kind: 'controller', id: node.id }, requestPrefix: `${node.id}/${randomUUID()}` })
  }

  /** Opens (or creates) the controller's store in `dir` and waits until it leads. */
  static async start (dir: string, options: { id?: string, waitMs?: number } = {}): Promise<OneControllerFixture> {
    const id = options.id ?? 'controller-0'
    const storage = await LevelStorage.open(dir)
    const clock = new SystemClock()
    let controller: OneControllerFixture | undefined
    const node = await ModelReplica.start({
      id,
      peers: [id],
      storage,
      transport: new SoloTransport(id),
      clock,
      random: new SeededRandom(Number.parseInt(randomUUID().slice(0, 8), 16)),
      tickMs: 50,
      electionTicks: 4,
      heartbeatTicks: 1,
      onApplied: () => { if (controller !== undefined) controller.#changed() }
    })
    controller = new OneControllerFixture(node, storage, clock)
    const until = performance.now() + (options.waitMs ?? 5_000)
    while (node.host.role !== 'leader') {
      if (performance.now() > until) {
        await controller.stop()
        throw new Error(`one-controller fixture: not leading its own group after ${options.waitMs ?? 5_000} ms`)
      }
      await new Promise(resolve => setTimeout(resolve, 10))
    }
    return controller
  }

  model (): ModelContext {
    return this.node.host.state()
  }

  async submit (command: ModelCommand): Promise<CommandResult> {
    return await this.node.submit(command)
  }

  /** `status-get --application` for a unit in this process, checked as the controller API checks it. */
  async applicationStatus (unit: string): Promise<ApplicationStatusReply> {
    const answer = leaderApplicationStatus(await this.node.read(), unit, this.#clock.now())
    return answer === undefined
      ? { ok: false, error: `one-controller fixture: permission denied: unit ${JSON.stringify(unit)} does not hold its application's leadership` }
      : { ok: true, ...answer }
  }

  /** Submits as the admin user with a fresh request id; throws on refusal. */
  async admin (body: ModelCommandBody): Promise<CommandSucceeded> {
    return await this.#as(this.#admin, body)
  }

  /** Submits as this controller itself (what its provisioner does); throws on refusal. */
  async asController (body: ModelCommandBody): Promise<CommandSucceeded> {
    return await this.#as(this.#self, body)
  }

  async #as (proposer: CommandProposer, body: ModelCommandBody): Promise<CommandSucceeded> {
    const result = await proposer.submit(this, body)
    if (!result.ok) throw new Error(result.error)
    return result
  }

  /** An archive's manifest from the charm store, for agents deploying the charm. */
  async charmManifest (hash: string): Promise<unknown> {
    return await this.charms.manifest(hash)
  }

  /** One chunk of an archive from the charm store. */
  async charmChunk (hash: string, index: number): Promise<Uint8Array | undefined> {
    return await this.charms.chunk(hash, index)
  }

  now (): number {
    return this.#clock.now()
  }

  onChange (listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  async stop (): Promise<void> {
    await this.node.stop()
    await this.#storage.close()
  }

  #changed (): void {
    // After the model is updated: the host calls onApplied before it moves on.
    queueMicrotask(() => { for (const listener of [...this.#listeners]) listener() })
  }
}
