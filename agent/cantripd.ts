/**
 * cantripd: one agent process. This first cut runs the controller role: a Raft member
 * over the libp2p mesh (Libp2pTransport, private network key, the agent's own Ed25519
 * identity from `<data dir>/agent.key`), its state on LevelDB in `<data dir>/controller`.
 * Its Raft id is its libp2p peer id; the founding group is given with `--controllers`.
 * It serves the controllers' propose protocol (clients and followers submit commands to
 * any controller), the agents' API and change notices.
 *
 * It prints one JSON object per line on stdout for whoever supervises it: `listening`
 * (peer id and addresses), `role` (every Raft role change, with term and leader), and
 * `stopped`. SIGTERM or SIGINT stops it cleanly; errors end it with one line on stderr
 * and exit 1.
 *
 *   cantripd --role controller --data-dir DIR --network-key FILE
 *            --listen /ip4/127.0.0.1/tcp/PORT --controllers ID,ID,ID [--seed MULTIADDR ...] [--admin PEER ...]
 */
import '../runtime/polyfill.ts'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ControllerNode } from '../actors/controller/controller-node.ts'
import { SeededRandom } from '../runtime/random.ts'
import { LevelStorage } from './level-storage.ts'
import { Libp2pTransport } from './mesh/libp2p-transport.ts'
import { readNetworkKey } from './mesh/network-key.ts'
import { loadOrCreatePeerKey, peerIdOfKey } from './mesh/peer-identity.ts'
import { StreamLogger } from './stream-logger.ts'
import { SystemClock } from './system-clock.ts'
import { ControllerClient } from '../actors/machine/controller-client.ts'
import { unitAgentPresence } from '../runtime/presence/membership.ts'
import { PresenceAgent } from '../runtime/presence/presence-agent.ts'
import { ChildProcessRunner } from './child-process-runner.ts'
import { CharmStore } from './controller/charm-store.ts'
import { deployCharmArchive } from './uniter/charm-fetch.ts'
import { Deployer } from './uniter/deployer.ts'

const usage = 'usage: cantripd --role controller|machine --data-dir DIR --network-key FILE --listen MULTIADDR --controllers ID,ID,... [--seed MULTIADDR ...] [--admin PEER ...] [--machine N=PEER ...] [--machine-id N]'

function say (event: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(event) + '\n')
}

function fail (message: string): never {
  process.stderr.write(`cantripd: ${message}\n`)
  process.exit(1)
}

async function main (): Promise<void> {
  let values
  try {
    ({ values } = parseArgs({
      options: {
        role: { type: 'string' },
        'data-dir': { type: 'string' },
        'network-key': { type: 'string' },
        listen: { type: 'string' },
        controllers: { type: 'string' },
        seed: { type: 'string', multiple: true },
        admin: { type: 'string', multiple: true },
        machine: { type: 'string', multiple: true },
        'machine-id': { type: 'string' },
        'presence-ms': { type: 'string' }
      },
      strict: true
    }))
  } catch (error) {
    fail(`${error instanceof Error ? error.message : String(error)}; ${usage}`)
  }
  if (values.role !== 'controller' && values.role !== 'machine') fail(`expected --role controller or machine, got ${JSON.stringify(values.role ?? null)}; ${usage}`)
  const dataDir = values['data-dir'] ?? fail(`expected --data-dir; ${usage}`)
  const keyFile = values['network-key'] ?? fail(`expected --network-key; ${usage}`)
  const controllers = (values.controllers ?? fail(`expected --controllers; ${usage}`)).split(',').filter(Boolean)
  mkdirSync(dataDir, { recursive: true })

  const privateKey = await loadOrCreatePeerKey(join(dataDir, 'agent.key'))
  const id = peerIdOfKey(privateKey).toString()
  if (values.role === 'machine') {
    await runMachine(id, privateKey, dataDir, keyFile, controllers, values['machine-id'] ?? fail(`expected --machine-id with --role machine; ${usage}`), values.listen, values.seed ?? [], values['presence-ms'])
    return
  }
  if (!controllers.includes(id)) fail(`this agent's peer id ${id} is not among --controllers ${controllers.join(',')}`)
  const logger = new StreamLogger({ stream: process.stderr, module: `cantripd.${id.slice(-8)}` })
  const transport = await Libp2pTransport.create({
    privateKey,
    networkKey: await readNetworkKey(keyFile),
    ...(values.listen === undefined ? {} : { listen: values.listen }),
    bootstrap: values.seed ?? [],
    logger
  })
  say({ event: 'listening', peerId: transport.peerId, addresses: transport.addresses().map(String) })
  const storage = await LevelStorage.open(join(dataDir, 'controller'))
  const clockForPresence = new SystemClock()
  const presenceAgent = new PresenceAgent({ transport, clock: clockForPresence }, { modelUuid: 'default', role: 'controller', incarnation: Date.now(), ...presenceTimings(values['presence-ms']) })
  presenceAgent.start()
  const machines = new Map((values.machine ?? []).map(entry => {
    const [machine, peer] = entry.split('=')
    if (machine === undefined || peer === undefined) fail(`expected --machine N=PEERID, got ${JSON.stringify(entry)}`)
    return [peer, machine] as const
  }))
  const clock = new SystemClock()
  let lastRole = ''
  const node = await ControllerNode.start({
    id,
    peers: controllers,
    storage,
    transport,
    clock,
    random: new SeededRandom(Number.parseInt(id.slice(-8).replace(/[^0-9a-f]/gi, '0'), 16) >>> 0),
    tickMs: 100,
    electionTicks: 10,
    heartbeatTicks: 1,
    // Peers named with --admin act as the admin user; --machine N=PEER names machine agents.
    agents: {
      modelUuid: 'default',
      identify: peer => (values.admin ?? []).includes(peer)
        ? { kind: 'user', name: 'admin' }
        : controllers.includes(peer) ? { kind: 'controller', id: peer } : machines.has(peer) ? { kind: 'machine', id: machines.get(peer)! } : undefined,
      charms: new CharmStore(storage),
      presenceOf: machine => {
        const peer = [...machines].find(([, id]) => id === machine)?.[0]
        const presence = unitAgentPresence(peer === undefined ? undefined : presenceAgent.member(peer))
        return { status: presence.status, since: presence.since, heardBy: presence.heardBy }
      }
    }
  })
  // The role as acted on (after the Ready that changed it was persisted), polled cheaply.
  const report = setInterval(() => {
    const role = `${node.host.role}/${node.host.term}/${node.host.leader}`
    if (role === lastRole) return
    lastRole = role
    say({ event: 'role', role: node.host.role, term: node.host.term, leader: node.host.leader, revision: node.host.model().revision })
  }, 20)

  let stopping = false
  const stop = async (): Promise<void> => {
    if (stopping) return
    stopping = true
    clearInterval(report)
    await presenceAgent.leave()
    await node.stop()
    await transport.stop()
    await storage.close()
    say({ event: 'stopped' })
    process.exit(0)
  }
  process.once('SIGTERM', () => { void stop() })
  process.once('SIGINT', () => { void stop() })
}

/**
 * The machine role: the deployer's unit agents, fed by a ControllerClient over the mesh
 * (the machine's view of the model on every change notice), their hooks and tools as in
 * the local deployment, charms fetched from the controllers' stores.
 */
async function runMachine (id: string, privateKey: Uint8Array, dataDir: string, keyFile: string, controllers: string[], machineId: string, listen: string | undefined, seeds: string[], presenceMs: string | undefined): Promise<void> {
  const logger = new StreamLogger({ stream: process.stderr, module: `cantripd.machine-${machineId}` })
  const transport = await Libp2pTransport.create({
    privateKey, networkKey: await readNetworkKey(keyFile), ...(listen === undefined ? {} : { listen }), bootstrap: seeds, logger
  })
  say({ event: 'listening', peerId: id, addresses: transport.addresses().map(String) })
  const clock = new SystemClock()
  // Heard by the controllers while it runs; a restart comes back with a higher incarnation.
  const presence = new PresenceAgent({ transport, clock }, { modelUuid: 'default', role: 'machine', incarnation: Date.now(), ...presenceTimings(presenceMs) })
  presence.start()
  const client = new ControllerClient({ transport, clock, modelUuid: 'default', machine: machineId, controllers })
  client.start()
  await client.ready()
  const storage = await LevelStorage.open(join(dataDir, 'machine'))
  const deployer = new Deployer({
    machineId,
    dataDir,
    controller: client,
    storage,
    processRunner: new ChildProcessRunner(),
    fetchCharm: async (url, dir) => { await deployCharmArchive(client, url, dir) },
    logger,
    clock
  })
  say({ event: 'machine-started', machine: machineId })
  // Each new view of the model, with the wall-clock time it arrived (for latency measurements).
  let lastRevision = -1
  client.onChange(() => {
    const revision = client.model().revision
    if (revision === lastRevision) return
    lastRevision = revision
    say({ event: 'model', revision, at: performance.timeOrigin + performance.now() })
  })
  let stopping = false
  const stop = async (): Promise<void> => {
    if (stopping) return
    stopping = true
    await deployer.stop()
    await presence.leave()
    client.stop()
    await transport.stop()
    await storage.close()
    say({ event: 'stopped' })
    process.exit(0)
  }
  process.once('SIGTERM', () => { void stop() })
  process.once('SIGINT', () => { void stop() })
}

/** `--presence-ms HEARTBEAT,SUSPECT,FAILED`: presence timings (tests shorten them); the defaults otherwise. */
function presenceTimings (spec: string | undefined): { heartbeatIntervalMs?: number, suspectAfterMs?: number, failedAfterMs?: number } {
  if (spec === undefined) return {}
  const [heartbeatIntervalMs, suspectAfterMs, failedAfterMs] = spec.split(',').map(Number)
  if (![heartbeatIntervalMs, suspectAfterMs, failedAfterMs].every(ms => Number.isSafeInteger(ms) && ms! > 0)) fail(`expected --presence-ms HEARTBEAT,SUSPECT,FAILED in milliseconds, got ${JSON.stringify(spec)}`)
  return { heartbeatIntervalMs: heartbeatIntervalMs!, suspectAfterMs: suspectAfterMs!, failedAfterMs: failedAfterMs! }
}

main().catch((error: unknown) => { fail(error instanceof Error ? error.message : String(error)) })
