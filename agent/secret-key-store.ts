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
  join: boolean
  transport: Transport
  /** The running controllers to ask, when joining. */
  controllers: readonly string[]
  logger: Logger
  sleep: (ms: number) => Promise<void>
}

/** This controller's key: from its data dir, new at bootstrap, or asked of a running controller when joining. */
export async function loadSecretKey (options: SecretKeyOptions): Promise<Uint8Array> {
  const path = keyPath(options.dataDir)
  if (existsSync(path)) return new Uint8Array(readFileSync(path))
  if (!options.join) {
    const key = randomBytes(32)
    writeKey(options.dataDir, key)
    return key
  }
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

/** Answers controllers (and only them) that ask for the key. Returns the unhandle function. */
export function serveSecretKey (transport: Transport, key: Uint8Array, isController: (peer: string) => boolean): () => void {
  transport.handle(secretKeyProtocol, async request => {
    if (!isController(request.from)) return encode({ ok: false, error: `${component}: permission denied: peer ${JSON.stringify(request.from)} is not a controller` }, component)
    return encode({ ok: true, key }, component)
  })
  return () => { transport.unhandle(secretKeyProtocol) }
}
