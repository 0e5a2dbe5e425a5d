/**
 * The manual provider (providers/manual-provider.ts) on the real host: the local ssh and
 * tar as child processes, node:fs, the system clock, this process's environment (an ssh
 * agent's socket reaches ssh), and by default this installation's agent bundle as the
 * agent code, versioned by its hash (a given source by a hash of its files' names,
 * sizes and times).
 */
import { createHash } from 'node:crypto'
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs'
import { delimiter, dirname, join, relative, resolve, sep } from 'node:path'
import { limits } from '../runtime/limits.ts'
import { ProviderError } from '../providers/provider-contract.ts'
import { ManualProvider, type ManualProviderOptions, type ManualSource } from '../providers/manual-provider.ts'
import { ChildProcessRunner } from './child-process-runner.ts'
import { NodeFileSystem } from './node-file-system.ts'
import { packageRoot } from './package-root.ts'
import { stagedAgentBundle } from './tools/agent-bundle.ts'
import { SystemClock } from './system-clock.ts'

const projectRoot = packageRoot

export type RealManualProviderOptions =
  Omit<ManualProviderOptions, 'processes' | 'files' | 'clock' | 'sshCommand' | 'tarCommand' | 'env' | 'writerId' | 'source' | 'sourceVersion'> & {
    /** Default: this installation's agent bundle, unpacked (agent/tools/agent-bundle.ts). */
    readonly source?: ManualSource
    /** Default: a hash of the source's names, sizes and times (or the archive's bytes), taken on first use. */
    readonly sourceVersion?: string
  }

/**
 * Relative paths are taken from this process's working directory. By default a host gets
 * this installation's agent bundle (agent/tools/agent-bundle.ts: the built agent, the
 * compiled hook-tool client and LevelDB's prebuilt binding, a few MB), staged once, named
 * by its hash, and started through its launcher: Node is all the host needs.
 */
export function createManualProvider (options: RealManualProviderOptions): ManualProvider {
  let staged: { dir: string, hash: string } | undefined
  const stage = (): { dir: string, hash: string } => { staged ??= stagedAgentBundle(projectRoot); return staged }
  const source: ManualSource = options.source ?? { kind: 'directory', get path () { return stage().dir }, exclude: [] }
  const sourceVersion = options.sourceVersion ?? (options.source === undefined ? () => stage().hash.slice(0, 16) : () => manualSourceStamp(source))
  const absolute = (path: string | undefined): { path?: string } => path === undefined ? {} : { path: resolve(path) }
  return new ManualProvider({
    ...options,
    stateFile: resolve(options.stateFile),
    ...(options.knownHostsFile === undefined ? {} : { knownHostsFile: absolute(options.knownHostsFile).path! }),
    ...(options.sshKeyFile === undefined ? {} : { sshKeyFile: absolute(options.sshKeyFile).path! }),
    ...(options.controlDir === undefined ? {} : { controlDir: absolute(options.controlDir).path! }),
    // The default's path is found (and the bundle staged) only when a host is provisioned.
    source: options.source === undefined ? source : { ...source, path: resolve(source.path) },
    sourceVersion,
    // ssh was SIGKILLed at its timeout before it ran through the ProcessRunner; no grace.
    processes: new ChildProcessRunner({ timeoutKillGraceMs: 0 }),
    files: new NodeFileSystem(),
    clock: new SystemClock(),
    sshCommand: onPath('ssh'),
    tarCommand: onPath('tar'),
    env: definedOnly(process.env),
    writerId: String(process.pid)
  })
}

/** A version for the code: the archive's bytes, or the tree's names, sizes and mtimes. */
export function manualSourceStamp (source: ManualSource): string {
  const hash = createHash('sha256')
  if (source.kind === 'tarball') {
    hash.update(readFileSync(source.path))
  } else {
    const excluded = new Set((source.exclude ?? ['./.git', './test']).map(pattern => resolve(source.path, pattern)))
    // An explicit stack, not recursion: the tree is on disk (CONVENTIONS: bounds).
    const stack = [source.path]
    let files = 0
    while (stack.length > 0) {
      const dir = stack.pop()!
      for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name < b.name ? -1 : 1)) {
        const path = join(dir, entry.name)
        if (excluded.has(path)) continue
        if (entry.isDirectory()) { stack.push(path); continue }
        const stat = statSync(path, { throwIfNoEntry: false })
        if (stat === undefined) continue
        if (++files > limits.manualSourceFilesMax) throw new ProviderError('manual', 'invalid', `the agent code in ${source.path} has more than ${limits.manualSourceFilesMax} files`)
        hash.update(`${relative(source.path, path).split(sep).join('/')}\0${stat.size}\0${stat.mtimeMs}\n`)
      }
    }
  }
  return hash.digest('hex').slice(0, 16)
}

/** The executable's absolute path on PATH (as spawn would find it), or the bare name, which then fails to start with a clear reason. */
function onPath (name: string): string {
  for (const dir of (process.env['PATH'] ?? '/usr/bin:/bin').split(delimiter)) {
    if (dir === '') continue
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return resolve(candidate)
    } catch { /* not here */ }
  }
  return name
}

function definedOnly (env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) if (value !== undefined) result[name] = value
  return result
}
