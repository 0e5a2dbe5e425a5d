/**
 * Starting controller processes on this host, for `bootstrap` and `enable-ha`: a new
 * member gets its own data dir (`<controller dir>/cN`) with a fresh identity and a port
 * on the group's listen address (controller-network.ts: loopback unless bootstrap was
 * told otherwise), and runs as a detached `cantripd --role controller --provider local`
 * with its log in `<data dir>/cantripd.log`, so it outlives the CLI.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, openSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '../free-port.ts'
import { generatePeerKey, peerIdOfKey, writePeerKey } from '../mesh/peer-identity.ts'
import { cantripdProgram, packageRoot } from '../package-root.ts'
import type { ControllerMember } from './cli-home.ts'
import { hostMultiaddr, readControllerNetwork } from './controller-network.ts'

/** The most controllers a group may have (odd sizes only: 1, 3, 5, 7). */
export const controllerGroupSizeMax = 7

/** Whether `n` is a size a controller group may have: odd, 1 to controllerGroupSizeMax. */
export function validGroupSize (n: number): boolean {
  return Number.isSafeInteger(n) && n >= 1 && n <= controllerGroupSizeMax && n % 2 === 1
}

export type NewMember = ControllerMember & { port: number }

/** A fresh member in the first unused `cN` under `dir`: its identity written, not started. */
export async function newMember (dir: string): Promise<NewMember> {
  let i = 0
  while (existsSync(join(dir, `c${i}`))) i++
  const dataDir = join(dir, `c${i}`)
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const key = await generatePeerKey()
  await writePeerKey(join(dataDir, 'agent.key'), key)
  const peerId = peerIdOfKey(key)
  const network = readControllerNetwork(dir)
  const port = network.port === undefined ? await freePort(network.listen) : network.port + i
  return { 'peer-id': peerId, addresses: [`${hostMultiaddr(network.advertise)}/tcp/${port}/p2p/${peerId}`], pid: 0, 'data-dir': dataDir, port }
}

export interface SpawnOptions {
  /** The controller's directory: its network key and the machines dir live there. */
  dir: string
  /** Peer ids for `--controllers`. */
  controllers: readonly string[]
  /** Multiaddrs of the other members, as `--seed`. */
  seeds: readonly string[]
  admin: string
  /** Start as a joining (not yet voting) member: `cantripd --join`. */
  join?: boolean
  /** `cantrip bootstrap --inspect`: `cantripd --inspect 0` (its machine agents inherit it). */
  inspect?: boolean
}

/** Starts `member` detached; sets and returns its pid. */
export function spawnController (member: NewMember, options: SpawnOptions): number {
  const log = openSync(join(member['data-dir'], 'cantripd.log'), 'a', 0o600)
  const cantripd = cantripdProgram()
  const network = readControllerNetwork(options.dir)
  const child = spawn(cantripd.file, [
    ...cantripd.args,
    '--role', 'controller', '--data-dir', member['data-dir'], '--network-key', join(options.dir, 'swarm.key'),
    '--listen', `${hostMultiaddr(network.listen)}/tcp/${member.port}`, '--advertise', network.advertise,
    ...(network.machineNetwork === undefined ? [] : ['--machine-network', network.machineNetwork]),
    '--controllers', options.controllers.join(','),
    ...options.seeds.filter(seed => !seed.endsWith(`/p2p/${member['peer-id']}`)).flatMap(seed => ['--seed', seed]),
    '--admin', options.admin,
    '--provider', 'local', '--machines-dir', join(options.dir, 'machines'),
    ...(options.join === true ? ['--join'] : []),
    ...(options.inspect === true ? ['--inspect', '0'] : [])
  ], { cwd: packageRoot, detached: true, stdio: ['ignore', log, log] })
  child.unref()
  member.pid = child.pid ?? 0
  return member.pid
}
