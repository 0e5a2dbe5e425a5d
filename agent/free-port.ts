import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { claimPort, releasePort } from './port-claims.ts'

/**
 * Free TCP ports for listeners started later (a controller, a test's agents, a workload's
 * `port-base`). They come from OUTSIDE the kernel's ephemeral range: a port in that range
 * can be handed to any outgoing connection of any process between the pick and the bind,
 * and a long-lived connection (a mesh link) then holds it for good (a listener on
 * 0.0.0.0:P fails with EADDRINUSE while a socket connected from 127.0.0.1:P exists). Each
 * pick is claimed (port-claims.ts), so another picker on this host (a second test suite)
 * skips it, and is checked free on the given host and on every address at pick time.
 * `host` is where the port will be bound: 127.0.0.1 for agents and tests, 0.0.0.0 for
 * workloads that listen on every address.
 */

/** Runs of ports tried before giving up (each costs a claim file and `count` test binds). */
const portRunAttemptsMax = 200
/** Ports below this are left alone: well-known and registered services live there. */
const pickPortLow = 10_000
/** The smallest span of non-ephemeral ports worth picking from. */
const pickSpanMin = 1_000
/** Where /proc is not available: this covers Linux's default (32768–60999) and the IANA/BSD range (49152–65535). */
const assumedEphemeral = { low: 32_768, high: 65_535 }

/** The kernel's range for ports it assigns by itself (outgoing connections, bind to port 0). */
export function ephemeralPortRange (): { low: number, high: number } {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
    if (Number.isSafeInteger(low) && Number.isSafeInteger(high) && low! <= high!) return { low: low!, high: high! }
  } catch { /* not Linux */ }
  return assumedEphemeral
}

/** The ports picks come from: below the ephemeral range if that leaves room, else above it. */
export function pickPortRange (ephemeral = ephemeralPortRange()): { low: number, high: number } {
  if (ephemeral.low - pickPortLow >= pickSpanMin) return { low: pickPortLow, high: ephemeral.low - 1 }
  if (65_535 - ephemeral.high >= pickSpanMin) return { low: ephemeral.high + 1, high: 65_535 }
  return { low: pickPortLow, high: 65_535 }
}

/** A port free on `host` (and every address), claimed for this process. */
export async function freePort (host = '127.0.0.1'): Promise<number> {
  return await freePortRun(1, host)
}

/** A TCP port free on 127.0.0.1. */
export async function freeLoopbackPort (): Promise<number> {
  return await freePort('127.0.0.1')
}

/** Whether nothing listens on `port` at `host`. */
export async function portFree (port: number, host = '127.0.0.1'): Promise<boolean> {
  return await new Promise(resolve => {
    const server = createServer()
    server.once('error', () => { resolve(false) })
    server.listen({ port, host, exclusive: true }, () => { server.close(() => { resolve(true) }) })
  })
}

/**
 * A port P with P .. P + count - 1 all free and claimed (units 0.. of one application),
 * from a random place in the pick range so that pickers rarely meet.
 */
export async function freePortRun (count: number, host = '127.0.0.1'): Promise<number> {
  const range = pickPortRange()
  const span = range.high - range.low + 1 - (count - 1)
  if (count < 1 || span < 1) throw new Error(`free port: expected a run of 1 to ${range.high - range.low + 1} ports, got ${count}`)
  const start = Math.floor(Math.random() * span)
  for (let attempt = 0; attempt < portRunAttemptsMax; attempt++) {
    const base = range.low + (start + attempt * count) % span
    if (await claimRun(base, count, host)) return base
  }
  throw new Error(`free port: expected ${count} consecutive free ports on ${host} in ${range.low}-${range.high}, got none in ${portRunAttemptsMax} tries`)
}

/** Claims base .. base + count - 1 and checks each free; on any failure withdraws every claim. */
async function claimRun (base: number, count: number, host: string): Promise<boolean> {
  const claimed: number[] = []
  let ok = true
  for (let port = base; port < base + count && ok; port++) {
    ok = claimPort(port)
    if (ok) claimed.push(port)
    ok = ok && await portFree(port, host) && (host === '0.0.0.0' || await portFree(port, '0.0.0.0'))
  }
  if (!ok) for (const port of claimed) releasePort(port)
  return ok
}
