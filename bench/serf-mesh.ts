import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freeLoopbackPort } from '../agent/free-port.ts'
import { ChildSet, rssBytes } from './child-processes.ts'
import { latencySummary, pollUntil, quantile, sleep, type LatencySummary } from './stats.ts'

/**
 * The gossip anchor: N serf agents (Debian's serf, `lan` profile: 200 ms gossip, 1 s
 * probes, suspicion multiplier 4) on loopback, joined to agent 0. Every agent runs the
 * same bash event handler, which appends `$EPOCHREALTIME`, the event and its members to
 * the agent's own file: a user event's notice is that line, as a cantrip agent's notice is
 * its new view of the model.
 *   - propagation: `serf event -coalesce=false` on agent 0, and from its acknowledgement
 *     to the handler line at each of the N agents (p50/p99 over all agents and events);
 *   - detection: kill -9 of one agent, and the time until agent 0's handler sees
 *     `member-failed` for it (and until every survivor's has).
 */
const component = 'bench serf'
const joinWithinMs = 90_000
const noticeWithinMs = 15_000
const detectWithinMs = 60_000
/** Pause between two events, so one event's gossip does not queue behind the last. */
const eventGapMs = 300
const run = promisify(execFile)

export interface SerfFigures {
  agents: number
  events: number
  propagation: LatencySummary
  detection?: { firstMs: number | null, allMs: number | null }
  agentRssBytes: number
  joinSeconds: number
}

const handlerScript = (dir: string): string => `#!/bin/bash
# One line per event: wall time (s), event, user event name and payload or the members' names.
if [ "$SERF_EVENT" = user ]; then detail="$SERF_USER_EVENT $(cat)"; else detail="$(cut -f1 | tr '\\n' ' ')"; fi
printf '%s %s %s\\n' "$EPOCHREALTIME" "$SERF_EVENT" "$detail" >> "${dir}/$SERF_SELF_NAME.events"
`

export async function measureSerf (agents: number, events: number, options: { detect?: boolean } = {}): Promise<SerfFigures> {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-bench-serf-'))
  const children = new ChildSet()
  const handler = join(root, 'handler.sh')
  writeFileSync(handler, handlerScript(root), { mode: 0o755 })
  try {
    const nodes: Array<{ name: string, bind: string, rpc: string, pid: number }> = []
    const started = performance.now()
    for (let i = 0; i < agents; i++) {
      const name = `a${i}`
      const bind = `127.0.0.1:${await freeLoopbackPort()}`
      const rpc = `127.0.0.1:${await freeLoopbackPort()}`
      const join = i === 0 ? [] : [`-retry-join=${nodes[0]!.bind}`, '-retry-interval=1s']
      const child = children.start('serf', ['agent', `-node=${name}`, `-bind=${bind}`, `-rpc-addr=${rpc}`, '-profile=lan', '-log-level=warn', `-event-handler=${handler}`, ...join])
      nodes.push({ name, bind, rpc, pid: child.pid! })
      if (i === 0) await pollUntil(async () => await alive(rpc) > 0, 10_000, 50)
    }
    const joined = await pollUntil(async () => await alive(nodes[0]!.rpc) >= agents, joinWithinMs, 250)
    if (!joined) throw new Error(`${component}: expected ${agents} alive members at agent 0 within ${joinWithinMs} ms, got ${await alive(nodes[0]!.rpc)}`)
    const joinSeconds = (performance.now() - started) / 1000
    await sleep(2_000)
    const latencies: number[] = []
    for (let e = 0; e < events; e++) {
      const tag = `bench-${e}`
      await run('serf', ['event', `-rpc-addr=${nodes[0]!.rpc}`, '-coalesce=false', tag, 'x'], { timeout: 10_000 })
      const ackedAt = Date.now()
      const seen = await pollUntil(() => nodes.every(n => eventTime(root, n.name, `user ${tag} `) !== undefined), noticeWithinMs, 10)
      if (!seen) throw new Error(`${component}: expected ${tag} at all ${agents} agents within ${noticeWithinMs} ms, got ${nodes.filter(n => eventTime(root, n.name, `user ${tag} `) !== undefined).length}`)
      for (const n of nodes) latencies.push(Math.max(0, eventTime(root, n.name, `user ${tag} `)! - ackedAt))
      await sleep(eventGapMs)
    }
    const agentRssBytes = quantile(nodes.map(n => rssBytes(n.pid)), 0.5)
    const figures: SerfFigures = { agents, events, propagation: latencySummary(latencies), agentRssBytes, joinSeconds: Number(joinSeconds.toFixed(1)) }
    if (options.detect === true) figures.detection = await detectFailure(root, nodes)
    return figures
  } finally {
    await children.stopAll()
    rmSync(root, { recursive: true, force: true })
  }
}

async function detectFailure (root: string, nodes: Array<{ name: string, pid: number }>): Promise<{ firstMs: number | null, allMs: number | null }> {
  const victim = nodes[Math.floor(nodes.length / 2)]!
  const survivors = nodes.filter(n => n !== victim)
  const line = `member-failed `
  const failedAt = (n: { name: string }): number | undefined => eventTime(root, n.name, line, victim.name)
  process.kill(victim.pid, 'SIGKILL')
  const killedAt = Date.now()
  await pollUntil(() => failedAt(survivors[0]!) !== undefined, detectWithinMs, 50)
  const first = failedAt(survivors[0]!)
  await pollUntil(() => survivors.every(n => failedAt(n) !== undefined), first === undefined ? 0 : 20_000, 100)
  const all = survivors.map(failedAt)
  return {
    firstMs: first === undefined ? null : Math.round(first - killedAt),
    allMs: all.some(t => t === undefined) ? null : Math.round(Math.max(...all as number[]) - killedAt)
  }
}

/** When (ms since the epoch) agent `name`'s handler first logged an event line containing `what` (and `member`). */
function eventTime (root: string, name: string, what: string, member?: string): number | undefined {
  const file = join(root, `${name}.events`)
  if (!existsSync(file)) return undefined
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes(what)) continue
    if (member !== undefined && !line.split(' ').includes(member)) continue
    return Number(line.split(' ')[0]) * 1000
  }
  return undefined
}

async function alive (rpc: string): Promise<number> {
  try {
    const { stdout } = await run('serf', ['members', `-rpc-addr=${rpc}`, '-status=alive'], { timeout: 5_000 })
    return stdout.split('\n').filter(l => l.trim() !== '').length
  } catch {
    return 0
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureSerf(Number(process.argv[2] ?? 10), Number(process.argv[3] ?? 5), { detect: process.argv[4] === 'detect' })))
  process.exit(0)
}
