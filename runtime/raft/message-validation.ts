import { describeValue } from '../errors.ts'
import type { Entry, Message, MessageType, RaftSnapshot } from './raft-types.ts'

const messageTypes: ReadonlySet<string> = new Set<MessageType>([
  'pre-vote', 'pre-vote-response', 'vote', 'vote-response', 'append', 'append-response',
  'heartbeat', 'heartbeat-response', 'snapshot', 'timeout-now', 'read-index',
  'read-index-response', 'propose'
])

/** Forwarded client requests carry term 0: they are requests, not part of any term. */
const termlessTypes: ReadonlySet<MessageType> = new Set<MessageType>(['propose', 'read-index'])

/** Fields each type cannot do without. */
const requiredFields: Readonly<Record<MessageType, ReadonlyArray<keyof Message>>> = {
  'pre-vote': ['index', 'logTerm'],
  vote: ['index', 'logTerm'],
  'pre-vote-response': [],
  'vote-response': [],
  append: ['index', 'logTerm', 'commit', 'entries'],
  'append-response': ['index'],
  heartbeat: ['commit'],
  'heartbeat-response': [],
  snapshot: ['snapshot'],
  'timeout-now': [],
  'read-index': ['context'],
  'read-index-response': ['index', 'context'],
  propose: ['entries']
}

const nodeIdLengthMax = 256

/**
 * Why a message from the network cannot be stepped, or undefined if it is well formed.
 * Messages come from other processes, so nothing is trusted: a malformed one is dropped
 * and counted rather than allowed to break an invariant (or to assert) deep inside.
 * Counts and indexes must be safe integers below `Number.MAX_SAFE_INTEGER`, so that
 * adding one to any of them stays exact.
 */
/** Optional fields that must be counts when present (one array for every message checked). */
const countFields = ['index', 'logTerm', 'commit', 'rejectHint', 'rejectHintTerm'] as const

export function messageProblem (value: unknown, self: string): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not an object'
  const m = value as Partial<Message>
  if (typeof m.type !== 'string' || !messageTypes.has(m.type)) return `unknown type ${describeValue(m.type)}`
  if (!isNodeId(m.from) || !isNodeId(m.to)) return 'from and to must be node ids'
  if (m.to !== self) return `addressed to "${m.to}"`
  if (m.from === self) return 'sent by this node to itself'
  if (!isCount(m.term)) return `term ${describeValue(m.term)} is not a safe integer`
  if (termlessTypes.has(m.type) !== (m.term === 0)) return `term ${m.term} is wrong for ${m.type}`
  for (const field of requiredFields[m.type]) if (m[field] === undefined) return `${m.type} lacks ${field}`
  for (const field of countFields) {
    if (m[field] !== undefined && !isCount(m[field])) return `${field} ${describeValue(m[field])} is not a safe integer`
  }
  if (m.reject !== undefined && typeof m.reject !== 'boolean') return 'reject must be a boolean'
  if (m.transfer !== undefined && typeof m.transfer !== 'boolean') return 'transfer must be a boolean'
  if (m.context !== undefined && !(m.context instanceof Uint8Array)) return 'context must be bytes'
  if (m.entries !== undefined) {
    const problem = entriesProblem(m as Message)
    if (problem !== undefined) return problem
  }
  if (m.snapshot !== undefined) return snapshotProblem(m.snapshot)
  return undefined
}

/** Entries must be well formed and, in an append, follow on from its previous index in order. */
function entriesProblem (m: Message): string | undefined {
  if (!Array.isArray(m.entries)) return 'entries must be an array'
  let previousTerm = m.logTerm ?? 0
  for (let i = 0; i < m.entries.length; i++) {
    const entry: unknown = m.entries[i]
    const problem = entryProblem(entry)
    if (problem !== undefined) return `entry ${i}: ${problem}`
    if (m.type !== 'append') continue
    const { index, term } = entry as Entry
    if (index !== m.index! + 1 + i) return `entry ${i} has index ${index}, expected ${m.index! + 1 + i}`
    if (term < previousTerm || term > m.term) return `entry ${i} has term ${term} out of order`
    previousTerm = term
  }
  return undefined
}

function entryProblem (value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not an object'
  const e = value as Partial<Entry>
  if (!isCount(e.term) || !isCount(e.index)) return 'term and index must be safe integers'
  if (!(e.data instanceof Uint8Array)) return 'data must be bytes'
  if (e.type === 'normal') return e.configChange === undefined ? undefined : 'a normal entry carries a config change'
  if (e.type !== 'config-change') return `unknown entry type ${describeValue(e.type)}`
  const change = e.configChange
  if (typeof change !== 'object' || change === null) return 'config change missing'
  if (change.type !== 'add-voter' && change.type !== 'remove-voter') return 'unknown config change'
  return isNodeId(change.node) ? undefined : 'config change node must be a node id'
}

function snapshotProblem (value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'snapshot is not an object'
  const s = value as Partial<RaftSnapshot>
  if (!(s.data instanceof Uint8Array)) return 'snapshot data must be bytes'
  const meta = s.metadata
  if (typeof meta !== 'object' || meta === null) return 'snapshot metadata missing'
  if (!isCount(meta.index) || !isCount(meta.term) || meta.index === 0) return 'snapshot index and term must be positive safe integers'
  const voters: unknown = meta.config?.voters
  if (!Array.isArray(voters) || !voters.every(isNodeId)) return 'snapshot voters must be node ids'
  return undefined
}

function isCount (value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value < Number.MAX_SAFE_INTEGER
}

function isNodeId (value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= nodeIdLengthMax
}
