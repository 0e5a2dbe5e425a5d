import { quantile, round } from './stats.ts'

/**
 * Where one change notice's time goes (issue 28), read from the trace CANTRIP_WRITE_TRACE
 * makes every cantripd write (agent/write-stage-trace.ts) during the propagation bench
 * (bench/cantrip-propagation.ts with `trace`). For each change (revision R) the stages are:
 *
 *   client ack          the bench's client has the leader's acknowledgement (clock start)
 *   leader applied      the leader applied R (`watch-applied`): the commit on the leader
 *   follower applied    each follower applied R (it learns the commit from the next append)
 *   watch answered      a controller answered a held machine watch with R's delta
 *   push written        that controller's socket write carrying it (`socket-write:<ports>`)
 *   agent read          the agent's socket read of it (`socket-read:<ports>`, the same connection)
 *   agent reply         the agent's watch request returned with R (bytes in, decoded)
 *   agent view          the agent's view is at R (its `model` line's stamp: the bench's stop)
 *
 * Each agent's path is taken through the controller that answered it (the one whose socket
 * write on the agent's connection carried the change); the p50 and p99 of
 * every hop, over all agents and changes, say which one holds the tail.
 */
export interface TraceEvent { pid: number, at: number, stage: string, detail: number }

export interface NoticeChange {
  revision: number
  /** When the bench's client sent the command, and when it had the acknowledgement. */
  sentAt: number
  ackedAt: number
  /** Per agent: its pid and the time its view reached the revision. */
  views: ReadonlyArray<{ pid: number, at: number }>
}

export type NoticeStages = Record<string, { p50Ms: number, p99Ms: number, samples: number }>

export function parseTrace (text: string): TraceEvent[] {
  return text.split('\n').filter(line => line !== '').map(line => {
    const [pid, at, stage, detail] = line.split(' ')
    return { pid: Number(pid), at: Number(at), stage: stage!, detail: Number(detail) }
  })
}

/** Each hop's p50/p99 over every agent and change; `leader` is the leader's pid. */
export function noticeStages (events: readonly TraceEvent[], changes: readonly NoticeChange[], leader: number): NoticeStages {
  const first = new Map<string, number>()
  const key = (pid: number, stage: string, revision: number): string => `${pid} ${stage} ${revision}`
  const byPid = new Map<number, TraceEvent[]>()
  /** Each TCP connection's socket writes (the trace names a connection by its two ports, the same at both ends). */
  const writes = new Map<string, TraceEvent[]>()
  for (const e of events) {
    const k = key(e.pid, e.stage, e.detail)
    if (!first.has(k)) first.set(k, e.at)
    if (!byPid.has(e.pid)) byPid.set(e.pid, [])
    byPid.get(e.pid)!.push(e)
    if (e.stage.startsWith('socket-write:')) {
      const conn = e.stage.slice('socket-write:'.length)
      if (!writes.has(conn)) writes.set(conn, [])
      writes.get(conn)!.push(e)
    }
  }
  for (const list of [...byPid.values(), ...writes.values()]) list.sort((a, b) => a.at - b.at)
  const hops = new Map<string, number[]>()
  const add = (name: string, from: number | undefined, to: number | undefined): void => {
    if (from === undefined || to === undefined) return
    if (!hops.has(name)) hops.set(name, [])
    hops.get(name)!.push(to - from)
  }
  const controllers = new Set(events.filter(e => e.stage === 'watch-applied').map(e => e.pid))
  for (const change of changes) {
    const leaderApplied = first.get(key(leader, 'watch-applied', change.revision))
    add('client ack → leader applied (negative: applied first)', change.ackedAt, leaderApplied)
    for (const pid of controllers) if (pid !== leader) add('leader applied → follower applied', leaderApplied, first.get(key(pid, 'watch-applied', change.revision)))
    for (const view of change.views) {
      const own = byPid.get(view.pid) ?? []
      // The reply that brought this agent to the revision: the first at or past it.
      const at = own.findIndex(e => e.stage === 'watch-reply' && e.detail >= change.revision && e.at <= view.at + 1)
      if (at < 0) {
        add('views not brought by the watch (fetch or earlier reply)', 0, 0)
        continue
      }
      const reply = own[at]!
      // The push came in on the agent's last socket read before the reply, and went out on
      // the controller's last write to that connection before it: that controller is the one
      // that answered (a look at any controller's answers of the same revision could pick
      // another controller's, which answered its own agents at another time).
      const read = own.slice(0, at).findLast(e => e.stage.startsWith('socket-read:'))
      const conn = read?.stage.slice('socket-read:'.length)
      const written = conn === undefined ? undefined : writes.get(conn)?.findLast(e => controllers.has(e.pid) && e.at <= read!.at + 0.05)
      const answer = written === undefined ? undefined : byPid.get(written.pid)!.findLast(e => e.stage === 'watch-answered' && e.at <= written.at)
      const applied = answer === undefined ? undefined : first.get(key(answer.pid, 'watch-applied', change.revision))
      const role = written === undefined ? 'unknown controller' : written.pid === leader ? 'leader' : 'follower'
      add(`applied → watch answered (at the ${role})`, applied, answer?.at)
      add(`watch answered → agent reply (at the ${role}'s agents)`, answer?.at, reply.at)
      // The same hop split where the bytes cross: the controller's own stack (encode, frames, yamux, Noise) up to its
      // socket write; the kernel and the scheduler until the agent reads (waiting for a core, on a loaded host); the
      // agent's own stack from its read to the decoded reply.
      add(`watch answered → push written (the ${role}'s stack)`, answer?.at, written?.at)
      add('push written → agent read (kernel, waiting for a core)', written?.at, read?.at)
      add('agent read → agent reply (its stack: Noise, yamux, frames, decode)', read?.at, reply.at)
      add('agent reply → agent view (taken, listeners, stamped)', reply.at, view.at)
      add(`leader applied → agent view (via the ${role})`, leaderApplied, view.at)
      add('client ack → agent view (the bench\'s figure)', change.ackedAt, view.at)
      add('client send → agent view (the bench\'s second clock)', change.sentAt, view.at)
    }
  }
  const stages: NoticeStages = {}
  for (const [name, values] of hops) stages[name] = { p50Ms: round(quantile(values, 0.5)), p99Ms: round(quantile(values, 0.99)), samples: values.length }
  return stages
}

/** `node --import tsx bench/notice-stages.ts FILE`: the stages of a trace kept with CANTRIP_NOTICE_TRACE_OUT (bench/cantrip-propagation.ts). */
if (import.meta.url === `file://${process.argv[1]}`) {
  const { readFileSync } = await import('node:fs')
  const text = readFileSync(process.argv[2]!, 'utf8')
  const newline = text.indexOf('\n')
  const kept = JSON.parse(text.slice(0, newline)) as { leader: number, changes: NoticeChange[] }
  console.log(JSON.stringify(noticeStages(parseTrace(text.slice(newline + 1)), kept.changes, kept.leader), null, 2))
}
