import '../runtime/polyfill.ts'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { packageRoot } from '../agent/package-root.ts'
import { CantripdCluster, waitFor } from '../test/support/cantripd-cluster.ts'
import { cpuMs } from './child-processes.ts'
import { quantile, round, sleep } from './stats.ts'
import { measureCantripWriteCpu } from './write-cpu.ts'

/**
 * Whether a V8 option pays for the controllers (issue 28, the cold half of a sequential
 * write): each named set of options is tried on fresh controllers, in turns with the
 * others so a busy machine's drift falls on all of them alike, and is judged by
 *
 * - CPU per write of the three controllers over the first `--block` writes and over all
 *   of them (bench/write-cpu.ts; net: the idle CPU over the same wall time taken out),
 * - a one-controller group's CPU from its start until it leads, its idle CPU per second
 *   and its resident memory.
 *
 *   node --import tsx bench/v8-flag-trials.ts ROUNDS WRITES NAME=OPTIONS… [--block N]
 *   e.g. 3 1000 base= nlfa=--no-lazy-feedback-allocation 'semi=--min-semi-space-size=16'
 *
 * V8 refuses a code cache made under other flags (every option is in its flag hash), and
 * without the cache a controller compiles what the cache would have given it, which is
 * not what the option costs. So each set runs its own copy of dist/ whose cache was made
 * under the same options (scripts/code-cache.ts), in .cache/ (inside the package, where
 * the agent finds its package root). One JSON line per trial, then the medians.
 */
interface Variant { name: string, flags: string[] }

interface Trial {
  variant: string
  round: number
  load: number
  firstBlockNetMs: number
  netMs: number
  rawMs: number
  lastBlockRawMs: number
  leadCpuMs: number
  idleCpuMsPerS: number
  rssMb: number
}

const trialsDir = join(packageRoot, '.cache', 'v8-flag-trials')
const idleSampleMs = 10_000

/** A copy of dist/ whose code cache V8 accepts under `flags`; its loader's path. */
function distFor (variant: Variant): string {
  const dist = join(packageRoot, 'dist')
  if (variant.flags.length === 0) return join(dist, 'cantripd.mjs')
  const copy = join(trialsDir, variant.name)
  rmSync(copy, { recursive: true, force: true })
  cpSync(dist, copy, { recursive: true })
  const cache = join(dist, 'cantripd.cjs.v8cache')
  if (!existsSync(cache)) throw new Error(`bench v8 flags: expected ${cache}; run npm run build`)
  const digest = readFileSync(cache).subarray(0, 32).toString('hex')
  const made = spawnSync(process.execPath, [...variant.flags, '--import', 'tsx', join(packageRoot, 'scripts', 'code-cache.ts'),
    join(copy, 'cantripd.cjs'), join(copy, 'cantripd.cjs.v8cache'), digest], { cwd: packageRoot, encoding: 'utf8' })
  if (made.status !== 0) throw new Error(`bench v8 flags: cannot make the code cache under ${variant.flags.join(' ')}: ${made.stderr}`)
  // A cache V8 refuses would charge the option with a compile it does not cause.
  const check = `import { readFileSync } from 'node:fs'; import { Script } from 'node:vm'; import { wrapProgram } from ${JSON.stringify(join(packageRoot, 'agent', 'tools', 'cached-program.ts'))}
const file = ${JSON.stringify(join(copy, 'cantripd.cjs'))}
const script = new Script(wrapProgram(readFileSync(file, 'utf8')), { filename: file, cachedData: readFileSync(file + '.v8cache').subarray(32) })
process.stdout.write(String(script.cachedDataRejected))`
  const checked = spawnSync(process.execPath, [...variant.flags, '--import', 'tsx', '--input-type=module', '-e', check], { cwd: packageRoot, encoding: 'utf8' })
  if (checked.stdout !== 'false') throw new Error(`bench v8 flags: expected V8 to take the code cache under ${variant.flags.join(' ')}, got rejected=${checked.stdout} ${checked.stderr}`)
  return join(copy, 'cantripd.mjs')
}

/** What CantripdCluster puts in front of `node DIST/cantripd.mjs ARGS…`: node FLAGS LOADER ARGS…. */
function launcherFor (variant: Variant, loader: string): string[] {
  return ['bash', '-c', `node="$1"; shift; shift; exec "$node" ${variant.flags.join(' ')} ${JSON.stringify(loader)} "$@"`, 'bench']
}

async function startAndIdle (launcher: string[]): Promise<{ leadCpuMs: number, idleCpuMsPerS: number, rssMb: number }> {
  const cluster = new CantripdCluster()
  try {
    await cluster.prepare(1, 0)
    cluster.launcher = () => launcher
    cluster.start(cluster.controllers[0]!)
    await waitFor('the one controller leading', () => cluster.leader() !== undefined)
    const pid = cluster.controllers[0]!.process!.pid!
    const leadCpuMs = cpuMs(pid)
    await sleep(2_000)
    const before = cpuMs(pid)
    const started = performance.now()
    await sleep(idleSampleMs)
    const idleCpuMsPerS = (cpuMs(pid) - before) / ((performance.now() - started) / 1000)
    const rssMb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024
    return { leadCpuMs, idleCpuMsPerS: round(idleCpuMsPerS, 1), rssMb: round(rssMb, 0) }
  } finally {
    await cluster.close()
  }
}

function load1 (): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])
}

export async function runV8FlagTrials (variants: readonly Variant[], rounds: number, writes: number, block: number): Promise<Trial[]> {
  const loaders = new Map(variants.map(v => [v.name, distFor(v)]))
  const trials: Trial[] = []
  try {
    for (let round_ = 1; round_ <= rounds; round_++) {
      for (const variant of variants) {
        const launcher = launcherFor(variant, loaders.get(variant.name)!)
        const load = load1()
        const cpu = await measureCantripWriteCpu(writes, undefined, block, launcher)
        const idleMsPerS = Object.values(cpu.idlePerSecond).reduce((sum, c) => sum + c.user + c.system, 0)
        const servers = ['leader', 'follower1', 'follower2'].reduce((sum, r) => sum + cpu.perWrite[r]!.user + cpu.perWrite[r]!.system, 0)
        const start = await startAndIdle(launcher)
        const trial: Trial = {
          variant: variant.name,
          round: round_,
          load,
          firstBlockNetMs: round(cpu.serversMsPerWriteByBlock[0]! - idleMsPerS * cpu.blockWallMs[0]! / 1000 / Math.min(block, writes), 3),
          netMs: cpu.netServersMsPerWrite,
          rawMs: round(servers, 3),
          lastBlockRawMs: cpu.serversMsPerWriteByBlock.at(-1)!,
          ...start
        }
        console.log(JSON.stringify(trial))
        trials.push(trial)
      }
    }
  } finally {
    rmSync(trialsDir, { recursive: true, force: true })
  }
  return trials
}

function parseVariant (arg: string): Variant {
  const at = arg.indexOf('=')
  if (at <= 0) throw new Error(`bench v8 flags: expected NAME=OPTIONS, got ${JSON.stringify(arg)}`)
  const flags = arg.slice(at + 1).split(/\s+/).filter(f => f !== '')
  for (const flag of flags) if (!/^--[a-z0-9-]+(=[\w.-]+)?$/.test(flag)) throw new Error(`bench v8 flags: expected V8 options like --name or --name=value, got ${JSON.stringify(flag)}`)
  return { name: arg.slice(0, at), flags }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const blockAt = args.indexOf('--block')
  const block = blockAt === -1 ? 250 : Number(args[blockAt + 1])
  const positional = args.filter((_, i) => blockAt === -1 || (i !== blockAt && i !== blockAt + 1))
  const [rounds, writes, ...named] = positional
  if (!Number.isSafeInteger(Number(rounds)) || !Number.isSafeInteger(Number(writes)) || named.length === 0 || !Number.isSafeInteger(block) || block < 1) {
    throw new Error('bench v8 flags: expected ROUNDS WRITES NAME=OPTIONS… [--block N]')
  }
  const trials = await runV8FlagTrials(named.map(parseVariant), Number(rounds), Number(writes), block)
  const median = (xs: number[]): number => round(quantile(xs, 0.5), 3)
  for (const name of new Set(trials.map(t => t.variant))) {
    const mine = trials.filter(t => t.variant === name)
    const of = (key: keyof Trial): number => median(mine.map(t => t[key] as number))
    console.log(`${name.padEnd(12)} n=${mine.length} first ${block} net ${of('firstBlockNetMs')} · all net ${of('netMs')} raw ${of('rawMs')} · last block raw ${of('lastBlockRawMs')} · start to leader ${of('leadCpuMs')} CPU-ms · idle ${of('idleCpuMsPerS')} CPU-ms/s · RSS ${of('rssMb')} MB · load ${Math.min(...mine.map(t => t.load))}-${Math.max(...mine.map(t => t.load))}`)
  }
  process.exit(0)
}
