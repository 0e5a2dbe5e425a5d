/**
 * An agent's mesh identity: an Ed25519 private key, kept in its agent config as bytes
 * (libp2p's protobuf encoding, the same bytes go-libp2p and js-libp2p persist). The peer
 * id is derived from it, so an agent keeps its peer id across restarts as long as it
 * keeps the key.
 */
import { readFile, stat } from 'node:fs/promises'
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import type { PrivateKey } from '@libp2p/interface'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { InvalidInputError } from '../../runtime/errors.ts'
import type { PeerId } from '../../runtime/transport.ts'
import { writeSecretFile } from './secret-file.ts'

const component = 'peer key'
/** An Ed25519 key in protobuf is 68 bytes; anything far larger is not one. */
const keyFileBytesMax = 1024

/** A new Ed25519 key, as the bytes to keep in the agent config. */
export async function generatePeerKey (): Promise<Uint8Array> {
  return privateKeyToProtobuf(await generateKeyPair('Ed25519'))
}

/** The libp2p key of stored bytes; only Ed25519 keys are accepted (the design's one identity type). */
export function parsePeerKey (bytes: Uint8Array): PrivateKey {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength > keyFileBytesMax) {
    throw new InvalidInputError(component, 'the protobuf bytes of an Ed25519 private key', bytes)
  }
  let key: PrivateKey
  try {
    key = privateKeyFromProtobuf(bytes)
  } catch (error) {
    throw new InvalidInputError(component, 'the protobuf bytes of an Ed25519 private key', bytes, { cause: error })
  }
  if (key.type !== 'Ed25519') throw new InvalidInputError(component, 'an Ed25519 private key', key.type)
  return key
}

/** The peer id (`12D3KooW…`) that stored key bytes give. */
export function peerIdOfKey (bytes: Uint8Array): PeerId {
  return peerIdFromPrivateKey(parsePeerKey(bytes)).toString()
}

/** Reads and checks a stored key. */
export async function readPeerKey (path: string): Promise<Uint8Array> {
  let bytes: Uint8Array
  try {
    bytes = await readFile(path)
  } catch (error) {
    throw new InvalidInputError(component, `a readable key file at ${JSON.stringify(path)}`, undefined, { cause: error })
  }
  parsePeerKey(bytes)
  return new Uint8Array(bytes)
}

/** Writes key bytes readable by their owner only, atomically. */
export async function writePeerKey (path: string, bytes: Uint8Array): Promise<void> {
  parsePeerKey(bytes)
  await writeSecretFile(path, bytes, component)
}

/**
 * The key at `path`, generating and storing one first if there is no file yet. A file
 * that exists but does not hold a key is an error, never silently replaced: replacing it
 * would give the agent a new peer id.
 */
export async function loadOrCreatePeerKey (path: string): Promise<Uint8Array> {
  const exists = await stat(path).then(() => true, (error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return false
    throw new InvalidInputError(component, `a key file at ${JSON.stringify(path)} we can inspect`, undefined, { cause: error })
  })
  if (exists) return await readPeerKey(path)
  const bytes = await generatePeerKey()
  await writePeerKey(path, bytes)
  return bytes
}
