/**
 * The controller's charm store: archives by content address (sha256 of the archive), in
 * the controller's Storage beside its Raft state. The model records only the URL →
 * hash; an agent deploying a charm fetches the archive by that hash and checks it again
 * as it unpacks (agent/charm/charm-archive.ts), so a store that returned other bytes
 * could not install anything.
 */
import { charmArchiveHash } from '../charm/charm-archive.ts'
import { InvalidInputError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import type { Storage } from '../../runtime/storage.ts'

const component = 'charm store'
const keyPrefix = 'charm-archive/'
const hashPattern = /^[0-9a-f]{64}$/

export class CharmStore {
  readonly #storage: Storage

  constructor (storage: Storage) {
    this.#storage = storage
  }

  /** Stores `bytes` (synced) and returns its hash; storing the same archive again is a no-op. */
  async put (bytes: Uint8Array): Promise<string> {
    if (bytes.byteLength > limits.charmArchiveBytesMax) {
      throw new InvalidInputError(component, `an archive of at most ${limits.charmArchiveBytesMax} bytes`, `${bytes.byteLength} bytes`)
    }
    const hash = charmArchiveHash(bytes)
    if (await this.#storage.get(keyPrefix + hash) === undefined) await this.#storage.put(keyPrefix + hash, bytes, { sync: true })
    return hash
  }

  async get (hash: string): Promise<Uint8Array | undefined> {
    if (!hashPattern.test(hash)) throw new InvalidInputError(component, 'a sha256 hex digest', hash)
    return await this.#storage.get(keyPrefix + hash)
  }
}
