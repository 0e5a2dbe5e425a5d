/**
 * Where a real-process test file's CPU goes, by kind of process: runs each file in a uvu
 * process of its own inside a CPU-accounting cgroup (scripts/job-cgroup.ts), reads every
 * pid in that cgroup from /proc every `sampleMs`, and prints, per file, each kind's
 * processes started, CPU seconds and life; for the daemons (controllers, machine agents)
 * also the CPU of their first `startupSeconds` and the lowest rate they burned over any
 * `idleWindowSeconds` (their idle floor), so that a test's cost can be split into
 * start-up, idling and work. What the samples did not see (processes that ended between
 * two samples: most hook tools and quick shells) is the cgroup's total less the sum of
 * the last readings, printed as `unseen`.
 *
 * The profiler is outside the cgroup, so its own sampling is not counted; under load a
 * sample comes late, which only widens the window a process can hide in.
 *
 *   node --import tsx scripts/proc-cpu-profile.ts PATTERN... [--json FILE]
 *
 * PATTERN is a regex on the path below test/, as for scripts/run-tests.ts; each matching
 * file runs on its own, one after another. dist/ is built first, as run-tests does.
 */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildDist } from './build.ts'
import { makeJobCgroup } from './job-cgroup.ts'

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..')
const testDir = join(root, 'test')
const sampleMs = 100
const startupSeconds = 5
const idleWindowSeconds = 5
/** USER_HZ: 100 on every Linux the tests run on. */
const clockTicksPerSecond = 100
/** A file's run is killed after this long: a bound for hangs. */
const fileSecondsMax = 900
/** Command lines kept per kind in --json, to check the classification. */
const examplesMax = 4

type Kind = 'uvu' | 'controller' | 'both' | 'machine' | 'cli' | 'hook' | 'hook-tool' | 'workload' | 'shell' | 'build' | 'node-other' | 'other'

interface Seen {
  kind: Kind
  firstAt: number
  lastAt: number
  /** utime + stime of the process itself, in seconds, at each sample: [secondsSinceStart, cpu]. */
  samples: Array<[number, number]>
  cmdline: string
}

/** Hook tools run under their own names (symlinks to one client program). */
const hookTools = new Set(['juju-log', 'status-set', 'status-get', 'application-version-set', 'relation-get', 'relation-set', 'relation-ids', 'relation-list',
  'config-get', 'is-leader', 'leader-get', 'leader-set', 'open-port', 'close-port', 'opened-ports', 'unit-get', 'action-get', 'action-set', 'action-log',
  'action-fail', 'secret-get', 'secret-add', 'secret-set', 'secret-ids', 'secret-info-get', 'secret-grant', 'secret-revoke', 'secret-remove', 'network-get',
  'storage-get', 'storage-list', 'credential-get', 'goal-state', 'state-get', 'state-set', 'state-delete', 'payload-register'])

function kindOf (cmdline: string[]): Kind {
  const text = cmdline.join(' ')
  if (text.includes('uvu/bin.js')) return 'uvu'
  const role = cmdline.indexOf('--role')
  if (role >= 0) {
    const value = cmdline[role + 1]
    if (value === 'controller' || value === 'both' || value === 'machine') return value
  }
  // The local provider's machine agents start from their bootstrap data, without --role.
  if (/cantripd[^ ]*\.(mjs|cjs)/.test(text) && cmdline.includes('--bootstrap')) return 'machine'
  if (/\/charm\/hooks\/|\/charm\/dispatch/.test(text)) return 'hook'
  if (/\/charm\/workload\//.test(text)) return 'workload'
  if (/cantrip-tool|hook-tool/.test(text) || hookTools.has((cmdline[0] ?? '').split('/').pop() ?? '')) return 'hook-tool'
  if (/dist\/cantrip\.(mjs|cjs)/.test(text)) return 'cli'
  if (/esbuild|scripts\/build\.ts/.test(text)) return 'build'
  const program = (cmdline[0] ?? '').split('/').pop() ?? ''
  if (['sh', 'bash', 'dash', 'sleep', 'cat', 'env', 'tar', 'ssh', 'sshd', 'timeout'].includes(program)) return 'shell'
  if (program === 'node' || program.startsWith('node')) return 'node-other'
  return 'other'
}

function readCpu (pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond
  } catch {
    return undefined
  }
}

function readCmdline (pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(part => part !== '')
  } catch {
    return undefined
  }
}

interface KindSummary { processes: number, cpu: number, lifeSeconds: number, startupCpu: number, idleRate: number[], examples: string[] }
interface FileProfile { file: string, ok: boolean, wallSeconds: number, cpuSeconds: number, unseen: number, kinds: Partial<Record<Kind, KindSummary>>, load: [number, number] }

/** The lowest CPU rate over any window of `windowSeconds` in a process's samples (undefined if it lived less). */
function idleFloor (samples: Array<[number, number]>, windowSeconds: number): number | undefined {
  let best: number | undefined
  let j = 0
  for (let i = 0; i < samples.length; i++) {
    while (j < samples.length && samples[j]![0] - samples[i]![0] < windowSeconds) j++
    if (j >= samples.length) break
    const rate = (samples[j]![1] - samples[i]![1]) / (samples[j]![0] - samples[i]![0])
    best = best === undefined ? rate : Math.min(best, rate)
  }
  return best
}

async function profileFile (file: string): Promise<FileProfile> {
  const cgroup = makeJobCgroup(`cantrip-profile-${process.pid}-${Date.now()}`)
  if (cgroup === undefined) throw new Error('proc-cpu-profile: cannot make a cgroup here (see scripts/job-cgroup.ts)')
  const load0 = loadavg()[0]!
  const started = performance.now()
  const pattern = `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`
  const [command, args] = cgroup.wrap(process.execPath, ['--import', 'tsx', join(root, 'node_modules/uvu/bin.js'), 'test', pattern, '--no-color'])
  const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const seen = new Map<number, Seen>()
  const sample = (): void => {
    const now = (performance.now() - started) / 1000
    for (const pid of cgroup.pids()) {
      let entry = seen.get(pid)
      // Read every time: a child caught between fork and exec still shows its parent's
      // command line (a machine agent's, for a hook), and a wrapper may exec.
      const cmdline = readCmdline(pid)
      if (cmdline !== undefined && cmdline.length > 0) {
        if (entry === undefined) {
          entry = { kind: kindOf(cmdline), firstAt: now, lastAt: now, samples: [], cmdline: cmdline.join(' ').slice(0, 160) }
          seen.set(pid, entry)
        } else {
          entry.kind = kindOf(cmdline)
          entry.cmdline = cmdline.join(' ').slice(0, 160)
        }
      }
      if (entry === undefined) continue
      const cpu = readCpu(pid)
      if (cpu === undefined) continue
      entry.lastAt = now
      entry.samples.push([now, cpu])
    }
  }
  const sampler = setInterval(sample, sampleMs)
  const killer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL') } catch { /* gone */ } }, fileSecondsMax * 1000)
  const code = await new Promise<number | null>(resolve => { child.on('close', resolve) })
  clearTimeout(killer)
  clearInterval(sampler)
  for (let i = 0; i < 40 && cgroup.pids().length > 0; i++) await new Promise(resolve => setTimeout(resolve, 50))
  for (const pid of cgroup.pids()) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
  const wallSeconds = (performance.now() - started) / 1000
  const cpuSeconds = cgroup.cpuSeconds()
  cgroup.remove()
  const kinds: Partial<Record<Kind, KindSummary>> = {}
  let attributed = 0
  for (const entry of seen.values()) {
    const last = entry.samples.at(-1)
    if (last === undefined) continue
    const summary = kinds[entry.kind] ??= { processes: 0, cpu: 0, lifeSeconds: 0, startupCpu: 0, idleRate: [], examples: [] }
    summary.processes++
    if (summary.examples.length < examplesMax) summary.examples.push(entry.cmdline)
    summary.cpu += last[1]
    attributed += last[1]
    summary.lifeSeconds += entry.lastAt - entry.firstAt
    const startup = entry.samples.filter(([at]) => at - entry.firstAt <= startupSeconds).at(-1)
    summary.startupCpu += startup?.[1] ?? 0
    const floor = idleFloor(entry.samples, idleWindowSeconds)
    if (floor !== undefined) summary.idleRate.push(floor)
  }
  const ok = code === 0 && /Passed:\s*(\d+)/.exec(output)?.[1] === /Total:\s*(\d+)/.exec(output)?.[1]
  if (!ok) process.stderr.write(`${file}: FAILED\n${output.slice(-3000)}\n`)
  return { file, ok, wallSeconds, cpuSeconds, unseen: Math.max(0, cpuSeconds - attributed), kinds, load: [load0, loadavg()[0]!] }
}

function testFiles (patterns: string[]): string[] {
  const regexes = patterns.map(p => new RegExp(p, 'i'))
  const found: string[] = []
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name.endsWith('.test.ts') && regexes.some(r => r.test(relative(testDir, path)))) found.push(relative(testDir, path))
    }
  }
  walk(testDir)
  return found.sort()
}

function print (p: FileProfile): void {
  const f = (n: number): string => n.toFixed(1)
  process.stdout.write(`${p.file}: ${p.ok ? 'ok' : 'FAILED'}, ${f(p.cpuSeconds)} CPU-s in ${f(p.wallSeconds)} s wall (load ${f(p.load[0])} → ${f(p.load[1])}); unseen ${f(p.unseen)} CPU-s\n`)
  for (const [kind, s] of Object.entries(p.kinds).sort((a, b) => b[1].cpu - a[1].cpu)) {
    const idle = s.idleRate.length === 0 ? '' : `, idle floor ${(s.idleRate.reduce((a, b) => a + b, 0) / s.idleRate.length).toFixed(3)} CPU-s/s each`
    const daemon = ['controller', 'both', 'machine'].includes(kind) ? `, first ${startupSeconds} s ${f(s.startupCpu)}${idle}` : ''
    process.stdout.write(`  ${kind.padEnd(11)} ${String(s.processes).padStart(4)} procs ${f(s.cpu).padStart(6)} CPU-s, ${f(s.lifeSeconds).padStart(6)} s alive in all${daemon}\n`)
  }
}

async function main (): Promise<void> {
  const argv = process.argv.slice(2)
  const jsonAt = argv.indexOf('--json')
  const json = jsonAt >= 0 ? argv.splice(jsonAt, 2)[1] : undefined
  const files = testFiles(argv.length === 0 ? ['.*'] : argv)
  await buildDist()
  const profiles: FileProfile[] = []
  for (const file of files) {
    const profile = await profileFile(file)
    profiles.push(profile)
    print(profile)
  }
  if (json !== undefined) writeFileSync(json, JSON.stringify(profiles, null, 1))
}

await main()
