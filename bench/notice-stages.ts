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
 *   agent reply         the agent's watch request returned with R (bytes in, decoded)
 *   agent view          the agent's view is at R (its `model` line's stamp: the bench's stop)
 *
 * Each agent's path is taken through the controller that answered it; the p50 and p99 of
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
  const answers: TraceEvent[] = []
  for (const e of events) {
    const k = key(e.pid, e.stage, e.detail)
    if (!first.has(k)) first.set(k, e.at)
    if (e.stage === 'watch-answered') answers.push(e)
  }
  const hops = new Map<string, number[]>()
  const add = (name: string, from: number | undefined, to: number | undefined): void => {
    if (from === undefined || to === undefined) return
    hops.set(name, [...hops.get(name) ?? [], to - from])
  }
  const controllers = new Set(events.filter(e => e.stage === 'watch-applied').map(e => e.pid))
  for (const change of changes) {
    const leaderApplied = first.get(key(leader, 'watch-applied', change.revision))
    add('client ack → leader applied (negative: applied first)', change.ackedAt, leaderApplied)
    for (const pid of controllers) if (pid !== leader) add('leader applied → follower applied', leaderApplied, first.get(key(pid, 'watch-applied', change.revision)))
    for (const view of change.views) {
      // The reply that brought this agent to the revision: the first at or past it.
      const reply = events.find(e => e.pid === view.pid && e.stage === 'watch-reply' && e.detail >= change.revision && e.at <= view.at + 1)
      if (reply === undefined) {
        add('views not brought by the watch (fetch or earlier reply)', 0, 0)
        continue
      }
      // The controller's answer just before that reply, of the same revision.
      const answer = answers.filter(a => a.detail === reply.detail && a.at <= reply.at).at(-1)
      const applied = answer === undefined ? undefined : first.get(key(answer.pid, 'watch-applied', change.revision))
      const role = answer?.pid === leader ? 'leader' : 'follower'
      add(`applied → watch answered (at the ${role})`, applied, answer?.at)
      add(`watch answered → agent reply (at the ${role}'s agents)`, answer?.at, reply.at)
      add('agent reply → agent view (taken, listeners, stamped)', reply.at, view.at)
      add(`leader applied → agent view (via the ${role})`, leaderApplied, view.at)
      add('client ack → agent view (the bench\'s figure)', change.ackedAt, view.at)
    }
  }
  const stages: NoticeStages = {}
  for (const [name, values] of hops) stages[name] = { p50Ms: round(quantile(values, 0.5)), p99Ms: round(quantile(values, 0.99)), samples: values.length }
  return stages
}
