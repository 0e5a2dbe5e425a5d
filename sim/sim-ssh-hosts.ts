/**
 * Simulated hosts behind ssh, for the manual provider's own code: a `SimProcessScript`
 * that answers the provider's `ssh … sh -c SCRIPT sh ROOT ACTION ARGS…` calls as the
 * remote script would (probe, install, start, stop, list) against an in-memory record
 * of each host's machine directories and agents, and `tar` packing an archive into the
 * `SimFileSystem`. Faults: a host that does not answer (ssh exits 255 after its connect
 * timeout), a key the host refuses, an agent that exits at once, and `crash()` killing a
 * running agent as a host-side crash would.
 */
import type { ProcessSpec } from '../runtime/process-runner.ts'
import type { SimFileSystem } from './sim-file-system.ts'
import type { SimProcessOutcome } from './sim-process-runner.ts'

interface SimMachineDir {
  token: string
  machineId: string
  pid: number | undefined
}

export interface SimSshHost {
  /** `user@host:port` as the provider names it. */
  readonly key: string
  reachable: boolean
  refusesKey: boolean
  /** The next agents started here exit at once with this line in their log. */
  readonly failingStarts: string[]
  readonly codeStamps: Set<string>
  readonly machines: Map<string, SimMachineDir>
}

export class SimSshHosts {
  readonly #hosts = new Map<string, SimSshHost>()
  readonly #files: SimFileSystem
  readonly #sshCommand: string
  readonly #tarCommand: string
  readonly #roundTripMs: number
  #nextPid = 5000
  /** Every remote action run, in order: `user@host:port action dir`. */
  readonly calls: string[] = []

  constructor (options: { files: SimFileSystem, sshCommand: string, tarCommand: string, roundTripMs?: number }) {
    this.#files = options.files
    this.#sshCommand = options.sshCommand
    this.#tarCommand = options.tarCommand
    this.#roundTripMs = options.roundTripMs ?? 20
  }

  add (key: string): SimSshHost {
    const host: SimSshHost = { key, reachable: true, refusesKey: false, failingStarts: [], codeStamps: new Set(), machines: new Map() }
    this.#hosts.set(key, host)
    return host
  }

  /** Kills the agent of a machine directory on a host; false when none ran. */
  crash (hostKey: string, dirName: string): boolean {
    const dir = this.#hosts.get(hostKey)?.machines.get(dirName)
    if (dir?.pid === undefined) return false
    dir.pid = undefined
    return true
  }

  /** Agents running on a host, by machine directory. */
  running (hostKey: string): string[] {
    return [...this.#hosts.get(hostKey)?.machines ?? []].filter(([, dir]) => dir.pid !== undefined).map(([name]) => name).sort()
  }

  /** The SimProcessRunner script: ssh and tar as the manual provider runs them. */
  readonly script = (spec: ProcessSpec): SimProcessOutcome => {
    if (spec.command === this.#tarCommand) return this.#tar(spec)
    if (spec.command !== this.#sshCommand) return { durationMs: 0, spawnFailure: `spawn ${spec.command} ENOENT`, missing: true }
    const args = spec.args
    // Master connections and their exit: nothing to simulate beyond succeeding.
    if (args.includes('-M') || args.includes('-O')) return { durationMs: 1, exitCode: 0 }
    const at = args.indexOf('--')
    const port = args[args.indexOf('-p') + 1]
    const user = args[args.indexOf('-l') + 1]
    const key = `${user ?? '?'}@${args[at + 1] ?? '?'}:${port ?? '?'}`
    const host = this.#hosts.get(key)
    const connectTimeout = Number(/ConnectTimeout=(\d+)/.exec(args.join(' '))?.[1] ?? '5') * 1000
    if (host === undefined || !host.reachable) return { durationMs: connectTimeout, exitCode: 255, stderr: [`ssh: connect to host ${args[at + 1] ?? '?'} port ${port ?? '?'}: Connection timed out`] }
    if (host.refusesKey) return { durationMs: this.#roundTripMs, exitCode: 255, stderr: [`${user ?? '?'}@${args[at + 1] ?? '?'}: Permission denied (publickey).`] }
    const words = unquote(args[at + 2] ?? '')
    // sh -c SCRIPT sh ROOT ACTION ARGS...
    const [action, ...rest] = words.slice(5)
    this.calls.push(`${key} ${action ?? '?'} ${rest[0] ?? ''}`.trimEnd())
    return { durationMs: this.#roundTripMs, ...this.#remote(host, words[4] ?? '~/.cantrip', action ?? '', rest, spec) }
  }

  #tar (spec: ProcessSpec): SimProcessOutcome {
    const archive = spec.args[spec.args.indexOf('-f') + 1] ?? ''
    this.#files.writeFile(archive, 'simulated agent code archive', 0o600)
    return { durationMs: 50, exitCode: 0 }
  }

  #remote (host: SimSshHost, root: string, action: string, args: readonly string[], spec: ProcessSpec): Omit<SimProcessOutcome, 'durationMs'> {
    const home = root === '~' || root.startsWith('~/') ? `/home/${host.key.split('@')[0] ?? 'user'}${root.slice(1)}` : root
    switch (action) {
      case 'probe': {
        const [dirName = '', token = '', stamp = ''] = args
        const dir = host.machines.get(dirName)
        const state = dir === undefined ? 'absent' : `${dir.token === token ? 'same' : 'other'}-${dir.pid !== undefined ? 'running' : 'stopped'}`
        return { exitCode: 0, output: [`root ${home}`, `code ${host.codeStamps.has(stamp) ? 'present' : 'missing'}`, `machine ${state}`] }
      }
      case 'install': {
        const archive = spec.stdin !== undefined && 'file' in spec.stdin ? spec.stdin.file : undefined
        if (archive === undefined || !this.#files.exists(archive)) return { exitCode: 1, stderr: ['tar: This does not look like a tar archive'] }
        host.codeStamps.add(args[0] ?? '')
        return { exitCode: 0 }
      }
      case 'start': {
        const [dirName = '', token = '', machineId = ''] = args
        const existing = host.machines.get(dirName)
        if (existing !== undefined && existing.token === token && existing.pid !== undefined) return { exitCode: 0, output: ['started already'] }
        const failure = host.failingStarts.shift()
        if (failure !== undefined) {
          host.machines.delete(dirName)
          return { exitCode: 3, output: [`agent exited at once: ${failure}`] }
        }
        const pid = this.#nextPid++
        host.machines.set(dirName, { token, machineId, pid })
        return { exitCode: 0, output: [`started ${pid}`] }
      }
      case 'stop': {
        host.machines.delete(args[0] ?? '')
        return { exitCode: 0, output: [`remaining ${host.machines.size}`] }
      }
      case 'list': {
        const lines = [...host.machines.values()].map(dir => `machine ${dir.pid !== undefined ? 'running' : 'failed'} ${hex(dir.machineId)} ${hex(dir.token)}`)
        return { exitCode: 0, output: [...lines, 'end'] }
      }
      default: return { exitCode: 2, stderr: [`unknown action ${action}`] }
    }
  }
}

/** Splits a line of single-quoted words (`'a'\''b' 'c'`) as a POSIX shell would. */
function unquote (line: string): string[] {
  const words: string[] = []
  let word = ''
  let inWord = false
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!
    if (ch === "'") {
      const end = line.indexOf("'", i + 1)
      word += line.slice(i + 1, end < 0 ? line.length : end)
      i = end < 0 ? line.length : end
      inWord = true
    } else if (ch === '\\' && i + 1 < line.length) {
      word += line[++i]!
      inWord = true
    } else if (ch === ' ') {
      if (inWord) words.push(word)
      word = ''
      inWord = false
    } else {
      word += ch
      inWord = true
    }
  }
  if (inWord) words.push(word)
  return words
}

function hex (text: string): string {
  return [...new TextEncoder().encode(text)].map(byte => byte.toString(16).padStart(2, '0')).join('')
}
