import { createServer } from 'node:net'

/**
 * Free TCP ports, as the OS sees them right now (someone may take one before it is used).
 * `host` is where the port will be bound: 127.0.0.1 for agents and tests, 0.0.0.0 for
 * workloads that listen on every address.
 */

/** Tries at finding `count` consecutive free ports before giving up. */
const portRunAttemptsMax = 50

/** A port the OS picks as free on `host`. */
export async function freePort (host = '127.0.0.1'): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address()
      server.close(() => { resolve(typeof address === 'object' && address !== null ? address.port : 0) })
    })
  })
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

/** A port P with P .. P + count - 1 all free on `host` (units 0.. of one application). */
export async function freePortRun (count: number, host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < portRunAttemptsMax; attempt++) {
    const base = await freePort(host)
    if (base + count > 65535) continue
    let free = true
    for (let i = 1; i < count && free; i++) free = await portFree(base + i, host)
    if (free) return base
  }
  throw new Error(`free port: expected ${count} consecutive free ports on ${host}, got none in ${portRunAttemptsMax} tries`)
}
