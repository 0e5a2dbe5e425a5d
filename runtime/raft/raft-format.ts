import type { ClusterConfig, Entry, HardState, Message, RaftSnapshot, ReadState, SoftState } from './raft-types.ts'

/**
 * One-line renderings of Raft data for traces and golden test output. Positions are
 * written `index@term`: `5@2` is the entry at index 5 written in term 2.
 */
const decoder = new TextDecoder('utf-8', { fatal: true })

export function describeBytes (bytes: Uint8Array): string {
  try {
    const text = decoder.decode(bytes)
    if (/^[\x20-\x7e]*$/.test(text)) return JSON.stringify(text)
  } catch {
    // Not UTF-8: fall through to hex.
  }
  let hex = ''
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
  return `0x${hex}`
}

export function describeEntry (entry: Entry): string {
  const position = `${entry.index}@${entry.term}`
  if (entry.type === 'config-change' && entry.configChange !== undefined) {
    return `${position} ${entry.configChange.type} ${entry.configChange.node}`
  }
  return `${position} ${describeBytes(entry.data)}`
}

export function describeConfig (config: ClusterConfig): string {
  return `(${config.voters.join(',')})`
}

export function describeSnapshot (snapshot: RaftSnapshot): string {
  const meta = snapshot.metadata
  return `${meta.index}@${meta.term} voters=${describeConfig(meta.config)} data=${describeBytes(snapshot.data)}`
}

export function describeHardState (hardState: HardState): string {
  return `term=${hardState.term} vote=${hardState.vote === '' ? '-' : hardState.vote} commit=${hardState.commit}`
}

export function describeSoftState (softState: SoftState): string {
  return `role=${softState.role} leader=${softState.leader === '' ? '-' : softState.leader}`
}

export function describeReadState (readState: ReadState): string {
  return `index=${readState.index} context=${describeBytes(readState.context)}`
}

export function describeMessage (m: Message): string {
  const parts = [`${m.from}->${m.to} ${m.type}`]
  if (m.type !== 'propose' && m.type !== 'read-index') parts.push(`term=${m.term}`)
  switch (m.type) {
    case 'pre-vote':
    case 'vote':
      parts.push(`last=${m.index ?? 0}@${m.logTerm ?? 0}`)
      if (m.transfer === true) parts.push('transfer')
      break
    case 'pre-vote-response':
    case 'vote-response':
      parts.push(m.reject === true ? 'rejected' : 'granted')
      break
    case 'append':
      parts.push(`prev=${m.index ?? 0}@${m.logTerm ?? 0}`, `commit=${m.commit ?? 0}`, `entries=[${(m.entries ?? []).map(describeEntry).join(', ')}]`)
      break
    case 'append-response':
      if (m.reject === true) parts.push(`rejected prev=${m.index ?? 0} hint=${m.rejectHint ?? 0}@${m.rejectHintTerm ?? 0}`)
      else parts.push(`match=${m.index ?? 0}`)
      break
    case 'heartbeat':
      parts.push(`commit=${m.commit ?? 0}`)
      break
    case 'snapshot':
      if (m.snapshot !== undefined) parts.push(`snapshot=${describeSnapshot(m.snapshot)}`)
      break
    case 'read-index-response':
      parts.push(`index=${m.index ?? 0}`)
      break
    case 'propose':
      parts.push(`entries=[${(m.entries ?? []).map(e => describeBytes(e.data)).join(', ')}]`)
      break
    default:
      break
  }
  if (m.context !== undefined && m.context.byteLength > 0) parts.push(`context=${describeBytes(m.context)}`)
  return parts.join(' ')
}
