/**
 * A scripted world for the Raft core, after etcd's rafttest InteractionEnv: nodes with
 * MemoryRaftStorage, a network that holds messages until a command delivers (or drops)
 * them, and a host loop that handles Readies in the required order (persist, send,
 * apply, advance). Every command prints what happened, and scripts in
 * test/testdata/raft/*.txt pair commands with that output as golden text.
 *
 * Script format (a small cousin of cockroachdb/datadriven):
 *
 *   # comments
 *   command arg key=value
 *   ----
 *   expected output
 *   <blank line>
 *
 * Positions print as `index@term`. Commands:
 *
 *   add-nodes N [voters=(1,2,3)] [prevote=bool] [checkquorum=bool] [election=T] [heartbeat=T]
 *             [max-size=B] [max-inflight=N] [max-uncommitted=B] [snapshot-timeout=T]
 *       Create N nodes with the next free ids: founding members of `voters` if given,
 *       otherwise empty servers waiting to be added.
 *   campaign ID | propose ID DATA | add-voter ID NODE | remove-voter ID NODE
 *   read-index ID CONTEXT | transfer-leadership ID TO
 *   tick ID [count=N] | tick-heartbeat ID | tick-election ID
 *       tick-election ticks exactly until the node's (randomised) election timer fires.
 *   process-ready ID... [crash]    handle one Ready on each node (crash: die after
 *                                  persisting and sending, before applying)
 *   deliver-msgs ID [from=X] [type=T] [count=N] [nth=K] [keep] [drop]
 *       step the messages waiting for ID into it (keep: deliver a duplicate and leave
 *       the original in flight; drop: discard them instead).
 *   drop-msgs [from=X] [to=Y] [type=T]   discard matching messages in flight
 *   drop FROM->TO [type=T]                the same, for one direction of one link
 *   stabilize [ID...]              process Readies and deliver messages until quiet
 *   partition 1 2 | 3 ... / heal   messages between groups are dropped on delivery;
 *                                  nodes not named are isolated
 *   crash ID / restart ID [from-snapshot]
 *                                  lose everything not persisted; come back from storage
 *                                  (from-snapshot: with the state machine rebuilt from the
 *                                  stored RaftSnapshot, as if it were kept in memory only)
 *   compact ID INDEX               take a RaftSnapshot at INDEX and compact the log
 *   report-snapshot ID TO ok|failed / report-unreachable ID TO
 *   connection-closed ID PEER      the host saw its connection to PEER close; prints the
 *                                  campaign delay the core asked for (ticks), if any
 *   campaign-after-close ID        that delay has passed
 *   status ID | raft-log ID | raft-state | log-level info|none|silent
 *
 * The world checks Raft's safety properties as it goes (one leader per term, applied
 * entries agree everywhere, a new leader holds every applied entry, no message was
 * judged invalid) and prints any violation; `violations` collects them for tests.
 */
import { applyConfigChange } from '../../runtime/raft/cluster-config.ts'
import { MemoryRaftStorage } from '../../runtime/raft/memory-raft-storage.ts'
import {
  describeConfig, describeEntry, describeHardState, describeMessage, describeReadState, describeSnapshot, describeSoftState
} from '../../runtime/raft/raft-format.ts'
import { plantedCommitRule } from '../../sim/raft-planted-bugs.ts'
import type { PlantedBug } from '../../sim/scenario/scenario-types.ts'
import type { ClusterConfig, Entry, Message, MessageType, NodeId, RaftSnapshot, Ready } from '../../runtime/raft/raft-types.ts'
import { RawNode, type RawNodeOptions } from '../../runtime/raft/raw-node.ts'
import { SeededRandom, hashString32 } from '../../runtime/random.ts'

const stabilizeRoundsMax = 10_000
const textEncoder = new TextEncoder()
const textDecoder = new TextDecoder()

type NodeSettings = Omit<RawNodeOptions, 'id' | 'storage' | 'random' | 'applied' | 'trace'>

interface AppliedEntry { index: number, term: number, text: string }

/** One server: its durable storage and state machine, and its RawNode while it is up. */
export interface WorldNode {
  id: NodeId
  storage: MemoryRaftStorage
  node: RawNode | undefined
  settings: NodeSettings
  /** The state machine: every applied entry, as text. Survives crashes (the host persists it with the applied index). */
  machine: AppliedEntry[]
  appliedIndex: number
  /** Applied configurations by index, to label RaftSnapshots with the membership at their index. */
  configs: Array<{ index: number, config: ClusterConfig }>
  restarts: number
}

export interface Command {
  name: string
  args: string[]
  options: Map<string, string>
}

export class RaftInteractionEnv {
  readonly nodes = new Map<NodeId, WorldNode>()
  network: Message[] = []
  readonly violations: string[] = []
  #groups: Map<NodeId, number> | undefined
  #out: string[] = []
  /** info: everything; none: no INFO trace lines; silent: command results and safety violations only (for randomized runs). */
  #logLevel: 'silent' | 'none' | 'info' = 'info'
  /** What was applied at each index, by whom first: for state machine safety. */
  #appliedAt = new Map<number, { term: number, text: string, by: NodeId }>()
  #leaderOfTerm = new Map<number, NodeId>()

  /** Run one command line; returns its output. */
  run (line: string): string {
    return this.handle(parseCommand(line))
  }

  handle (command: Command): string {
    this.#out = []
    const handler = this.#handlers[command.name]
    if (handler === undefined) throw new Error(`raft interaction: unknown command "${command.name}"`)
    handler(command)
    const output = this.#out.join('\n')
    return output === '' ? 'ok' : output
  }

  readonly #handlers: Record<string, (c: Command) => void> = {
    'add-nodes': c => this.#addNodes(c),
    campaign: c => this.#withNode(c, n => n.campaign()),
    propose: c => this.#withNode(c, n => this.#print(describeResult(n.propose(textEncoder.encode(arg(c, 1)))))),
    'add-voter': c => this.#withNode(c, n => this.#print(describeResult(n.proposeConfigChange({ type: 'add-voter', node: arg(c, 1) })))),
    'remove-voter': c => this.#withNode(c, n => this.#print(describeResult(n.proposeConfigChange({ type: 'remove-voter', node: arg(c, 1) })))),
    'read-index': c => this.#withNode(c, n => this.#print(describeResult(n.readIndex(textEncoder.encode(arg(c, 1)))))),
    'transfer-leadership': c => this.#withNode(c, n => this.#print(describeResult(n.transferLeadership(arg(c, 1))))),
    tick: c => this.#withNode(c, n => { for (let i = 0; i < numberOption(c, 'count', 1); i++) n.tick() }),
    'tick-heartbeat': c => this.#withNode(c, n => { for (let i = 0; i < this.#node(c).settings.heartbeatTicks; i++) n.tick() }),
    'tick-election': c => this.#withNode(c, n => this.#tickElection(n)),
    'process-ready': c => { for (const id of c.args) this.#processReady(this.#nodeById(id), c.options.has('crash')) },
    'deliver-msgs': c => this.#deliverCommand(c),
    'drop-msgs': c => this.#dropCommand(c),
    drop: c => {
      const [from, to] = arg(c, 0).split('->')
      if (from === undefined || to === undefined) throw new Error('raft interaction: drop takes FROM->TO')
      this.#dropCommand({ ...c, options: new Map([...c.options, ['from', from], ['to', to]]) })
    },
    stabilize: c => this.#stabilize(c.args.length > 0 ? c.args : [...this.nodes.keys()]),
    partition: c => this.#partition(c.args),
    heal: () => { this.#groups = undefined },
    crash: c => this.#crash(this.#node(c)),
    restart: c => this.#restart(this.#node(c), c.options.has('from-snapshot')),
    compact: c => this.#compact(this.#node(c), Number(arg(c, 1))),
    'report-snapshot': c => this.#withNode(c, n => n.reportSnapshot(arg(c, 1), arg(c, 2) === 'ok' ? 'finished' : 'failed')),
    'report-unreachable': c => this.#withNode(c, n => n.reportUnreachable(arg(c, 1))),
    'connection-closed': c => this.#withNode(c, n => {
      const afterTicks = n.connectionClosed(arg(c, 1))
      this.#print(afterTicks === undefined ? 'no campaign' : `campaign after ${afterTicks.toFixed(3)} ticks`)
    }),
    'campaign-after-close': c => this.#withNode(c, n => n.campaignAfterClose()),
    status: c => this.#status(this.#node(c)),
    'raft-log': c => this.#raftLog(this.#node(c)),
    'raft-state': () => this.#raftState(),
    'log-level': c => { this.#logLevel = parseLogLevel(arg(c, 0)) }
  }

  // -------------------------------------------------------------------------------
  // Nodes

  #addNodes (c: Command): void {
    const count = Number(arg(c, 0))
    const voters = c.options.get('voters')
    const settings: NodeSettings = {
      electionTicks: numberOption(c, 'election', 10),
      heartbeatTicks: numberOption(c, 'heartbeat', 1),
      preVote: c.options.get('prevote') !== 'false',
      checkQuorum: c.options.get('checkquorum') !== 'false'
    }
    const optional: Array<[string, keyof NodeSettings]> = [
      ['max-size', 'maxSizePerMessage'], ['max-inflight', 'maxInflight'],
      ['max-uncommitted', 'maxUncommittedEntriesBytes'], ['snapshot-timeout', 'snapshotTimeoutTicks']
    ]
    for (const [key, field] of optional) {
      if (c.options.has(key)) (settings as Record<string, unknown>)[field] = numberOption(c, key, 0)
    }
    const plantedBug = c.options.get('planted-bug')
    if (plantedBug !== undefined) settings.commitRule = plantedCommitRule(plantedBug as PlantedBug)
    for (let i = 0; i < count; i++) {
      const id = String(this.nodes.size + 1)
      const storage = voters === undefined ? new MemoryRaftStorage() : MemoryRaftStorage.bootstrap(parseList(voters))
      const snapshot = storage.snapshot()
      const world: WorldNode = {
        id,
        storage,
        node: undefined,
        settings,
        machine: [],
        appliedIndex: snapshot.metadata.index,
        configs: [{ index: snapshot.metadata.index, config: snapshot.metadata.config }],
        restarts: 0
      }
      this.nodes.set(id, world)
      this.#start(world)
    }
  }

  #start (world: WorldNode): void {
    world.node = new RawNode({
      ...world.settings,
      id: world.id,
      storage: world.storage,
      // Each incarnation draws its own jitter, as a restarted process would.
      random: new SeededRandom(hashString32(`raft-node-${world.id}-${world.restarts}`)),
      applied: world.appliedIndex,
      trace: line => { if (this.#logLevel === 'info') this.#printTraffic(`INFO ${line}`) }
    })
  }

  #crash (world: WorldNode): void {
    world.node = undefined
    this.network = this.network.filter(m => m.to !== world.id)
  }

  /**
   * Come back from storage. With `fromSnapshot` the state machine is rebuilt from the
   * stored RaftSnapshot (as a host that keeps it only in memory would), so the node
   * hands the committed entries after it out again.
   */
  #restart (world: WorldNode, fromSnapshot: boolean): void {
    if (world.node !== undefined) throw new Error(`raft interaction: node ${world.id} is not down`)
    if (fromSnapshot) this.#restoreMachine(world, world.storage.snapshot())
    world.restarts++
    this.#start(world)
  }

  #tickElection (node: RawNode): void {
    const status = node.status()
    const ticks = Math.max(1, status.electionTimeoutTicks - status.electionElapsed)
    for (let i = 0; i < ticks; i++) node.tick()
  }

  // -------------------------------------------------------------------------------
  // The host loop

  /**
   * Persist, send, apply, advance: in that order, as the RawNode contract requires.
   * With `crashAfterSend` the process dies once the messages are out, before applying.
   */
  #processReady (world: WorldNode, crashAfterSend = false): void {
    const node = world.node
    if (node === undefined || !node.hasReady()) return
    const ready = node.ready()
    if (this.#logLevel !== 'silent') {
      this.#print(`> ${world.id} handling Ready`)
      this.#printReady(ready)
    }
    if (ready.snapshot !== undefined) world.storage.applySnapshot(ready.snapshot)
    world.storage.append(ready.entries)
    if (ready.hardState !== undefined) world.storage.setHardState(ready.hardState)
    // A process that is down receives nothing: what is sent to it is lost.
    this.network.push(...ready.messages.filter(m => this.nodes.get(m.to)?.node !== undefined))
    if (crashAfterSend) {
      this.#print(`${world.id} crashed before applying`)
      this.#crash(world)
      return
    }
    if (ready.snapshot !== undefined) this.#restoreMachine(world, ready.snapshot)
    for (const entry of ready.committedEntries) this.#apply(world, entry)
    node.advance()
    if (ready.softState?.role === 'leader') this.#checkNewLeader(world, node)
  }

  #printReady (ready: Ready): void {
    this.#print(`  Ready must-sync=${String(ready.mustSync)}:`)
    if (ready.softState !== undefined) this.#print(`  soft-state: ${describeSoftState(ready.softState)}`)
    if (ready.hardState !== undefined) this.#print(`  hard-state: ${describeHardState(ready.hardState)}`)
    if (ready.snapshot !== undefined) this.#print(`  snapshot: ${describeSnapshot(ready.snapshot)}`)
    this.#printList('entries', ready.entries.map(describeEntry))
    this.#printList('committed', ready.committedEntries.map(describeEntry))
    this.#printList('messages', ready.messages.map(describeMessage))
    this.#printList('read-states', ready.readStates.map(describeReadState))
  }

  #apply (world: WorldNode, entry: Entry): void {
    const text = entry.configChange === undefined ? textDecoder.decode(entry.data) : `${entry.configChange.type} ${entry.configChange.node}`
    if (entry.configChange !== undefined) {
      const current = world.configs[world.configs.length - 1]!.config
      world.configs.push({ index: entry.index, config: applyConfigChange(current, entry.configChange) })
    }
    world.machine.push({ index: entry.index, term: entry.term, text })
    world.appliedIndex = entry.index
    const first = this.#appliedAt.get(entry.index)
    if (first === undefined) this.#appliedAt.set(entry.index, { term: entry.term, text, by: world.id })
    else if (first.term !== entry.term || first.text !== text) {
      this.#violation(`${world.id} applied ${entry.index}@${entry.term} ${JSON.stringify(text)} but ${first.by} applied ${entry.index}@${first.term} ${JSON.stringify(first.text)}`)
    }
  }

  #restoreMachine (world: WorldNode, snapshot: RaftSnapshot): void {
    const { index, config } = snapshot.metadata
    world.machine = decodeMachine(snapshot.data)
    world.appliedIndex = index
    world.configs = [{ index, config }]
    for (const entry of world.machine) {
      const first = this.#appliedAt.get(entry.index)
      if (first !== undefined && (first.term !== entry.term || first.text !== entry.text)) {
        this.#violation(`${world.id} restored ${entry.index}@${entry.term} from a RaftSnapshot but ${first.by} applied ${entry.index}@${first.term}`)
      }
    }
  }

  /** Election safety and leader completeness, checked when a node becomes leader. */
  #checkNewLeader (world: WorldNode, node: RawNode): void {
    const term = node.status().term
    const other = this.#leaderOfTerm.get(term)
    if (other !== undefined && other !== world.id) this.#violation(`${world.id} and ${other} both lead term ${term}`)
    this.#leaderOfTerm.set(term, world.id)
    const first = world.storage.firstIndex()
    for (const [index, applied] of this.#appliedAt) {
      if (index < first) continue
      const held = index <= world.storage.lastIndex() ? world.storage.term(index) : undefined
      if (held !== applied.term) this.#violation(`${world.id} leads term ${term} without applied entry ${index}@${applied.term}`)
    }
  }

  // -------------------------------------------------------------------------------
  // The network

  #deliverCommand (c: Command): void {
    const to = arg(c, 0)
    const from = c.options.get('from')
    const type = c.options.get('type') as MessageType | undefined
    const matching = this.network.filter(m => m.to === to && (from === undefined || m.from === from) && (type === undefined || m.type === type))
    const nth = c.options.get('nth')
    const chosen = nth === undefined ? matching.slice(0, numberOption(c, 'count', matching.length)) : matching.slice(Number(nth) - 1, Number(nth))
    if (!c.options.has('keep')) this.network = this.network.filter(m => !chosen.includes(m))
    if (c.options.has('drop')) {
      for (const m of chosen) this.#printTraffic(`dropped: ${describeMessage(m)}`)
      return
    }
    this.#deliver(to, chosen)
  }

  #dropCommand (c: Command): void {
    const from = c.options.get('from')
    const to = c.options.get('to')
    const type = c.options.get('type')
    const dropped = this.network.filter(m => (from === undefined || m.from === from) && (to === undefined || m.to === to) && (type === undefined || m.type === type))
    this.network = this.network.filter(m => !dropped.includes(m))
    for (const m of dropped) this.#printTraffic(`dropped: ${describeMessage(m)}`)
  }

  #deliver (to: NodeId, messages: Message[]): void {
    if (messages.length === 0) return
    const world = this.#nodeById(to)
    this.#printTraffic(`> ${to} receiving messages`)
    for (const m of messages) {
      if (world.node === undefined) {
        this.#printTraffic(`  ${describeMessage(m)} DROPPED: ${to} is down`)
      } else if (this.#groups !== undefined && this.#groups.get(m.from) !== this.#groups.get(m.to)) {
        this.#printTraffic(`  ${describeMessage(m)} DROPPED: partitioned`)
      } else {
        if (this.#logLevel !== 'silent') this.#printTraffic(`  ${describeMessage(m)}`)
        const invalidBefore = world.node.status().invalidMessages
        world.node.step(m)
        if (world.node.status().invalidMessages > invalidBefore) this.#violation(`${to} judged a message from ${m.from} invalid: ${m.type}`)
      }
    }
  }

  #stabilize (ids: NodeId[]): void {
    for (let round = 0; ; round++) {
      if (round >= stabilizeRoundsMax) throw new Error(`raft interaction: not stable after ${stabilizeRoundsMax} rounds`)
      let active = false
      for (const id of ids) {
        const world = this.#nodeById(id)
        if (world.node?.hasReady() === true) {
          this.#processReady(world)
          active = true
        }
      }
      for (const id of ids) {
        const waiting = this.network.filter(m => m.to === id && ids.includes(m.from))
        if (waiting.length === 0) continue
        this.network = this.network.filter(m => !waiting.includes(m))
        this.#deliver(id, waiting)
        active = true
      }
      if (!active) return
    }
  }

  #partition (args: string[]): void {
    this.#groups = new Map()
    let group = 0
    for (const token of args) {
      if (token === '|') group++
      else this.#groups.set(token, group)
    }
    for (const id of this.nodes.keys()) if (!this.#groups.has(id)) this.#groups.set(id, ++group + 1000)
  }

  // -------------------------------------------------------------------------------
  // Storage

  #compact (world: WorldNode, index: number): void {
    if (index > world.appliedIndex) throw new Error(`raft interaction: ${world.id} has applied only up to ${world.appliedIndex}`)
    const config = [...world.configs].reverse().find(c => c.index <= index)!.config
    const data = encodeMachine(world.machine.filter(e => e.index <= index))
    world.storage.createSnapshot(index, config, data)
    world.storage.compact(index)
    this.#printTraffic(`${world.id}: RaftSnapshot at ${index}, log now starts at ${world.storage.firstIndex()}`)
  }

  // -------------------------------------------------------------------------------
  // Inspection

  #status (world: WorldNode): void {
    if (world.node === undefined) {
      this.#print(`${world.id}: down`)
      return
    }
    const s = world.node.status()
    this.#print(`${s.id}: role=${s.role} term=${s.term} vote=${s.vote === '' ? '-' : s.vote} leader=${s.leader === '' ? '-' : s.leader} ` +
      `commit=${s.commit} applied=${s.applied} log=[${s.firstIndex}, ${s.lastIndex}] config=${describeConfig(s.config)} ` +
      `timer=${s.electionElapsed}/${s.electionTimeoutTicks}`)
    for (const [id, p] of Object.entries(s.progress)) {
      this.#print(`  ${id}: ${p.state} match=${p.match} next=${p.next} inflight=${p.inflight}` +
        `${p.paused ? ' paused' : ''}${p.recentActive ? ' active' : ''}${p.state === 'snapshot' ? ` pending-snapshot=${p.pendingSnapshot}` : ''}`)
    }
  }

  #raftLog (world: WorldNode): void {
    const storage = world.storage
    this.#print(`${world.id}: snapshot ${describeSnapshot(storage.snapshot())}`)
    if (storage.lastIndex() >= storage.firstIndex()) {
      for (const entry of storage.entries(storage.firstIndex(), storage.lastIndex() + 1, Number.MAX_SAFE_INTEGER)) {
        this.#print(`  ${describeEntry(entry)}`)
      }
    }
  }

  #raftState (): void {
    for (const world of this.nodes.values()) {
      const s = world.node?.status()
      this.#print(s === undefined ? `${world.id}: down` : `${s.id}: ${s.role} term=${s.term} leader=${s.leader === '' ? '-' : s.leader} commit=${s.commit}`)
    }
  }

  // -------------------------------------------------------------------------------
  // Helpers

  #withNode (c: Command, action: (node: RawNode) => void): void {
    const world = this.#node(c)
    if (world.node === undefined) throw new Error(`raft interaction: node ${world.id} is down`)
    action(world.node)
  }

  #node (c: Command): WorldNode {
    return this.#nodeById(arg(c, 0))
  }

  #nodeById (id: NodeId): WorldNode {
    const world = this.nodes.get(id)
    if (world === undefined) throw new Error(`raft interaction: no node "${id}"`)
    return world
  }

  #violation (what: string): void {
    this.violations.push(what)
    this.#print(`SAFETY VIOLATION: ${what}`)
  }

  #print (line: string): void {
    this.#out.push(line)
  }

  /** Message traffic: everything but command results and violations, which `silent` hides. */
  #printTraffic (line: string): void {
    if (this.#logLevel !== 'silent') this.#out.push(line)
  }

  #printList (title: string, lines: string[]): void {
    if (lines.length === 0) return
    this.#print(`  ${title}:`)
    for (const line of lines) this.#print(`    ${line}`)
  }
}

// ---------------------------------------------------------------------------------
// Scripts

export interface ScriptCase {
  /** Comment lines before the command, kept on rewrite. */
  comments: string[]
  line: string
  expected: string
}

export function parseScript (text: string): ScriptCase[] {
  const lines = text.split('\n')
  const cases: ScriptCase[] = []
  let comments: string[] = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (line.trim() === '') continue
    if (line.startsWith('#')) {
      comments.push(line)
      continue
    }
    if (lines[i + 1] !== '----') throw new Error(`raft script line ${i + 1}: expected "----" after "${line}"`)
    const expected: string[] = []
    let j = i + 2
    while (j < lines.length && lines[j] !== '') expected.push(lines[j++]!)
    cases.push({ comments, line, expected: expected.join('\n') })
    comments = []
    i = j
  }
  return cases
}

export function formatScript (cases: ReadonlyArray<ScriptCase & { actual: string }>): string {
  return cases.map(c => [...c.comments, c.line, '----', c.actual].join('\n')).join('\n\n') + '\n'
}

/** Words that are switches rather than arguments. */
const flags = new Set(['keep', 'drop', 'crash', 'from-snapshot'])

export function parseCommand (line: string): Command {
  const tokens = line.trim().split(/\s+/)
  const command: Command = { name: tokens[0]!, args: [], options: new Map() }
  for (const token of tokens.slice(1)) {
    const eq = token.indexOf('=')
    if (eq > 0) command.options.set(token.slice(0, eq), token.slice(eq + 1))
    else if (flags.has(token)) command.options.set(token, 'true')
    else command.args.push(token)
  }
  return command
}

function parseLogLevel (level: string): 'silent' | 'none' | 'info' {
  if (level === 'silent' || level === 'none' || level === 'info') return level
  throw new Error(`raft interaction: unknown log level "${level}"`)
}

function arg (c: Command, i: number): string {
  const value = c.args[i]
  if (value === undefined) throw new Error(`raft interaction: ${c.name} needs argument ${i + 1}`)
  return value
}

function numberOption (c: Command, key: string, fallback: number): number {
  const value = c.options.get(key)
  return value === undefined ? fallback : Number(value)
}

function parseList (text: string): string[] {
  return text.replace(/[()]/g, '').split(',').filter(s => s !== '')
}

function describeResult (result: { status: string } & Record<string, unknown>): string {
  const details = Object.entries(result).filter(([key]) => key !== 'status').map(([key, value]) => `${key}=${String(value)}`)
  return [result.status, ...details].join(' ')
}

/** The state machine as RaftSnapshot data: `index@term text` per applied entry, joined by ';'. */
function encodeMachine (machine: AppliedEntry[]): Uint8Array {
  return textEncoder.encode(machine.map(e => `${e.index}@${e.term} ${e.text}`).join(';'))
}

function decodeMachine (data: Uint8Array): AppliedEntry[] {
  const text = textDecoder.decode(data)
  if (text === '') return []
  return text.split(';').map(line => {
    const match = /^(\d+)@(\d+) (.*)$/.exec(line)
    if (match === null) throw new Error(`raft interaction: bad RaftSnapshot line ${JSON.stringify(line)}`)
    return { index: Number(match[1]), term: Number(match[2]), text: match[3]! }
  })
}
