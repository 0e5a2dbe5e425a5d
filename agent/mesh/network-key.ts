/**
 * The mesh's network key: a libp2p private-network pre-shared key (pnet), shared by every
 * agent and controller of one deployment. Peers without the same key cannot complete a
 * connection, so they never reach noise, identify, gossip or a request handler.
 *
 * The key is kept in the standard swarm key file format that go-libp2p and IPFS use:
 *
 *     /key/swarm/psk/1.0.0/
 *     /base16/
 *     <64 hex digits>
 *
 * The bytes of that text are what `preSharedKey({ psk })` takes.
 */
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { InvalidInputError } from '../../runtime/errors.ts'
import { writeSecretFile } from './secret-file.ts'

const component = 'network key'
const header = '/key/swarm/psk/1.0.0/\n/base16/\n'
/** The key proper: 32 bytes, as @libp2p/pnet's decoder requires. */
const keyBytes = 32
/** Anything longer than a key file with a trailing newline and CRLF line ends is not one. */
const fileBytesMax = 128

/** A new random network key, as swarm key file bytes. */
export function generateNetworkKey (): Uint8Array {
  return new TextEncoder().encode(header + randomBytes(keyBytes).toString('hex'))
}

/**
 * Checks swarm key file bytes (or text) and returns them in the canonical form pnet takes:
 * LF line ends, lower-case hex, no trailing newline. Refuses anything else with a message
 * that says what a key file looks like, rather than pnet's bare "invalid psk".
 */
export function parseNetworkKey (key: Uint8Array | string): Uint8Array {
  const text = typeof key === 'string' ? key : key instanceof Uint8Array ? decodeUtf8(key) : undefined
  if (text === undefined || text.length > fileBytesMax) {
    throw new InvalidInputError(component, 'swarm key file bytes ("/key/swarm/psk/1.0.0/", "/base16/", 64 hex digits)', key)
  }
  const lines = text.split(/\r\n|\n/)
  if (lines.length === 4 && lines[3] === '') lines.pop()
  const [tag, codec, hex] = lines
  if (lines.length !== 3 || tag !== '/key/swarm/psk/1.0.0/' || codec !== '/base16/' || hex === undefined || !/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new InvalidInputError(component, 'a swarm key file: "/key/swarm/psk/1.0.0/", "/base16/" and 64 hex digits on three lines', text)
  }
  return new TextEncoder().encode(header + hex.toLowerCase())
}

/** Reads and checks a swarm key file. */
export async function readNetworkKey (path: string): Promise<Uint8Array> {
  let bytes: Uint8Array
  try {
    bytes = await readFile(path)
  } catch (error) {
    throw new InvalidInputError(component, `a readable swarm key file at ${JSON.stringify(path)}`, undefined, { cause: error })
  }
  return parseNetworkKey(bytes)
}

/** Writes a network key readable by its owner only, atomically (a crash leaves the old file or the new one). */
export async function writeNetworkKey (path: string, key: Uint8Array): Promise<void> {
  await writeSecretFile(path, parseNetworkKey(key), component)
}

function decodeUtf8 (bytes: Uint8Array): string | undefined {
  if (bytes.byteLength > fileBytesMax) return undefined
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}
