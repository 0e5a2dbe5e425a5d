/**
 * Noise's transport phase as the mesh runs it (agent/mesh/noise-transport-phase.ts): the
 * library's wire format — a 2-byte big-endian length, then the ciphertext, at most
 * 65,535 bytes a message — with the session's own encrypt and decrypt. Here with a
 * stand-in session whose "ciphertext" is the plaintext and a 16-byte tag, so the framing
 * is checked byte for byte; the real ciphers run in network-handshake.test.ts and every
 * libp2p test.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { noiseMessageBytesMax, opened, sealed } from '../agent/mesh/noise-transport-phase.ts'

const test = suite('noise transport phase')
const tag = new Uint8Array(16).fill(0xee)
const session = {
  encrypt: (plain: Uint8Array): Uint8Array => Uint8Array.from([...plain, ...tag]),
  decrypt: (cipher: Uint8Array, dst?: Uint8Array): Uint8Array => {
    if (!cipher.subarray(cipher.byteLength - 16).every(b => b === 0xee)) throw new Error('bad tag')
    const plain = cipher.subarray(0, cipher.byteLength - 16)
    if (dst !== undefined) dst.set(plain)
    return dst ?? plain
  }
}

async function collect (source: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = []
  for await (const chunk of source) out.push(Uint8Array.from(chunk))
  return out
}

async function * from (chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  yield * chunks
}

test('a chunk leaves as one buffer: length (big-endian) and ciphertext', async () => {
  const [wire] = await collect(sealed(from([Uint8Array.from([1, 2, 3])]), session))
  assert.equal([...wire!], [0, 19, 1, 2, 3, ...tag])
})

test('a chunk larger than one message is cut into messages of at most 65,535 bytes, still one buffer', async () => {
  const big = new Uint8Array(noiseMessageBytesMax * 2).map((_, i) => i & 0xff)
  const wire = await collect(sealed(from([big]), session))
  assert.is(wire.length, 1)
  const first = (wire[0]![0]! << 8) | wire[0]![1]!
  assert.is(first, noiseMessageBytesMax)
  const back = (await collect(opened(from(wire), session)))
  assert.equal(Buffer.concat(back), Buffer.from(big))
})

test('messages come out whole however the socket cut them', async () => {
  const messages = [Uint8Array.from([9]), new Uint8Array(300).fill(7), Uint8Array.from([1, 2])]
  const wire = Buffer.concat(await collect(sealed(from(messages), session)))
  for (const cut of [1, 2, 3, 17, 100, wire.byteLength]) {
    const pieces: Uint8Array[] = []
    for (let at = 0; at < wire.byteLength; at += cut) pieces.push(Uint8Array.from(wire.subarray(at, at + cut)))
    const back = await collect(opened(from(pieces), session))
    assert.equal(back.map(b => [...b]), messages.map(m => [...m]), `cut every ${cut} bytes`)
  }
})

test('a length shorter than a tag is refused in one line', async () => {
  try {
    await collect(opened(from([Uint8Array.from([0, 3, 1, 2, 3])]), session))
    assert.unreachable('a 3-byte message was opened')
  } catch (error) {
    assert.is((error as Error).message, 'noise transport: expected a message of at least 16 bytes, got a length of 3')
  }
})

test.run()
