import { electionTimes, type ElectionEvent, type ElectionTimes } from './election-log.ts'
import { firstSuccessMs, quantile, round, wallMs } from './stats.ts'

/**
 * Failover as a distribution. The election timeout is drawn over [t, 2t) on each member,
 * so one kill says little about which store is faster: each store's leader is killed
 * `failoverTrials` times (kill -9), and each time the time until a write sent to any
 * survivor every `failoverProbeMs` succeeds is measured; the killed member is restarted
 * and caught up, and the cluster left to settle, before the next kill (aimed at whoever
 * leads then). The members' own logs give each trial's election steps.
 *
 * Two kinds of failure (`FailoverFault`): `kill`, kill -9 of the leader, whose kernel
 * closes its sockets so its peers can know at once; and `stop`, SIGSTOP of the leader (a
 * hung process, or a partition: nothing closes), after which both stores must wait out the
 * election timeout; the stopped leader gets SIGCONT and rejoins before the next trial.
 */
export type FailoverFault = 'kill' | 'stop'
export const failoverTrials = 15
/** Retry period of the probe, and how long a failover may take before it counts as not recovered. */
export const failoverProbeMs = 10
export const failoverWithinMs = 30_000
/**
 * Quiet time after the killed member is back and caught up, so the next kill finds the
 * group in its steady state (every follower's election timer running from the leader's
 * heartbeats, not from its own restart): two maximal election timeouts.
 */
export const failoverSettleMs = 2_400

/** One store's part: kill its leader, probe a survivor, restart and catch up the killed member. */
export interface FailoverSubject {
  /** Kills the current leader with SIGKILL (`kill`) or SIGSTOP (`stop`), at once (not waiting for it to exit). */
  killLeader: (fault: FailoverFault) => Promise<void>
  /** One write to a survivor (the n-th probe); true when it committed. */
  probe: (n: number) => Promise<boolean>
  /** Restarts the killed member (`kill`) or continues it (SIGCONT, `stop`) and resolves when it has caught up. */
  restore: (fault: FailoverFault) => Promise<void>
  /** Every member's election steps logged so far. */
  elections: () => ElectionEvent[]
}

export interface FailoverTrial extends ElectionTimes { ms: number | null }

export interface FailoverFigures {
  fault: FailoverFault
  trials: number
  /** Trials where no write succeeded within failoverWithinMs. */
  unrecovered: number
  p50Ms: number | null
  p90Ms: number | null
  maxMs: number | null
  /** Medians over the trials of each election step, from the kill; and of the rest (the new leader's first commit and the client's path). */
  parts: { preCandidateMs: number | null, candidateMs: number | null, leaderMs: number | null, afterLeaderMs: number | null }
  samples: FailoverTrial[]
  electionTimeoutMs: number
  reason?: string
}

const median = (values: ReadonlyArray<number | null>): number | null => {
  const known = values.filter((v): v is number => v !== null)
  return known.length === 0 ? null : round(quantile(known, 0.5))
}

export async function runFailoverTrials (subject: FailoverSubject, electionTimeoutMs: number, trials = failoverTrials, fault: FailoverFault = 'kill'): Promise<FailoverFigures> {
  const samples: FailoverTrial[] = []
  for (let t = 0; t < trials; t++) {
    const killedAt = wallMs()
    await subject.killLeader(fault)
    let n = 0
    const ms = await firstSuccessMs(async () => await subject.probe(n++), failoverProbeMs, failoverWithinMs)
    await subject.restore(fault)
    samples.push({ ms, ...electionTimes(subject.elections(), killedAt) })
    await new Promise(resolve => setTimeout(resolve, failoverSettleMs))
  }
  return summarise(samples, electionTimeoutMs, fault)
}

export function summarise (samples: FailoverTrial[], electionTimeoutMs: number, fault: FailoverFault = 'kill'): FailoverFigures {
  const recovered = samples.map(s => s.ms).filter((ms): ms is number => ms !== null)
  const unrecovered = samples.length - recovered.length
  const at = (q: number): number | null => recovered.length === 0 ? null : round(quantile(recovered, q))
  return {
    fault,
    trials: samples.length,
    unrecovered,
    p50Ms: at(0.5),
    p90Ms: at(0.9),
    maxMs: at(1),
    parts: {
      preCandidateMs: median(samples.map(s => s.preCandidateMs)),
      candidateMs: median(samples.map(s => s.candidateMs)),
      leaderMs: median(samples.map(s => s.leaderMs)),
      afterLeaderMs: median(samples.map(s => s.ms === null || s.leaderMs === null ? null : s.ms - s.leaderMs))
    },
    samples,
    electionTimeoutMs,
    ...(recovered.length === 0 ? { reason: `no write succeeded within ${failoverWithinMs} ms of the ${fault === 'kill' ? 'kill' : 'SIGSTOP'} in any of ${samples.length} trials` } : {})
  }
}
