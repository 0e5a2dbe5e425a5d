/**
 * The compliance suites against the real implementations: SystemClock, SeededRandom,
 * LevelStorage in a temporary directory and ChildProcessRunner running /bin/sh.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SystemClock } from '../agent/system-clock.ts'
import { LevelStorage } from '../agent/level-storage.ts'
import { ChildProcessRunner } from '../agent/child-process-runner.ts'
import { NodeFileSystem } from '../agent/node-file-system.ts'
import { SeededRandom } from '../runtime/random.ts'
import type { ProcessSpec } from '../runtime/process-runner.ts'
import { clockCompliance } from './compliance/clock-compliance.ts'
import { randomCompliance } from './compliance/random-compliance.ts'
import { storageCompliance } from './compliance/storage-compliance.ts'
import { processRunnerCompliance, type Behaviour } from './compliance/process-runner-compliance.ts'
import { fileSystemCompliance } from './compliance/file-system-compliance.ts'

const root = realpathSync(mkdtempSync(join(tmpdir(), 'cantrip-compliance-')))
// uvu gives no hook after the last suite of a file; remove the directory on the way out.
process.once('exit', () => { rmSync(root, { recursive: true, force: true }) })

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

clockCompliance({
  name: 'SystemClock',
  create: () => new SystemClock({ unrefTimers: true }),
  wait: async (_clock, ms) => { await sleep(ms) },
  // Node starts a timer from the event loop's cached time, a little before now().
  earlyToleranceMs: 2,
  lateToleranceMs: 15
})

randomCompliance({ name: 'SeededRandom', create: seed => new SeededRandom(seed) })

let databases = 0
storageCompliance({
  name: 'LevelStorage',
  open: async () => await LevelStorage.open(join(root, `db-${databases++}`)),
  reopen: async storage => {
    await storage.close()
    return await LevelStorage.open(storage.location)
  }
})

/** Quote for sh: single quotes, with embedded ones closed and escaped. */
const quote = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`

function script (behaviour: Behaviour): string {
  switch (behaviour.kind) {
    case 'exit': {
      const out = (behaviour.stdout ?? []).map(line => `printf '%s\\n' ${quote(line)}`)
      const err = (behaviour.stderr ?? []).map(line => `printf '%s\\n' ${quote(line)} >&2`)
      return [...out, ...err, `exit ${behaviour.exitCode}`].join('\n')
    }
    case 'sleep-then-exit': return `/bin/sleep ${behaviour.ms / 1000}\nexit ${behaviour.exitCode}`
    case 'hang': return '/bin/sleep 100'
    case 'print-env': return behaviour.names
      .map(name => `if [ "\${${name}+set}" = set ]; then printf '%s\\n' "${name}=$${name}"; else printf '%s\\n' ${quote(`${name} unset`)}; fi`)
      .join('\n')
    case 'print-cwd': return 'pwd -P'
    case 'print-lines': {
      const line = 'x'.repeat(behaviour.width - 1)
      return `i=0\nwhile [ $i -lt ${behaviour.lines} ]; do printf '%s\\n' ${line}; i=$((i + 1)); done`
    }
    case 'missing': return ''
    case 'echo-stdin': return 'cat'
  }
}

const runner = new ChildProcessRunner({ timeoutKillGraceMs: 500, outputDrainMs: 200 })
processRunnerCompliance({
  name: 'ChildProcessRunner',
  runner,
  cwd: root,
  spec: (behaviour, overrides = {}): ProcessSpec => ({
    command: behaviour.kind === 'missing' ? join(root, 'no-such-hook') : '/bin/sh',
    args: ['-c', script(behaviour)],
    env: {},
    cwd: root,
    timeoutMs: 10_000,
    outputBytesMax: 64 * 1024,
    ...overrides
  }),
  settle: async <T>(exit: Promise<T>): Promise<T> => {
    let guard: NodeJS.Timeout | undefined
    const stuck = new Promise<never>((_resolve, reject) => {
      guard = setTimeout(() => { reject(new Error('process did not exit within 15 s')) }, 15_000)
    })
    try {
      return await Promise.race([exit, stuck])
    } finally {
      clearTimeout(guard)
    }
  },
  wait: sleep,
  now: () => performance.now(),
  slackMs: 400,
  detached: {
    spec: (behaviour, marker, logFile) => ({
      command: behaviour.kind === 'missing' ? join(root, 'no-such-agent') : '/bin/sh',
      args: ['-c', script(behaviour), 'sh', marker],
      env: {},
      cwd: root,
      logFile
    }),
    logDir: root,
    files: new NodeFileSystem()
  }
})

let fileSystems = 0
fileSystemCompliance({
  name: 'NodeFileSystem',
  create: () => {
    const dir = join(root, `files-${fileSystems++}`)
    new NodeFileSystem().makeDirectory(dir, { mode: 0o700 })
    return { files: new NodeFileSystem(), root: dir }
  }
})
