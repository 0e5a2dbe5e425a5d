import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { SourceMap } from 'node:module'
import { isNodeOwn, layerOf } from './profile-layers.ts'

/**
 * `node --import tsx bench/perf-layers.ts FILE.perf.data… [--from FRACTION] [--main]`: a
 * `perf record -e cpu-clock -g` profile of a Node process run with --perf-basic-prof
 * (bench/write-cpu.ts --perf) by layer, as bench/profile-layers.ts does for V8's own
 * profiles. perf's cpu-clock counts on-CPU time only, every thread and the kernel
 * included; V8's --cpu-prof samples the main thread on wall time, so on a loaded machine
 * it charges a process's wait for a core to whatever it was in (a socket write showed as
 * 31 % of a leader's samples while its system time was 13 % of its CPU).
 *
 * Each sample counts once, for the innermost frame on its stack that names a layer: V8's
 * compiler threads and GC, the kernel, LevelDB, then the JavaScript frames mapped through
 * the bundle's source map to their package or file (profile-layers.ts's layers, with ours
 * split into Raft, model and controller, and the rest). `--from 0.66` keeps the last third
 * of the samples (the warm part of a run); `--main` the main thread only.
 */
interface Frame { symbol: string, kernel: boolean }
interface Sample { tid: string, time: number, frames: Frame[] }

const native: Array<[string, RegExp]> = [
  ['V8 compiler (TurboFan threads, lazy compiles)', /OptimizingCompileDispatcher|v8::internal::compiler::|Builtins_CompileLazy|v8::internal::Compiler::/],
  ['GC', /v8::internal::(Heap|Scavenger|MarkCompact|Sweeper|ConcurrentMarking|MinorMarkCompact|IncrementalMarking)|\(garbage collector\)/],
  ['LevelDB write and fsync (thread pool)', /leveldb::|BatchWriteWorker|fdatasync/]
]
const kernelNet = /^(tcp_|__tcp|ip_|__ip|sock_|__sock|skb|__skb|net_|__netif|__dev_queue|do_softirq|handle_softirqs|loopback)/
const ours: Array<[string, RegExp]> = [
  ['raft (runtime/raft)', /runtime\/raft\//],
  ['model and controller (runtime/model, actors/controller)', /runtime\/model\/|actors\/controller\//]
]

const maps = new Map<string, SourceMap | undefined>()

/** A JavaScript frame's original source: the bundle's frames through its source map. */
function sourceOf (symbol: string): string | undefined {
  const match = /^JS:[*^~+]?(?:.*?) (\S+?):(\d+):(\d+)$/.exec(symbol)
  if (match === null) return symbol.startsWith('JS:wasm') ? 'wasm:' : undefined
  const [, path, line, column] = match
  if (!/\.[cm]js$/.test(path!) || !path!.startsWith('/')) return path
  if (!maps.has(path!)) maps.set(path!, existsSync(`${path!}.map`) ? new SourceMap(JSON.parse(readFileSync(`${path!}.map`, 'utf8'))) : undefined)
  const entry = maps.get(path!)?.findEntry(Number(line) - 1, Number(column) - 1)
  return entry !== undefined && 'originalSource' in entry ? entry.originalSource : path
}

function layerOfSample (frames: readonly Frame[]): string {
  for (const frame of frames) {
    for (const [name, pattern] of native) if (pattern.test(frame.symbol)) return name
    if (frame.kernel) return kernelNet.test(frame.symbol) ? 'kernel: network' : 'kernel: other (syscalls, scheduling, interrupts)'
    const source = sourceOf(frame.symbol)
    if (source === undefined || isNodeOwn(source)) continue
    const layer = layerOf(source)
    if (!layer.startsWith('other')) return layer
    for (const [name, pattern] of ours) if (pattern.test(source)) return name
    return 'other (ours, bench, …)'
  }
  return 'node and V8 (event loop, microtasks, builtins)'
}

function samplesOf (file: string): Sample[] {
  const text = execFileSync('perf', ['script', '-i', file, '-F', 'tid,time,ip,sym,dso'], { maxBuffer: 1 << 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  const samples: Sample[] = []
  for (const block of text.split('\n\n')) {
    const lines = block.trim().split('\n')
    const head = /^(\d+)\s+([\d.]+):/.exec(lines[0]?.trim() ?? '')
    if (head === null) continue
    const frames = lines.slice(1).map(line => {
      const rest = line.trim().replace(/^[0-9a-f]+\s+/, '')
      return { symbol: rest.replace(/\s+\([^()]*\)$/, ''), kernel: rest.includes('[kernel.kallsyms]') }
    })
    samples.push({ tid: head[1]!, time: Number(head[2]), frames })
  }
  return samples
}

export function perfLayerShares (file: string, options: { from?: number, mainOnly?: boolean } = {}): { samples: number, mainShare: number, layers: Array<{ layer: string, share: number }> } {
  const all = samplesOf(file)
  const byThread = new Map<string, number>()
  for (const s of all) byThread.set(s.tid, (byThread.get(s.tid) ?? 0) + 1)
  // The process's main thread is the one with the most samples (the event loop).
  const main = [...byThread].sort((a, b) => b[1] - a[1])[0]?.[0]
  const first = all.length === 0 ? 0 : Math.min(...all.map(s => s.time))
  const last = all.length === 0 ? 0 : Math.max(...all.map(s => s.time))
  const since = first + (last - first) * (options.from ?? 0)
  const kept = all.filter(s => s.time >= since && (options.mainOnly !== true || s.tid === main))
  const counts = new Map<string, number>()
  for (const s of kept) {
    const layer = layerOfSample(s.frames)
    counts.set(layer, (counts.get(layer) ?? 0) + 1)
  }
  const inWindow = all.filter(s => s.time >= since)
  const mainShare = inWindow.length === 0 ? 0 : inWindow.filter(s => s.tid === main).length / inWindow.length
  return {
    samples: kept.length,
    mainShare: Number((mainShare * 100).toFixed(1)),
    layers: [...counts].sort((a, b) => b[1] - a[1]).map(([layer, c]) => ({ layer, share: Number((c / Math.max(1, kept.length) * 100).toFixed(1)) }))
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const fromAt = args.indexOf('--from')
  const from = fromAt === -1 ? 0 : Number(args[fromAt + 1])
  const mainOnly = args.includes('--main')
  const files = args.filter((a, i) => a.endsWith('.data') && (fromAt === -1 || i !== fromAt + 1))
  for (const file of files) {
    const { samples, mainShare, layers } = perfLayerShares(file, { from, mainOnly })
    console.log(`${file} (${samples} on-CPU samples${mainOnly ? ', main thread' : `, ${mainShare} % on the main thread`}${from > 0 ? `, from ${from} of the run` : ''})`)
    for (const row of layers) console.log(`  ${String(row.share).padStart(5)} %  ${row.layer}`)
  }
}
