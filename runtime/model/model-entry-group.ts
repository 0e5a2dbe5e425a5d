import { assert } from '../assert.ts'
import { encode } from '../codec.ts'
import { limits } from '../limits.ts'
import type { CommandGrouping } from '../raft/proposal-queue.ts'
import type { CommandResult, ModelCommand } from './model-types.ts'

const component = 'model entry group'

/** msgpack's array headers: fixarray up to 15 items, array 16 up to 65,535. */
const fixArrayEmpty = 0x90
const fixArrayItemsMax = 15
const array16 = 0xdc

/**
 * Group commit for the model (runtime/raft/proposal-queue.ts): the commands a leader's
 * host takes together become one `apply-batch` entry (apply/batch-commands.ts), which
 * applies each in order with its own request-id dedup and result. A batch never holds a
 * batch, so an `apply-batch` proposed as such stays an entry of its own.
 */
export function modelEntryGrouping (controller: string): CommandGrouping<ModelCommand, CommandResult> {
  // The batch's fields with `commands` last and empty: its final byte is the empty array's
  // header, replaced by the real one and followed by the commands exactly as each was
  // encoded, so nothing is encoded twice.
  const head = encode({ type: 'apply-batch', requestId: `${controller}/group`, proposer: { kind: 'controller', id: controller }, commands: [] }, component)
  assert(head[head.byteLength - 1] === fixArrayEmpty, `${component}: the batch's encoding does not end with its empty commands`)
  const prefix = head.subarray(0, head.byteLength - 1)
  return {
    commandsMax: limits.modelEntryCommandsMax,
    bytesMax: limits.modelEntryBytesMax,
    groupable: command => command.type !== 'apply-batch',
    encodeGroup: encoded => concatenated(prefix, arrayHeader(encoded.length), encoded),
    splitResult: (result, count) => {
      // A refusal of the batch itself (never expected: the leader built it) is each command's.
      if (!result.ok) return Array.from({ length: count }, () => result)
      const results = result.results ?? []
      assert(results.length === count, `${component}: a batch of ${count} applied with ${results.length} results`)
      return [...results]
    }
  }
}

function arrayHeader (count: number): Uint8Array {
  assert(Number.isSafeInteger(count) && count >= 0 && count <= 0xffff, `${component}: ${count} commands in one entry`)
  return count <= fixArrayItemsMax ? Uint8Array.of(fixArrayEmpty | count) : Uint8Array.of(array16, count >> 8, count & 0xff)
}

function concatenated (prefix: Uint8Array, header: Uint8Array, parts: readonly Uint8Array[]): Uint8Array {
  let length = prefix.byteLength + header.byteLength
  for (const part of parts) length += part.byteLength
  const out = new Uint8Array(length)
  out.set(prefix, 0)
  out.set(header, prefix.byteLength)
  let at = prefix.byteLength + header.byteLength
  for (const part of parts) {
    out.set(part, at)
    at += part.byteLength
  }
  return out
}
