/**
 * The compliance suites against the simulated implementations: SimClock, SeededRandom,
 * SimStorage and SimProcessRunner. Sim-only behaviour (crashes, faults, XState on the
 * sim clock) is tested beside each implementation.
 */
import { SimClock } from '../sim/sim-clock.ts'
import { SimStorage } from '../sim/sim-storage.ts'
import { SimProcessRunner, type SimProcessOutcome } from '../sim/sim-process-runner.ts'
import { SeededRandom } from '../runtime/random.ts'
import type { DetachedProcessSpec, ProcessSpec } from '../runtime/process-runner.ts'
import { SimFileSystem } from '../sim/sim-file-system.ts'
import { fileSystemCompliance } from './compliance/file-system-compliance.ts'
import { clockCompliance } from './compliance/clock-compliance.ts'
import { randomCompliance } from './compliance/random-compliance.ts'
import { storageCompliance } from './compliance/storage-compliance.ts'
import { processRunnerCompliance, type Behaviour } from './compliance/process-runner-compliance.ts'
import { transportCompliance } from './compliance/transport-compliance.ts'
import { SimNetworkWorld } from '../sim/sim-network-world.ts'

/** Lets promise callbacks (and anything they queue) run before time moves again. */
const settleMicrotasks = (): Promise<void> => new Promise(resolve => setImmediate(resolve))

clockCompliance({
  name: 'SimClock',
  create: () => new SimClock({ startMs: 1_000_000 }),
  wait: async (clock, ms) => { clock.advance(ms) },
  earlyToleranceMs: 0,
  lateToleranceMs: 0
})

randomCompliance({ name: 'SeededRandom', create: seed => new SeededRandom(seed) })

storageCompliance({
  name: 'SimStorage',
  open: async () => new SimStorage(),
  reopen: async storage => {
    await storage.close()
    storage.reopen()
    return storage
  }
})

/** The simulated counterpart of each behaviour, decoded from the spec's arguments. */
function outcome (spec: ProcessSpec): SimProcessOutcome {
  const behaviour = JSON.parse(spec.args[0]!) as Behaviour
  switch (behaviour.kind) {
    case 'exit': return { durationMs: 5, exitCode: behaviour.exitCode, output: behaviour.stdout ?? [], stderr: behaviour.stderr ?? [] }
    case 'sleep-then-exit': return { durationMs: behaviour.ms, exitCode: behaviour.exitCode }
    case 'hang': return { durationMs: 0, hang: true }
    case 'print-env': return {
      durationMs: 5,
      output: behaviour.names.map(name => spec.env[name] === undefined ? `${name} unset` : `${name}=${spec.env[name]}`)
    }
    case 'print-cwd': return { durationMs: 5, output: [spec.cwd] }
    case 'print-lines': return { durationMs: 5, output: new Array(behaviour.lines).fill('x'.repeat(behaviour.width - 1)) }
    case 'missing': return { durationMs: 0, spawnFailure: `cannot start ${JSON.stringify(spec.command)}: ENOENT`, missing: true }
    case 'echo-stdin': {
      const text = spec.stdin !== undefined && 'bytes' in spec.stdin ? new TextDecoder().decode(spec.stdin.bytes) : ''
      return { durationMs: 5, output: text === '' ? [] : text.replace(/\n$/, '').split('\n') }
    }
  }
}

const clock = new SimClock()
const files = new SimFileSystem()
files.makeDirectory('/var/log/cantrip', { mode: 0o700, recursive: true })
processRunnerCompliance({
  name: 'SimProcessRunner',
  runner: new SimProcessRunner(clock, outcome, { files, detachedScript: (spec: DetachedProcessSpec) => outcome({ ...spec, timeoutMs: 1, outputBytesMax: 0 }) }),
  cwd: '/var/lib/cantrip/agents/unit-web-0/charm',
  spec: (behaviour, overrides = {}): ProcessSpec => ({
    command: behaviour.kind === 'missing' ? '/nonexistent/hook' : `/sim/${behaviour.kind}`,
    args: [JSON.stringify(behaviour)],
    env: {},
    cwd: '/var/lib/cantrip/agents/unit-web-0/charm',
    timeoutMs: 10_000,
    outputBytesMax: 64 * 1024,
    ...overrides
  }),
  settle: async <T>(exit: Promise<T>): Promise<T> => {
    let settled = false
    void exit.then(() => { settled = true })
    await settleMicrotasks()
    for (let steps = 0; !settled && steps < 10_000; steps++) {
      if (!clock.runNext()) break
      await settleMicrotasks()
    }
    if (!settled) throw new Error('simulated process never exits: no timer left to run')
    return await exit
  },
  wait: async ms => {
    clock.advance(ms)
    await settleMicrotasks()
  },
  now: () => clock.now(),
  slackMs: 1,
  detached: {
    spec: (behaviour, marker, logFile) => ({
      command: behaviour.kind === 'missing' ? '/nonexistent/agent' : `/sim/${behaviour.kind}`,
      args: [JSON.stringify(behaviour), marker],
      env: {},
      cwd: '/var/lib/cantrip/machines/machine-0',
      logFile
    }),
    logDir: '/var/log/cantrip',
    files
  }
})

fileSystemCompliance({
  name: 'SimFileSystem',
  create: () => {
    const sim = new SimFileSystem()
    sim.makeDirectory('/tmp/files', { mode: 0o700, recursive: true })
    return { files: sim, root: '/tmp/files' }
  }
})

transportCompliance({ name: 'SimTransport', create: async count => new SimNetworkWorld({ seed: 7, peers: count }), deliveryMs: 20, propagationMs: 0, unknownPeer: 'peer-never-started', pushes: true })
