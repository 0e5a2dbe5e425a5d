/**
 * When a leader starts its own synced write of a Ready whose appends it sends first
 * (raft-host.ts #drain; Raft thesis 10.2.1: the leader writes its log while its
 * followers write theirs).
 *
 * Started at once, the write's batch is built, encoded and handed to LevelDB's thread
 * pool in the main thread before any append reaches its socket: the appends are only
 * queued on their channels, and get to yamux, Noise and the socket through many
 * microtasks, which run after the code that queued them. Deferred, when the host is
 * given `defer` (cantripd: setImmediate), the write starts once those microtasks have
 * run, so the appends leave first and the follower's leg, which a commit waits for,
 * starts sooner; the leader's own write, which runs beside that leg and is the shorter
 * of the two, starts a little later. Nothing else moves: the Ready is still acted on
 * (acknowledged, counted toward a commit, applied) only once its write is done, and
 * Readies are still handled one at a time, so the log the write reads is the one it
 * would have read at once. Without `defer` the write starts at once (the simulator
 * defers as cantripd does, with a zero-delay step of its scheduler).
 */
import type { Deferral } from '../deferral.ts'

/**
 * `persist()` now, or once `defer` runs it when `sentEarly` (the Ready's appends or
 * heartbeats went out ahead of its write); the promise settles as `persist()`'s does.
 */
export async function persistAfterEarlySends (defer: Deferral | undefined, sentEarly: boolean, persist: () => Promise<void>): Promise<void> {
  if (defer === undefined || !sentEarly) return await persist()
  return await new Promise<void>((resolve, reject) => {
    defer(() => { persist().then(resolve, reject) })
  })
}
