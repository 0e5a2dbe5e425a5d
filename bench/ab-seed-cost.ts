import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { quantile } from './stats.ts'

/**
 * `node --import tsx bench/ab-seed-cost.ts OLD_TREE NEW_TREE system|machine-agent [from] [to] [rounds]`:
 * the CPU a swarm seed costs in two checkouts (before and after a change), measured the
 * way the swarm tests run seeds: in a worker thread that loads each tree's own built
 * bundle (dist/sim-swarm-worker.mjs for test/sim-system-swarm.test.ts,
 * dist/scenario-swarm-worker.mjs for test/sim-machine-agent.test.ts; build both trees
 * first). Each round runs the two trees at the same time, in a process each, so a busy
 * machine's load falls on both alike, and the order of the lines alternates. A tree's
 * figure is its process's CPU from its worker's first result to its last over the seeds
 * in between: the bundle's load and a cold first seed (a warm-up seed, 1,000,000) are left
 * out, as bench/seed-cost.ts leaves out its warm-up. Prints each round, then the medians
 * and the median of the per-round ratios; the trace digests must agree unless the change
 * moves trajectories.
 *
 * Inside: `--one TREE KIND FROM TO` runs one tree and prints one JSON line.
 */
type Kind = 'system' | 'machine-agent'

interface OneResult { tree: string, cpuMsPerSeed: number, seeds: number, failed: number, digest: string }

/** A round may take this long before its processes are killed (a hang, not slowness). */
const roundMsMax = 30 * 60_000
const warmupSeed = 1_000_000
const here = fileURLToPath(new URL('.', import.meta.url))

if (process.argv[2] === '--one') {
  const [tree, kind, from, to] = process.argv.slice(3)
  console.log(JSON.stringify(await runOne(resolve(tree!), kind as Kind, Number(from), Number(to))))
} else {
  await main()
}

async function main (): Promise<void> {
  const [oldTree, newTree, kind, from = '1', to = '20', rounds = '3'] = process.argv.slice(2)
  if (oldTree === undefined || newTree === undefined || (kind !== 'system' && kind !== 'machine-agent')) {
    throw new Error('bench: usage: ab-seed-cost.ts OLD_TREE NEW_TREE system|machine-agent [from] [to] [rounds]')
  }
  const figures: Record<'old' | 'new', number[]> = { old: [], new: [] }
  const ratios: number[] = []
  const digests = new Set<string>()
  for (let round = 1; round <= Number(rounds); round++) {
    const load = loadavg()[0]!
    const [a, b] = await Promise.all([oldTree, newTree].map(async tree => await runChild(tree, kind, from, to)))
    figures.old.push(a!.cpuMsPerSeed)
    figures.new.push(b!.cpuMsPerSeed)
    ratios.push(b!.cpuMsPerSeed / a!.cpuMsPerSeed)
    digests.add(`old ${a!.digest} new ${b!.digest}`)
    const lines = [`old ${a!.cpuMsPerSeed.toFixed(1)} CPU-ms a seed (${a!.failed} failed, traces ${a!.digest})`,
      `new ${b!.cpuMsPerSeed.toFixed(1)} CPU-ms a seed (${b!.failed} failed, traces ${b!.digest})`]
    console.log(`round ${round}, load ${load.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}: ${(round % 2 === 1 ? lines : lines.reverse()).join('; ')}`)
  }
  console.log(`${kind} seeds ${from}-${to}, ${rounds} rounds: old median ${quantile(figures.old, 0.5).toFixed(1)}, new median ${quantile(figures.new, 0.5).toFixed(1)} CPU-ms a seed; new/old median ${quantile(ratios, 0.5).toFixed(3)}; ${[...digests].join(' | ')}`)
}

function runChild (tree: string, kind: Kind, from: string, to: string): Promise<OneResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'ab-seed-cost.ts'), '--one', tree, kind, from, to], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
    const timer = setTimeout(() => { if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL') }, roundMsMax)
    child.on('error', reject)
    child.on('exit', code => {
      clearTimeout(timer)
      const line = out.trim().split('\n').pop() ?? ''
      if (code === 0 && line.startsWith('{')) resolvePromise(JSON.parse(line) as OneResult)
      else reject(new Error(`bench: expected a JSON line from the run of ${tree}, got exit ${String(code)}: ${out}`))
    })
  })
}

/** One tree's seeds in one worker from its bundle; CPU between the first result and the last. */
async function runOne (tree: string, kind: Kind, from: number, to: number): Promise<OneResult> {
  const seeds = [warmupSeed]
  for (let seed = from; seed <= to; seed++) seeds.push(seed)
  const worker = await startWorker(tree, kind, seeds)
  const digest = createHash('sha256')
  let received = 0
  let failed = 0
  let firstAt = 0
  let lastAt = 0
  const cpuMs = (): number => { const used = process.cpuUsage(); return (used.user + used.system) / 1000 }
  worker.on('message', (message: unknown) => {
    // The machine agent's worker posts results in batches of one, the system's one by one.
    const result = (Array.isArray(message) ? message[0] : message) as { seed: number, hash: string, outcome?: string, failure?: string }
    const now = cpuMs()
    if (received === 0) firstAt = now
    else {
      digest.update(`${result.seed}:${result.hash}\n`)
      if ((result.outcome !== undefined && result.outcome !== 'pass') || (result.outcome === undefined && result.failure !== undefined)) failed++
    }
    lastAt = now
    received++
  })
  const code = await new Promise<number>((resolvePromise, reject) => { worker.on('exit', resolvePromise); worker.on('error', reject) })
  if (code !== 0 || received !== seeds.length) throw new Error(`bench: expected ${seeds.length} results from ${tree}, got ${received} (exit ${code})`)
  const measured = seeds.length - 1
  return { tree, cpuMsPerSeed: (lastAt - firstAt) / measured, seeds: measured, failed, digest: digest.digest('hex').slice(0, 16) }
}

async function startWorker (tree: string, kind: Kind, seeds: number[]): Promise<Worker> {
  if (kind === 'machine-agent') {
    return new Worker(join(tree, 'dist', 'scenario-swarm-worker.mjs'), { workerData: { kind: 'machine-agent', seeds, scenario: { steps: 6 } } })
  }
  // The tree's own parser: a scenario field added by the change is read as that tree reads it.
  const { parseScenario } = await import(pathToFileURL(join(tree, 'sim', 'scenario', 'parse-scenario.ts')).href) as typeof import('../sim/scenario/parse-scenario.ts')
  const path = join(tree, 'examples', 'sim', 'random-faults.yaml')
  const scenario = parseScenario(readFileSync(path, 'utf8'), path)
  return new Worker(join(tree, 'dist', 'sim-swarm-worker.mjs'), {
    workerData: { engineModule: pathToFileURL(join(tree, 'dist', 'sim-engine.mjs')).href, scenario, scenarioPath: 'examples/sim/random-faults.yaml', seeds }
  })
}
