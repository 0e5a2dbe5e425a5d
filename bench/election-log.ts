/**
 * The election steps a store's members log, with their wall-clock times, read back from
 * their log files after a failover trial: when the first survivor became pre-candidate
 * (its election timeout ran out), candidate (its PreVote won) and leader (its vote won).
 * cantripd logs its Raft core's lines as `ISO-TIME INFO module line`; etcd (zap, info)
 * as JSON lines with `ts` and `msg`. Both cores word the steps as etcd's raft does:
 * `became pre-candidate at term N`.
 */
export type ElectionStep = 'pre-candidate' | 'candidate' | 'leader'
export interface ElectionEvent { atMs: number, step: ElectionStep, term: number }
/** Each step's first time at or after the kill, in ms from the kill; null when no member logged it. */
export interface ElectionTimes { preCandidateMs: number | null, candidateMs: number | null, leaderMs: number | null }

const stepPattern = /became (pre-candidate|candidate|leader) at term (\d+)/

function event (atMs: number, message: string): ElectionEvent | undefined {
  const match = stepPattern.exec(message)
  if (match === null || !Number.isFinite(atMs)) return undefined
  return { atMs, step: match[1] as ElectionStep, term: Number(match[2]) }
}

/** cantripd's stderr: `2026-11-27T15:00:00.123Z INFO <model>.raft … became leader at term 3`. */
export function cantripElectionEvents (text: string): ElectionEvent[] {
  const events: ElectionEvent[] = []
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ')
    if (space <= 0 || !line.includes(' became ')) continue
    const found = event(Date.parse(line.slice(0, space)), line)
    if (found !== undefined) events.push(found)
  }
  return events
}

/** etcd's zap log: `{"level":"info","ts":"2026-11-27T15:00:00.123Z",…,"msg":"… became leader at term 3"}`. */
export function etcdElectionEvents (text: string): ElectionEvent[] {
  const events: ElectionEvent[] = []
  for (const line of text.split('\n')) {
    if (!line.includes(' became ')) continue
    try {
      const record = JSON.parse(line) as { ts?: unknown, msg?: unknown }
      if (typeof record.msg !== 'string') continue
      // zap's ISO 8601 encoder may write the offset as +0000, which Date.parse wants as +00:00.
      const ts = typeof record.ts === 'string' ? Date.parse(record.ts.replace(/([+-]\d\d)(\d\d)$/, '$1:$2')) : typeof record.ts === 'number' ? record.ts * 1000 : Number.NaN
      const found = event(ts, record.msg)
      if (found !== undefined) events.push(found)
    } catch { /* not a JSON line (a panic trace): not an election step */ }
  }
  return events
}

/**
 * The first of each step among every member's events at or after `sinceMs` (the kill),
 * relative to it. Log times are whole milliseconds; the kill's time is not, so a step
 * logged in the kill's own millisecond counts.
 */
export function electionTimes (events: readonly ElectionEvent[], sinceMs: number): ElectionTimes {
  const first = (step: ElectionStep): number | null => {
    const times = events.filter(e => e.step === step && e.atMs >= Math.floor(sinceMs)).map(e => e.atMs - sinceMs)
    return times.length === 0 ? null : Math.round(Math.min(...times))
  }
  return { preCandidateMs: first('pre-candidate'), candidateMs: first('candidate'), leaderMs: first('leader') }
}
