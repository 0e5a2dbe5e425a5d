/**
 * Bootstrap data: what a new instance needs to become a machine agent of this model, and
 * nothing more — Juju's cloud-init agent config. It is opaque to providers (they hand the
 * bytes to the instance) and read by `cantripd --bootstrap FILE`.
 *
 * It holds the network key (the instance must join the private mesh) and a one-time
 * registration secret (runtime/model: the model keeps only its hash; the first agent to
 * prove it binds its own peer id to the machine and the secret is then useless). It
 * never holds cloud credentials: those stay in the provider on the controllers.
 */
import { decode, encode } from './codec.ts'
import { InvalidInputError } from './errors.ts'

const component = 'bootstrap data'
export const bootstrapDataVersion = 1

export interface BootstrapController {
  readonly peerId: string
  /** Multiaddrs with the `/p2p/<peerId>` suffix. */
  readonly addresses: readonly string[]
}

export interface BootstrapData {
  readonly version: typeof bootstrapDataVersion
  readonly modelUuid: string
  readonly machineId: string
  readonly controllers: readonly BootstrapController[]
  /** The mesh's private-network key (the pnet swarm key file's bytes). */
  readonly networkKey: Uint8Array
  /** The one-time registration secret (hex). */
  readonly secret: string
}

export function encodeBootstrapData (data: BootstrapData): Uint8Array {
  return encode(validate(data), component)
}

export function decodeBootstrapData (bytes: Uint8Array): BootstrapData {
  return validate(decode(bytes, component))
}

function validate (value: unknown): BootstrapData {
  if (typeof value !== 'object' || value === null) throw new InvalidInputError(component, 'a map', value)
  const v = value as Record<string, unknown>
  if (v.version !== bootstrapDataVersion) throw new InvalidInputError(component, `version ${bootstrapDataVersion}`, v.version)
  for (const key of ['modelUuid', 'machineId', 'secret'] as const) {
    if (typeof v[key] !== 'string' || v[key] === '') throw new InvalidInputError(component, `a non-empty string "${key}"`, v[key])
  }
  if (!/^[0-9a-f]{32,128}$/.test(v.secret as string)) throw new InvalidInputError(component, 'a hex secret of 32 to 128 digits', `${String(v.secret).length} characters`)
  if (!(v.networkKey instanceof Uint8Array) || v.networkKey.byteLength === 0) throw new InvalidInputError(component, 'network key bytes', v.networkKey)
  if (!Array.isArray(v.controllers) || v.controllers.length === 0) throw new InvalidInputError(component, 'at least one controller', v.controllers)
  for (const c of v.controllers as unknown[]) {
    const controller = c as Record<string, unknown>
    if (typeof c !== 'object' || c === null || typeof controller.peerId !== 'string' || !Array.isArray(controller.addresses) ||
      !controller.addresses.every(a => typeof a === 'string')) {
      throw new InvalidInputError(component, 'controllers as {peerId, addresses[]}', c)
    }
  }
  return value as BootstrapData
}
