/**
 * The demo's proof that the workloads answer: requests through web to kv (the token is
 * the one kv's leader shared with leader-set), then what logship and cluster left in
 * their units' state directories on the machines. Every step prints what it got; a
 * wrong answer throws one line.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { StatusDocument } from '../../agent/cli/status-document.ts'
import { allUnits } from './settled.ts'

const requestTimeoutMs = 5_000

type Say = (line: string) => void

async function request (url: string, init: RequestInit = {}): Promise<{ status: number, body: string, backend: string }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(requestTimeoutMs) })
  return { status: response.status, body: await response.text(), backend: response.headers.get('x-backend') ?? '' }
}

/** The port web/0 (the first web unit) opened, from status. */
export function webPort (doc: StatusDocument): number {
  const units = Object.values(doc.applications['web']?.units ?? {})
  const port = Number((units[0]?.['open-ports']?.[0] ?? '').split('/')[0])
  if (!Number.isSafeInteger(port) || port <= 0) throw new Error(`cantrip demo: expected web/0 to have opened a port, got ${JSON.stringify(units[0]?.['open-ports'] ?? [])}`)
  return port
}

/** Requests through web/0 to kv (also the in-process demo's, examples/local-deploy.ts). */
export async function exerciseWeb (port: number, token: string, say: Say): Promise<void> {
  const base = `http://127.0.0.1:${port}`
  say(`Through web/0 (${base}), which sends each request to the next kv unit in turn`)
  say('(each kv unit keeps its own store; writes need the token kv\'s leader shared with leader-set):')
  const backends = await request(`${base}/backends`)
  say(`  GET /backends                 -> ${backends.status} ${backends.body.trim()}`)
  if (backends.status !== 200) throw new Error(`cantrip demo: expected 200 from web's GET /backends, got ${backends.status}`)
  const list = (JSON.parse(backends.body) as { backends: string[] }).backends
  const value = `hello from cantrip ${new Date().toISOString().slice(0, 19)}Z`
  const written = new Set<string>()
  for (let i = 0; i < list.length * 2 && written.size < list.length; i++) {
    const put = await request(`${base}/kv/greeting`, { method: 'PUT', body: value, headers: { 'X-Token': token } })
    say(`  PUT /kv/greeting (X-Token)    -> ${put.status} from kv at ${put.backend || '?'}`)
    if (put.status !== 204) throw new Error(`cantrip demo: expected 204 from PUT through web, got ${put.status} ${put.body.trim()}`)
    written.add(put.backend)
  }
  for (let i = 0; i < list.length; i++) {
    const got = await request(`${base}/kv/greeting`)
    say(`  GET /kv/greeting              -> ${got.status} ${JSON.stringify(got.body)} from kv at ${got.backend || '?'}`)
    if (got.status !== 200 || got.body !== value) throw new Error(`cantrip demo: expected 200 ${JSON.stringify(value)} from GET through web, got ${got.status} ${JSON.stringify(got.body)}`)
  }
  const refused = await request(`${base}/kv/greeting`, { method: 'PUT', body: 'no token' })
  say(`  PUT /kv/greeting (no token)   -> ${refused.status} ${refused.body.trim()}`)
  if (refused.status !== 403) throw new Error(`cantrip demo: expected 403 from PUT without the token, got ${refused.status}`)
}

/** A file in a unit's state directory on its machine (`machines/machine-M/agent/agents/unit-A-N/state/`). */
function stateFile (controllerDir: string, machine: string, unit: string, file: string): string | undefined {
  const path = join(controllerDir, 'machines', `machine-${machine}`, 'agent', 'agents', `unit-${unit.replace('/', '-')}`, 'state', file)
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined
}

/** What logship shipped and whether the cluster members agree on their leader's secret. */
export function reportState (doc: StatusDocument, controllerDir: string, say: Say): void {
  const units = allUnits(doc)
  const shipped = units.filter(([name]) => name.startsWith('logship/')).map(([name, unit]) => {
    const lines = (stateFile(controllerDir, unit.machine, name, 'shipped.log') ?? '').split('\n').filter(line => line !== '').length
    return `${name} ${lines}`
  })
  say(`logship: log lines shipped so far by ${shipped.join(', ') || 'no unit'}`)
  const digests = units.filter(([name]) => name.startsWith('cluster/')).map(([name, unit]) => {
    try {
      return (JSON.parse(stateFile(controllerDir, unit.machine, name, 'cluster.json') ?? '{}') as Record<string, unknown>)['secret-sha256-prefix']
    } catch {
      return undefined
    }
  })
  const agreed = digests.length > 0 && digests.every(d => typeof d === 'string' && d !== '' && d === digests[0])
  say(`cluster: ${digests.length} members ${agreed ? `agree on the leader's secret (sha256 ${String(digests[0])}…)` : `do not agree on the leader's secret yet: ${digests.map(String).join(', ')}`}`)
}
