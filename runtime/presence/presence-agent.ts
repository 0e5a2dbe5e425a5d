/**
 * Presence over gossip (DESIGN.md §5): every agent publishes a heartbeat on its model's
 * presence topic every `heartbeatIntervalMs` and feeds what it hears into its own
 * `Membership`. No UDP of its own, unlike serf: the gossip Transport carries it.
 *
 * Who hears whom: controllers hear every agent, machine agents hear the controllers.
 * Controllers subscribe to the presence topic, where everyone publishes; controllers
 * also publish on the controllers' presence topic, which machine agents subscribe to.
 * Every agent hearing every other made presence cost N² deliveries a second (each a
 * signature check): at 50 agents on one 2-core host that alone starved the controllers
 * into elections. Now it is about 2 × controllers × N. The controllers' table is the one
 * that says a unit's agent is lost (as Juju's controller does); a machine agent needs the
 * controllers' heartbeats only to learn they are there and to refute their claims about
 * it.
 *
 * A heartbeat carries a rotating digest of this agent's "not alive to me" claims
 * (suspect, failed, left, with the incarnation claimed). A member that finds itself
 * named at its own incarnation or above raises its incarnation past the claim and
 * heartbeats at once: that is the refutation, and after a partition heals it brings
 * both sides back to alive within about one heartbeat.
 *
 * Messages are checked by the topic validator before delivery: size, msgpack, schema,
 * and the `sender` field must be the transport's `from` (gossip signs `from`, so a peer
 * cannot speak for another); anything else is rejected, which penalises the sender.
 */
import { assert } from '../assert.ts'
import type { Clock, TimerHandle } from '../clock.ts'
import { decode, encode } from '../codec.ts'
import { limits } from '../limits.ts'
import type { TopicMessage, Transport, ValidationResult } from '../transport.ts'
import {
  Membership,
  type Member,
  type MemberChange,
  type MemberRole,
  type MembershipCounters
} from './membership.ts'

const component = 'presence'
const wireVersion = 1
/** The longest software version a heartbeat may carry (e.g. `0.1.0`, `1.2.3-rc.1+build`). */
export const presenceVersionLengthMax = 64

export interface DigestEntry {
  id: string
  incarnation: number
  state: 'suspect' | 'failed' | 'left'
}

export type PresenceMessage =
  | { v: 1, kind: 'heartbeat', sender: string, role: MemberRole, incarnation: number, digest: DigestEntry[], version?: string }
  | { v: 1, kind: 'leave', sender: string, role: MemberRole, incarnation: number }

/** `role`: a machine agent's heartbeat on the controllers' topic, or one from a peer not among the controllers. */
export type PresenceRejectReason = 'size' | 'decode' | 'schema' | 'sender' | 'role'

export interface PresenceCounters extends MembershipCounters {
  heartbeatsSent: number
  heartbeatsReceived: number
  leavesReceived: number
  /** Times this agent raised its incarnation because a peer claimed it was not alive. */
  refutations: number
  /** Publications the transport refused (stopped, or an error from the network). */
  publishFailed: number
  rejected: Record<PresenceRejectReason, number>
}

/** A member state change as this agent (`observer`) saw it. */
export interface PresenceChange extends MemberChange {
  readonly observer: string
}

export interface PresenceAgentComponents {
  transport: Transport
  clock: Clock
}

export interface PresenceAgentInit {
  /** The model whose presence topic this agent joins. */
  modelUuid: string
  role: MemberRole
  /** Start above any incarnation this peer used before (a restart may pass a stored one). */
  incarnation?: number
  heartbeatIntervalMs?: number
  suspectAfterMs?: number
  failedAfterMs?: number
  reapAfterMs?: number
  membersMax?: number
  /**
   * Machine agents: the controllers' peer ids, the only senders accepted on the
   * controllers' topic (asked at each message, so it can follow the group). Without it,
   * any heartbeat that says it is from a controller is accepted there.
   */
  controllers?: () => ReadonlySet<string>
  /** The software version this agent runs, carried in its heartbeats so others can see version skew. */
  version?: string
  onChange?: (change: PresenceChange) => void
}

/** Where every agent of the model publishes, and the controllers listen. */
export function presenceTopic (modelUuid: string): string {
  return `cantrip/presence/${modelUuid}`
}

/** Where the controllers publish too, and the machine agents listen. */
export function controllerPresenceTopic (modelUuid: string): string {
  return `cantrip/presence-controllers/${modelUuid}`
}

const roles: ReadonlySet<string> = new Set(['controller', 'machine'])
const digestStates: ReadonlySet<string> = new Set(['suspect', 'failed', 'left'])

function isMemberId (value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= limits.presenceMemberIdLengthMax
}

function isIncarnation (value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

function hasExactKeys (value: object, keys: readonly string[]): boolean {
  const own = Object.keys(value)
  return own.length === keys.length && keys.every(key => Object.hasOwn(value, key))
}

/** The schema check: returns the message, or undefined when it does not match exactly. */
export function parsePresenceMessage (value: unknown): PresenceMessage | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const m = value as Record<string, unknown>
  if (m.v !== wireVersion || !isMemberId(m.sender) || typeof m.role !== 'string' || !roles.has(m.role) || !isIncarnation(m.incarnation)) return undefined
  if (m.kind === 'leave') {
    if (!hasExactKeys(m, ['v', 'kind', 'sender', 'role', 'incarnation'])) return undefined
    return { v: 1, kind: 'leave', sender: m.sender, role: m.role as MemberRole, incarnation: m.incarnation }
  }
  // `version` is optional: agents of older releases do not send it.
  const hasVersion = Object.hasOwn(m, 'version')
  if (m.kind !== 'heartbeat' || !hasExactKeys(m, ['v', 'kind', 'sender', 'role', 'incarnation', 'digest', ...(hasVersion ? ['version'] : [])])) return undefined
  if (hasVersion && !isVersion(m.version)) return undefined
  if (!Array.isArray(m.digest) || m.digest.length > limits.presenceDigestEntriesMax) return undefined
  const digest: DigestEntry[] = []
  for (const entry of m.digest as unknown[]) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return undefined
    const e = entry as Record<string, unknown>
    if (!hasExactKeys(e, ['id', 'incarnation', 'state']) || !isMemberId(e.id) || !isIncarnation(e.incarnation) ||
      typeof e.state !== 'string' || !digestStates.has(e.state)) return undefined
    digest.push({ id: e.id, incarnation: e.incarnation, state: e.state as DigestEntry['state'] })
  }
  return { v: 1, kind: 'heartbeat', sender: m.sender, role: m.role as MemberRole, incarnation: m.incarnation, digest, ...(hasVersion ? { version: m.version as string } : {}) }
}

function isVersion (value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= presenceVersionLengthMax && /^[0-9A-Za-z.+~-]+$/.test(value)
}

export class PresenceAgent {
  readonly peerId: string
  readonly role: MemberRole
  /** Where this agent publishes: the presence topic, and for a controller the controllers' topic as well. */
  readonly topics: readonly string[]
  /** The topic this agent hears: the presence topic for a controller, the controllers' topic for a machine agent. */
  readonly hears: string
  readonly heartbeatIntervalMs: number
  readonly membership: Membership
  readonly #transport: Transport
  readonly #clock: Clock
  readonly #listeners = new Set<(change: PresenceChange) => void>()
  readonly #version: string | undefined
  readonly #controllers: (() => ReadonlySet<string>) | undefined
  /** The version each member last said it runs; only members the table holds are kept. */
  readonly #versions = new Map<string, string>()
  #incarnation: number
  #digestCursor = 0
  #timer: TimerHandle | undefined
  #unsubscribe: (() => void) | undefined
  #state: 'new' | 'running' | 'left' | 'stopped' = 'new'
  readonly #counters = {
    heartbeatsSent: 0, heartbeatsReceived: 0, leavesReceived: 0, refutations: 0, publishFailed: 0,
    rejected: { size: 0, decode: 0, schema: 0, sender: 0, role: 0 } as Record<PresenceRejectReason, number>
  }

  constructor (components: PresenceAgentComponents, init: PresenceAgentInit) {
    assert(components?.transport !== undefined, 'presence: no "transport" component; pass the agent\'s gossip transport')
    assert(components.clock !== undefined, 'presence: no "clock" component; pass the agent\'s clock')
    assert(typeof init?.modelUuid === 'string' && init.modelUuid.length > 0, 'presence: no "modelUuid"; pass the model this agent belongs to')
    assert(roles.has(init.role), `presence: role must be "controller" or "machine", got ${JSON.stringify(init.role)}`)
    this.#transport = components.transport
    this.#clock = components.clock
    this.peerId = components.transport.peerId
    assert(isMemberId(this.peerId), `presence: peer id must be 1..${limits.presenceMemberIdLengthMax} characters, got ${JSON.stringify(this.peerId)}`)
    this.role = init.role
    const everyone = presenceTopic(init.modelUuid)
    const controllers = controllerPresenceTopic(init.modelUuid)
    this.topics = this.role === 'controller' ? [everyone, controllers] : [everyone]
    this.hears = this.role === 'controller' ? everyone : controllers
    this.#controllers = init.controllers
    this.heartbeatIntervalMs = init.heartbeatIntervalMs ?? limits.presenceHeartbeatIntervalMsDefault
    assert(Number.isSafeInteger(this.heartbeatIntervalMs) && this.heartbeatIntervalMs > 0,
      `presence: heartbeatIntervalMs must be a positive integer, got ${String(this.heartbeatIntervalMs)}`)
    this.#incarnation = init.incarnation ?? 0
    assert(isIncarnation(this.#incarnation), `presence: incarnation must be a non-negative safe integer, got ${String(this.#incarnation)}`)
    this.membership = new Membership({
      self: this.peerId,
      ...(init.suspectAfterMs === undefined ? {} : { suspectAfterMs: init.suspectAfterMs }),
      ...(init.failedAfterMs === undefined ? {} : { failedAfterMs: init.failedAfterMs }),
      ...(init.reapAfterMs === undefined ? {} : { reapAfterMs: init.reapAfterMs }),
      ...(init.membersMax === undefined ? {} : { membersMax: init.membersMax })
    })
    assert(this.membership.timings.suspectAfterMs > this.heartbeatIntervalMs,
      `presence: suspectAfterMs (${this.membership.timings.suspectAfterMs}) must exceed heartbeatIntervalMs (${this.heartbeatIntervalMs}), or every member is suspected between heartbeats`)
    if (init.onChange !== undefined) this.#listeners.add(init.onChange)
    assert(init.version === undefined || isVersion(init.version), `presence: version must be 1..${presenceVersionLengthMax} characters of [0-9A-Za-z.+~-], got ${JSON.stringify(init.version)}`)
    this.#version = init.version
  }

  /** The version member `id` last reported in a heartbeat, if it did. */
  versionOf (id: string): string | undefined {
    return id === this.peerId ? this.#version : this.#versions.get(id)
  }

  get incarnation (): number {
    return this.#incarnation
  }

  get running (): boolean {
    return this.#state === 'running'
  }

  /** Subscribes, heartbeats at once and then every interval. */
  start (): void {
    assert(this.#state === 'new', `presence: agent "${this.peerId}" cannot start: it is ${this.#state}`)
    this.#state = 'running'
    this.#transport.setTopicValidator(this.hears, message => this.#validate(message))
    this.#unsubscribe = this.#transport.subscribe(this.hears, message => { this.#receive(message) })
    this.#beat()
  }

  onChange (listener: (change: PresenceChange) => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  members (): Member[] {
    return this.membership.members()
  }

  member (id: string): Member | undefined {
    return this.membership.get(id)
  }

  counters (): PresenceCounters {
    return { ...this.membership.counters(), ...this.#counters, rejected: { ...this.#counters.rejected } }
  }

  /** Says goodbye on the topic (so others mark it left, not failed) and stops. */
  async leave (): Promise<void> {
    if (this.#state !== 'running') return
    this.#state = 'left'
    this.#halt()
    const message: PresenceMessage = { v: 1, kind: 'leave', sender: this.peerId, role: this.role, incarnation: this.#incarnation }
    await this.#publish(message)
  }

  /** Stops without a goodbye, as a crash would look to the others. */
  stop (): void {
    if (this.#state === 'running') this.#halt()
    this.#state = 'stopped'
  }

  #halt (): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#unsubscribe?.()
    this.#unsubscribe = undefined
    try {
      this.#transport.setTopicValidator(this.hears, undefined)
    } catch {
      // A stopped transport has no validators left to remove.
    }
  }

  #beat (): void {
    if (this.#state !== 'running') return
    this.#emit(this.membership.tick(this.#clock.now()))
    // Reaped members' versions go with them, so the map stays within membersMax.
    for (const id of [...this.#versions.keys()]) if (this.membership.get(id) === undefined) this.#versions.delete(id)
    this.#sendHeartbeat()
    this.#timer = this.#clock.setTimeout(() => { this.#beat() }, this.heartbeatIntervalMs)
  }

  #sendHeartbeat (): void {
    const message: PresenceMessage = {
      v: 1, kind: 'heartbeat', sender: this.peerId, role: this.role, incarnation: this.#incarnation, digest: this.#digest(),
      ...(this.#version === undefined ? {} : { version: this.#version })
    }
    this.#counters.heartbeatsSent++
    void this.#publish(message)
  }

  /** The next window of claims, rotating so every claim is sent in turn. */
  #digest (): DigestEntry[] {
    const claims: DigestEntry[] = []
    for (const member of this.membership.members()) {
      if (member.state !== 'alive') claims.push({ id: member.id, incarnation: member.incarnation, state: member.state })
    }
    if (claims.length <= limits.presenceDigestEntriesMax) return claims
    const start = this.#digestCursor % claims.length
    this.#digestCursor = start + limits.presenceDigestEntriesMax
    return Array.from({ length: limits.presenceDigestEntriesMax }, (_, i) => claims[(start + i) % claims.length]!)
  }

  /** Encodes and checks at once (a broken invariant throws here, not in a promise), then publishes on each of its topics. */
  #publish (message: PresenceMessage): Promise<void> {
    const data = encode(message, component)
    assert(data.byteLength <= limits.presenceMessageBytesMax,
      `presence: own ${message.kind} of "${this.peerId}" is ${data.byteLength} bytes, above presenceMessageBytesMax`)
    return Promise.all(this.topics.map(topic => {
      let sent: Promise<void>
      try {
        sent = this.#transport.publish(topic, data)
      } catch {
        sent = Promise.reject(new Error('publish threw'))
      }
      return sent.catch(() => { this.#counters.publishFailed++ })
    })).then(() => {})
  }

  #reject (reason: PresenceRejectReason): ValidationResult {
    this.#counters.rejected[reason]++
    return 'reject'
  }

  #validate (message: TopicMessage): ValidationResult {
    if (message.data.byteLength > limits.presenceMessageBytesMax) return this.#reject('size')
    let value: unknown
    try {
      value = decode(message.data, component)
    } catch {
      return this.#reject('decode')
    }
    const parsed = parsePresenceMessage(value)
    if (parsed === undefined) return this.#reject('schema')
    if (parsed.sender !== message.from) return this.#reject('sender')
    if (this.role === 'machine' && (parsed.role !== 'controller' || this.#controllers?.().has(parsed.sender) === false)) return this.#reject('role')
    return 'accept'
  }

  #receive (message: TopicMessage): void {
    if (this.#state !== 'running') return
    // The validator accepted it; parse again rather than hold parsed values between the two calls.
    const parsed = parsePresenceMessage(decode(message.data, component))
    assert(parsed !== undefined && parsed.sender === message.from,
      `presence: message "${message.id}" reached "${this.peerId}" without passing its validator`)
    const now = this.#clock.now()
    if (parsed.kind === 'leave') {
      this.#counters.leavesReceived++
      this.#emit(this.membership.leave(parsed.sender, parsed.role, parsed.incarnation, now))
      return
    }
    this.#counters.heartbeatsReceived++
    this.#emit(this.membership.heartbeat(parsed.sender, parsed.role, parsed.incarnation, now))
    if (parsed.version !== undefined && this.membership.get(parsed.sender) !== undefined) this.#versions.set(parsed.sender, parsed.version)
    const claim = parsed.digest.find(entry => entry.id === this.peerId && entry.incarnation >= this.#incarnation)
    if (claim !== undefined) {
      assert(claim.incarnation < Number.MAX_SAFE_INTEGER, `presence: incarnation of "${this.peerId}" cannot be raised past ${claim.incarnation}`)
      this.#incarnation = claim.incarnation + 1
      this.#counters.refutations++
      this.#sendHeartbeat()
    }
  }

  #emit (changes: MemberChange[]): void {
    for (const change of changes) {
      const event: PresenceChange = { ...change, observer: this.peerId }
      for (const listener of [...this.#listeners]) listener(event)
    }
  }
}

