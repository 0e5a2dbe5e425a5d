/**
 * The controllers' secret key (DESIGN.md §10, issue 29): 32 random bytes in
 * `<data dir>/secrets.key` (mode 0600), created by the bootstrap controller and never in
 * the Raft log, so the log, its RaftSnapshots and the LevelDB files hold only ciphertext.
 * A controller that joins (`cantripd --join`) asks a running controller for it over the
 * authenticated mesh (`secretKeyProtocol`), which answers only peers that are controllers.
 * Content is sealed with AES-256-GCM: `aes1:` and base64 of nonce, tag and ciphertext.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { decode, encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import type { Logger } from '../runtime/logger.ts'
import type { SecretSealer } from '../runtime/model/secret-sealing.ts'
import type { Transport } from '../runtime/transport.ts'

export const secretKeyProtocol = 'controller/secret-key/1'
const prefix = 'aes1:'
const component = 'secret key store'

export function aesGcmSealer (key: Uint8Array): SecretSealer {
  if (key.byteLength !== 32) throw new Error(`${component}: expected a 32-byte key, got ${key.byteLength} bytes`)
  return {
    seal: content => {
      const nonce = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, nonce)
      const body = Buffer.concat([cipher.update(JSON.stringify(content), 'utf8'), cipher.final()])
      return prefix + Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64')
    },
    open: sealed => {
      if (!sealed.startsWith(prefix)) throw new Error('secret content was not sealed with this controller group\'s key')
      const bytes = Buffer.from(sealed.slice(prefix.length), 'base64')
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12))
      decipher.setAuthTag(bytes.subarray(12, 28))
      // A wrong key or damaged text fails the tag check here; the message names neither.
      const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')
      return JSON.parse(plain) as Record<string, string>
    }
  }
}

function keyPath (dataDir: string): string {
  return join(dataDir, 'secrets.key')
}

function writeKey (dataDir: string, key: Uint8Array): void {
  mkdirSync(dirname(keyPath(dataDir)), { recursive: true })
  writeFileSync(keyPath(dataDir), key, { mode: 0o600, flush: true })
}

export interface SecretKeyOptions {
  dataDir: string
  transport: Transport
  /** The running controllers to ask, when joining. */
  controllers: readonly string[]
  logger: Logger
  sleep: (ms: number) => Promise<void>
}

/**
 * This controller's key when it has one now: from its data dir, or new at bootstrap.
 * Undefined for a controller that joins without one: it asks the group (`fetchSecretKey`).
 */
export function localSecretKey (dataDir: string, join: boolean): Uint8Array | undefined {
  const path = keyPath(dataDir)
  if (existsSync(path)) return new Uint8Array(readFileSync(path))
  if (join) return undefined
  const key = randomBytes(32)
  writeKey(dataDir, key)
  return key
}

/**
 * A joining controller asks running ones for the key until one answers. They answer only
 * controllers, and the group makes a joiner a member only after it serves its API, so the
 * joiner serves first and asks in the background (see `deferredSealer`).
 */
export async function fetchSecretKey (options: SecretKeyOptions): Promise<Uint8Array> {
  let last = 'no controller to ask'
  for (let attempt = 0; attempt < limits.secretKeyFetchAttemptsMax; attempt++) {
    for (const peer of options.controllers) {
      try {
        const reply = decode(await options.transport.request(peer, secretKeyProtocol, encode({ op: 'secret-key' }, component), { timeoutMs: 5_000 }), component) as { ok?: unknown, key?: unknown, error?: unknown }
        if (reply.ok === true && reply.key instanceof Uint8Array && reply.key.byteLength === 32) {
          writeKey(options.dataDir, reply.key)
          return reply.key
        }
        last = typeof reply.error === 'string' ? reply.error : `controller "${peer}" sent a malformed reply`
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
      }
    }
    options.logger.log('debug', `${component}: no key yet (${last}); asking again`)
    await options.sleep(limits.secretKeyFetchRetryMs)
  }
  throw new Error(`${component}: cannot get the secret key from a running controller: ${last}`)
}

/**
 * Seals and opens with the key once `key()` has one; until then every secret call is
 * refused with one line (everything else this controller does needs no key).
 */
export function deferredSealer (key: () => Uint8Array | undefined): SecretSealer {
  let sealer: SecretSealer | undefined
  const current = (): SecretSealer => {
    if (sealer !== undefined) return sealer
    const known = key()
    if (known === undefined) throw new Error(`${component}: this controller joined the group and has not received its secret key yet; try again shortly`)
    sealer = aesGcmSealer(known)
    return sealer
  }
  return { seal: content => current().seal(content), open: sealed => current().open(sealed) }
}

/** Answers controllers (and only them) that ask for the key. Returns the unhandle function. */
export function serveSecretKey (transport: Transport, key: () => Uint8Array | undefined, isController: (peer: string) => boolean): () => void {
  transport.handle(secretKeyProtocol, async request => {
    if (!isController(request.from)) return encode({ ok: false, error: `${component}: permission denied: peer ${JSON.stringify(request.from)} is not a controller` }, component)
    const known = key()
    if (known === undefined) return encode({ ok: false, error: `${component}: this controller has no key yet` }, component)
    return encode({ ok: true, key: known }, component)
  })
  return () => { transport.unhandle(secretKeyProtocol) }
}
