/**
 * Noise as the mesh runs it over the network handshake (network-handshake.ts): on a
 * connection between two peers of this version, which carries no stream cipher, the XX
 * handshake's prologue is derived from the network key, so it completes only between
 * holders of that key (Noise binds the prologue into every handshake message's tag); on a
 * connection that took pnet's cipher (a peer of an older version) it runs without one,
 * as those peers do. Same protocol name ('/noise') either way: the two ends of one
 * connection always agree on which it is, from the nonces they exchanged. Either runs its
 * transport phase through noise-transport-phase.ts.
 */
import { createHmac } from 'node:crypto'
import { noise, type NoiseInit } from '@chainsafe/libp2p-noise'
import type { ConnectionEncrypter, SecurableStream, SecureConnectionOptions, SecuredConnection } from '@libp2p/interface'
import { networkSecret, protectedByCipher } from './network-handshake.ts'
import { withLeanTransportPhase } from './noise-transport-phase.ts'

type NoiseComponents = Parameters<ReturnType<typeof noise>>[0]

const prologueLabel = 'cantrip mesh noise prologue v1'

/** The prologue for `keyFile`'s network: a keyed hash, so it says nothing of the key. */
export function networkPrologue (keyFile: Uint8Array): Uint8Array {
  return Uint8Array.from(createHmac('sha256', networkSecret(keyFile)).update(prologueLabel).digest())
}

/** libp2p's `connectionEncrypters` entry: Noise, bound to the network key where no cipher proves it. */
export function networkNoise (keyFile: Uint8Array, init: NoiseInit = {}): (components: NoiseComponents) => ConnectionEncrypter {
  const prologueBytes = networkPrologue(keyFile)
  return components => {
    const bound = noise({ ...init, prologueBytes })(components)
    const plain = noise(init)(components)
    // The same messages with less plumbing each (noise-transport-phase.ts).
    withLeanTransportPhase(bound)
    withLeanTransportPhase(plain)
    const pick = (connection: object): ConnectionEncrypter => protectedByCipher(connection) ? plain : bound
    // Keeps Noise's protocol, tag and capabilities; only the choice per connection is ours.
    const encrypter: ConnectionEncrypter = Object.create(bound)
    encrypter.secureInbound = async <S extends SecurableStream>(connection: S, options?: SecureConnectionOptions): Promise<SecuredConnection<S>> =>
      await pick(connection).secureInbound(connection, options)
    encrypter.secureOutbound = async <S extends SecurableStream>(connection: S, options?: SecureConnectionOptions): Promise<SecuredConnection<S>> =>
      await pick(connection).secureOutbound(connection, options)
    return encrypter
  }
}
