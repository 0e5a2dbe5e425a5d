/**
 * Gossipsub's identity of a message read straight off the wire, before its signature is
 * checked: its author's peer id and its 64-bit sequence number, the two things
 * gossipsub's own StrictSign message id is made of. Given to gossipsub as `fastMsgIdFn`,
 * it lets a copy of a message this peer already accepted be dropped as a duplicate
 * without verifying its signature again. Every message reaches a peer once from its
 * author and again from each peer that forwards it, and on an idle cluster verifying
 * those copies (an Ed25519 verification plus a key import each) was the largest single
 * cost of a controller.
 *
 * Nothing is accepted on the strength of this id: gossipsub maps it to the real message
 * id only after the first copy passed its signature check and our validator, so a
 * message never seen, or one whose first copy was refused, is checked in full. A forged
 * copy of an accepted message (same author and number, other bytes) is dropped as the
 * duplicate it claims to be.
 */
import type { RPC } from '@chainsafe/libp2p-gossipsub/message'

export function wireMessageId (message: RPC.Message): string {
  // Hex of each part with a separator between: no two (author, number) pairs share a string.
  return `${hex(message.from)}:${hex(message.seqno)}`
}

function hex (bytes: Uint8Array | undefined): string {
  return bytes === undefined ? '-' : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}
