import { spawn } from 'node:child_process'
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ensureToolClient, installToolLinks } from '../agent/hook-tools/client/build-client.ts'
import { ToolServer } from '../agent/hook-tools/transport/tool-server.ts'
import { createMemoryLogger } from '../runtime/logger.ts'

/**
 * Latency of one hook tool call as a hook sees it: the C client started through its
 * `config-get` symlink, connecting to a `ToolServer` with a trivial handler in this
 * process, and exiting with the result. The floor is starting /bin/true the same way,
 * so the difference is what the client and the round trip cost. The target is a median
 * under 5 ms.
 *
 * `spawned` starts each process from Node (child_process.spawn, one after another, the
 * two kinds interleaved so load drift hits both alike); `inBashLoop` runs them from a
 * bash loop, the way a hook does, and reports the mean per call.
 *
 * Run alone with `node --import tsx bench/hook-tool-call.ts [calls]`: it merges its
 * figures into bench/results.json under "hookToolCall".
 */
export interface LatencyMs { medianMs: number, p90Ms: number, p99Ms: number }

export interface HookToolCallBench {
  calls: number
  spawned: { client: LatencyMs, spawnFloor: LatencyMs }
  inBashLoop: { clientMeanMs: number, spawnFloorMeanMs: number }
}

const contextId = 'bench/0-config-changed-1'

export async function measureHookToolCall (calls = 300, warmup = 20): Promise<HookToolCallBench> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'cantrip-bench-tools-')))
  const toolsDir = join(root, 'tools')
  const client = await ensureToolClient()
  await installToolLinks(toolsDir, ['config-get'], client)
  const server = await ToolServer.listen(join(root, 'agent.socket'), async () => ({ code: 0, stdout: 'value\n', stderr: '' }), { logger: createMemoryLogger('bench') })
  server.contexts.open(contextId)
  const env = {
    PATH: `${toolsDir}:/usr/bin:/bin`,
    JUJU_CONTEXT_ID: contextId,
    JUJU_AGENT_SOCKET_ADDRESS: server.socketPath,
    JUJU_AGENT_SOCKET_NETWORK: 'unix'
  }
  const tool = join(toolsDir, 'config-get')
  try {
    for (let i = 0; i < warmup; i++) {
      await timedRun(tool, ['key'], env, root)
      await timedRun('/bin/true', [], env, root)
    }
    const clientMs: number[] = []
    const floorMs: number[] = []
    for (let i = 0; i < calls; i++) {
      clientMs.push(await timedRun(tool, ['key'], env, root))
      floorMs.push(await timedRun('/bin/true', [], env, root))
    }
    const loop = (command: string): string => `for i in $(seq ${calls}); do ${command} >/dev/null || exit 1; done`
    const loopClientMs = await timedRun('/bin/bash', ['--norc', '--noprofile', '-c', loop('config-get key')], env, root)
    const loopFloorMs = await timedRun('/bin/bash', ['--norc', '--noprofile', '-c', loop('/bin/true')], env, root)
    return {
      calls,
      spawned: { client: summarise(clientMs), spawnFloor: summarise(floorMs) },
      inBashLoop: { clientMeanMs: round(loopClientMs / calls), spawnFloorMeanMs: round(loopFloorMs / calls) }
    }
  } finally {
    await server.close()
    await rm(root, { recursive: true, force: true })
  }
}

/** Milliseconds from spawn to exit; a non-zero exit or a run over 10 s fails the bench. */
function timedRun (command: string, args: readonly string[], env: Record<string, string>, cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    const timer = setTimeout(() => { child.kill('SIGKILL') }, 10_000)
    child.on('error', error => { clearTimeout(timer); reject(error) })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const elapsed = performance.now() - started
      if (code === 0) resolve(elapsed)
      else reject(new Error(`bench: ${command} exited with ${signal ?? String(code)}: ${stderr.trim()}`))
    })
  })
}

function summarise (samples: readonly number[]): LatencyMs {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q: number): number => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!)
  return { medianMs: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99) }
}

function round (ms: number): number {
  return Number(ms.toFixed(3))
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const resultsPath = new URL('./results.json', import.meta.url)
  const calls = Number(process.argv[2] ?? 300)
  const loadStart = loadavg()
  process.stdout.write(`bench: hook tool call, C client against a ToolServer (${calls} calls)…\n`)
  const figures = await measureHookToolCall(calls)
  let results: Record<string, unknown> = {}
  try {
    results = JSON.parse(await readFile(resultsPath, 'utf8')) as Record<string, unknown>
  } catch {
    // No results yet: start a new file.
  }
  results['hookToolCall'] = { ...figures, load: { start: loadStart, end: loadavg() }, measuredAt: new Date().toISOString() }
  await writeFile(resultsPath, JSON.stringify(results, null, 2) + '\n')
  const { client, spawnFloor } = figures.spawned
  process.stdout.write(`  spawned from Node: client median ${client.medianMs} ms, p90 ${client.p90Ms} ms, p99 ${client.p99Ms} ms; /bin/true median ${spawnFloor.medianMs} ms, p90 ${spawnFloor.p90Ms} ms, p99 ${spawnFloor.p99Ms} ms\n`)
  process.stdout.write(`  from a bash loop: client ${figures.inBashLoop.clientMeanMs} ms per call, /bin/true ${figures.inBashLoop.spawnFloorMeanMs} ms per call\n`)
  process.stdout.write(`bench: wrote ${resultsPath.pathname}\n`)
}
