/**
 * The controllers an agent knows, kept across its restarts: Juju's agent.conf `apiaddresses`,
 * which the agent rewrites whenever the API host ports change, so an agent whose original
 * controller died still reaches the rest of the group after a restart
 * (juju/juju worker/apiaddressupdater, agent/agent.go SetAPIHostPorts).
 *
 * Pure: which controllers to remember and to try, and the bytes they are kept as. The file
 * itself (written atomically) is agent/known-controllers-file.ts.
 */
import type { BootstrapController } from './bootstrap-data.ts'
import { InvalidInputError } from './errors.ts'
import { limits } from './limits.ts'

const component = 'known controllers'
export const knownControllersVersion = 1

/**
 * The controllers to try, most recently learned first: `learned` (what the group said its
 * members were, fresher) then `bootstrap` (the data the agent started from, which may list
 * only controllers that are gone), each peer once with its addresses merged, at most
 * limits.knownControllersMax peers of limits.knownControllerAddressesMax addresses.
 */
export function mergeControllers (learned: readonly BootstrapController[], bootstrap: readonly BootstrapController[]): BootstrapController[] {
  const byPeer = new Map<string, string[]>()
  for (const { peerId, addresses } of [...learned, ...bootstrap]) {
    if (!byPeer.has(peerId) && byPeer.size >= limits.knownControllersMax) continue
    const known = byPeer.get(peerId) ?? []
    for (const address of addresses) {
      if (!known.includes(address) && known.length < limits.knownControllerAddressesMax) known.push(address)
    }
    byPeer.set(peerId, known)
  }
  return [...byPeer].map(([peerId, addresses]) => ({ peerId, addresses }))
}

/**
 * The controllers of `offered` that name at least one address. A peer id alone cannot be
 * dialled: learned or remembered as a member, it would stand for a controller the agent
 * cannot reach (a voter its informant had not yet met). Juju's API address updater keeps
 * only the servers left with an address too (juju/juju
 * internal/worker/apiaddressupdater/apiaddressupdater.go, getAddresses).
 */
export function dialableControllers (offered: readonly BootstrapController[]): BootstrapController[] {
  return offered.filter(c => c.addresses.length > 0)
}

/** Whether two controller sets list the same peers with the same addresses, in order (nothing new to write). */
export function sameControllers (a: readonly BootstrapController[], b: readonly BootstrapController[]): boolean {
  return a.length === b.length && a.every((c, i) => c.peerId === b[i]!.peerId &&
    c.addresses.length === b[i]!.addresses.length && c.addresses.every((x, j) => x === b[i]!.addresses[j]))
}

export function encodeKnownControllers (controllers: readonly BootstrapController[]): string {
  return JSON.stringify({ version: knownControllersVersion, controllers: mergeControllers(controllers, []) }) + '\n'
}

/** The remembered controllers, validated; one clear error naming what was expected when the text is not that. */
export function decodeKnownControllers (text: string): BootstrapController[] {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new InvalidInputError(component, 'JSON', text.slice(0, 40))
  }
  if (typeof value !== 'object' || value === null) throw new InvalidInputError(component, 'an object', value)
  const v = value as Record<string, unknown>
  if (v.version !== knownControllersVersion) throw new InvalidInputError(component, `version ${knownControllersVersion}`, v.version)
  if (!Array.isArray(v.controllers)) throw new InvalidInputError(component, 'a controllers list', v.controllers)
  for (const c of v.controllers as unknown[]) {
    const controller = c as Record<string, unknown>
    if (typeof c !== 'object' || c === null || typeof controller.peerId !== 'string' || controller.peerId === '' ||
      !Array.isArray(controller.addresses) || !controller.addresses.every(a => typeof a === 'string' && a !== '')) {
      throw new InvalidInputError(component, 'controllers as {peerId, addresses[]}', c)
    }
  }
  return mergeControllers(v.controllers as BootstrapController[], [])
}
