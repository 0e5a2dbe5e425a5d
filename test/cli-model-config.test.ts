/**
 * model-config and juju-reboot against real processes on the local provider, as a user
 * sees them: `model-config` lists, gets, sets and resets keys and refuses bad ones with
 * one line; with automatically-retry-hooks=false a failed hook stays in error until
 * `resolved` (and `resolved --no-retry` moves on without running it);
 * update-status-hook-interval=5s gives update-status about every 5 s, applied without
 * a restart; `juju-reboot` (after the hook) and `juju-reboot --now` (the hook killed and
 * run again) restart the machine agent, its workloads die, and the start hook runs again.
 * The machine has a boot clock of its own (agent/time-namespace-boot-clock.ts), as lxcfs
 * gives an LXD machine: the boot epoch a charm derives from /proc/uptime (ops'
 * test_hookcmds: `time.time() - uptime`) is this test's, holds through a kill -9 of the
 * machine agent, and moves forward on `juju-reboot`; where time namespaces cannot be made,
 * the agent's log says why in one line.
 *
 * Juju followed: cmd/juju/model/config.go (the listing and `--reset`),
 * worker/uniter/resolver (no retry timer without automatically-retry-hooks),
 * worker/uniter/operation/runhook.go (reboot after commit, or kill and requeue),
 * worker/uniter/reboot/resolver.go (start once after a reboot),
 * canonical/operator test/integration/test_hookcmds.py (test_juju_reboot_queues_reboot:
 * the boot epoch strictly later after juju-reboot).
 * Every process started is stopped by pid (destroy-controller stops the agents, the
 * test kills the charm's workload by its pid file); the temp dir is removed.
 */
import '../runtime/polyfill.ts'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { StatusDocument } from '../agent/cli/status-document.ts'
import { cantrip, cantripOk as ok, removeHome } from './support/cli-process.ts'
import { hostClockEnvName, hostClockNotice, timeNamespaceUnavailable } from '../agent/time-namespace-boot-clock.ts'
import { processAlive } from './support/processes.ts'
import { StatusReader } from './support/status-reader.ts'

/** A charm whose hooks log their names to `<dir>/hooks.log` and obey flag files in `<dir>`. */
function writeCharm (charmDir: string, dir: string): void {
  mkdirSync(join(charmDir, 'hooks'), { recursive: true })
  writeFileSync(join(charmDir, 'metadata.yaml'), 'name: rc\nsummary: retry and reboot\ndescription: test charm\n')
  writeFileSync(join(charmDir, 'config.yaml'), 'options:\n  x:\n    type: string\n    default: "0"\n')
  const common = `#!/bin/bash
hook=$(basename "$0")
dir=${JSON.stringify(dir)}
echo "$hook" >> "$dir/hooks.log"
if [ -e "$dir/fail-$hook" ]; then exit 1; fi
if [ "$hook" = start ]; then
  nohup sleep 600 > /dev/null 2>&1 &
  echo $! > "$dir/workload.pid"
fi
if [ "$hook" = config-changed ] && [ -e "$dir/reboot-after" ]; then
  rm "$dir/reboot-after"
  juju-reboot
  echo "config-changed went on" >> "$dir/hooks.log"
fi
if [ "$hook" = config-changed ] && [ -e "$dir/reboot-now" ]; then
  rm "$dir/reboot-now"
  juju-reboot --now
  echo "config-changed went on after --now" >> "$dir/hooks.log"
fi
exit 0
`
  for (const hook of ['install', 'start', 'config-changed', 'leader-elected', 'update-status', 'stop', 'remove']) {
    writeFileSync(join(charmDir, 'hooks', hook), common, { mode: 0o755 })
  }
}

function hooks (dir: string): string[] {
  return existsSync(join(dir, 'hooks.log')) ? readFileSync(join(dir, 'hooks.log'), 'utf8').trim().split('\n') : []
}

interface UnitStatus { workload: string, message: string, agent: string }

function unitOf (doc: StatusDocument): UnitStatus {
  const unit = doc.applications['rc']?.units?.['rc/0']
  return { workload: unit?.['workload-status'].current ?? '', message: unit?.['workload-status'].message ?? '', agent: unit?.['juju-status'].current ?? '' }
}

/** rc/0's status as `cantrip status` prints it. */
function unitStatus (home: string): UnitStatus {
  return unitOf(JSON.parse(ok(home, 'status', '--format', 'json')) as StatusDocument)
}

/**
 * Waits (bounded) until rc/0's status holds `holds`: read in this process and looked at
 * again on each change notice (a `cantrip status` every 500 ms cost most of a core).
 */
async function untilUnit (reader: StatusReader, what: string, holds: (s: UnitStatus) => boolean): Promise<void> {
  await reader.until(what, doc => holds(unitOf(doc)), 120_000)
}

/** Waits (bounded, generously: the machine is busy) until `holds`; fails with what was last seen. */
async function until<T> (what: string, read: () => T, holds: (value: T) => boolean, withinMs = 120_000): Promise<T> {
  const deadline = performance.now() + withinMs
  for (;;) {
    const value = read()
    if (holds(value)) return value
    if (performance.now() > deadline) assert.unreachable(`${what} within ${withinMs / 1000}s; last: ${JSON.stringify(value).slice(0, 800)}`)
    await new Promise(resolve => setTimeout(resolve, 500))
  }
}

const count = (list: readonly string[], name: string): number => list.filter(h => h === name).length

interface MachineBoot { epoch: number, uptime: number }

/** rc/0's machine's boot epoch as ops' test_hookcmds derives it (`time.time() - /proc/uptime`), read in the unit's context. */
function machineBoot (home: string): MachineBoot {
  const out = ok(home, 'exec', '--unit', 'rc/0', '--', 'echo "$(date +%s.%N) $(cut -d" " -f1 /proc/uptime)"').trim()
  const [now, uptime] = out.split(' ').map(Number)
  assert.ok(Number.isFinite(now) && Number.isFinite(uptime), `expected "<now> <uptime>", got ${JSON.stringify(out)}`)
  return { epoch: now! - uptime!, uptime: uptime! }
}

/** Machine 0's agent pid, from its pid file (local provider). */
function agentPid (home: string): number {
  return Number(readFileSync(join(home, 'controllers', 'local', 'machines', 'machine-0', 'agent.pid'), 'utf8').trim().split(/\s+/)[0])
}

test('model-config, retries off until resolved, update-status every 5 s, juju-reboot after the hook and --now', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-mc-'))
  const dir = join(home, 'rc-state')
  const charmDir = join(home, 'rc')
  mkdirSync(dir)
  writeCharm(charmDir, dir)
  let reader: StatusReader | undefined
  const startedAt = Date.now() / 1000
  try {
    ok(home, 'bootstrap')
    reader = await StatusReader.open(home)

    // model-config: the listing, a key, sets, resets, refusals.
    assert.is(ok(home, 'model-config'), [
      'Attribute                    From     Value',
      'automatically-retry-hooks    default  true',
      'logging-config               default  <root>=INFO',
      'update-status-hook-interval  default  5m',
      ''
    ].join('\n'))
    ok(home, 'model-config', 'automatically-retry-hooks=false', 'logging-config=<root>=INFO;unit=DEBUG')

    // Retries off: the failed install stays in error until resolved.
    writeFileSync(join(dir, 'fail-install'), '')
    ok(home, 'deploy', charmDir)
    await untilUnit(reader, 'install to fail', s => s.workload === 'error' && s.message === 'hook failed: "install"')
    // Juju would have retried after 5 s (± 20 %): 8 s later there is still one install.
    // The reads, resets and refusals below fill those 8 s (they change no key the unit's
    // agent acts on), so the wait costs no more wall time than it must.
    const noRetryUntil = performance.now() + 8_000
    assert.is(ok(home, 'model-config', 'automatically-retry-hooks'), 'false\n')
    const doc = JSON.parse(ok(home, 'model-config', '--format', 'json')) as Record<string, { value: unknown, source: string }>
    assert.equal(doc['automatically-retry-hooks'], { value: false, source: 'model' })
    assert.equal(doc['logging-config'], { value: '<root>=INFO;unit=DEBUG', source: 'model' })
    ok(home, 'model-config', '--reset', 'logging-config')
    assert.equal((JSON.parse(ok(home, 'model-config', '--format', 'json')) as typeof doc)['logging-config'], { value: '<root>=INFO', source: 'default' })
    const bad = cantrip(home, ['model-config', 'update-status-hook-interval=soon'])
    assert.is(bad.status, 1)
    assert.is(bad.stderr.trim().split('\n').length, 1, bad.stderr)
    assert.match(bad.stderr, /update-status-hook-interval: expected duration from 1s to 60m \(e\.g\. 5m, 10s\), got "soon"/)
    const unknown = cantrip(home, ['model-config', 'colour=red'])
    assert.is(unknown.status, 1)
    assert.match(unknown.stderr, /"colour" is not a model configuration key; the keys are automatically-retry-hooks, logging-config, update-status-hook-interval/)
    await new Promise(resolve => setTimeout(resolve, Math.max(0, noRetryUntil - performance.now())))
    assert.equal(hooks(dir), ['install'], 'no timer retries')
    assert.is(unitStatus(home).workload, 'error')
    unlinkSync(join(dir, 'fail-install'))
    ok(home, 'resolved', 'rc/0')
    await until('the unit to start after resolved', () => hooks(dir), h => h.includes('start'))
    assert.equal(hooks(dir).slice(0, 2), ['install', 'install'])

    // resolved --no-retry: the failed config-changed is skipped, not run again.
    writeFileSync(join(dir, 'fail-config-changed'), '')
    ok(home, 'config', 'rc', 'x=1')
    await untilUnit(reader, 'config-changed to fail', s => s.message === 'hook failed: "config-changed"')
    const failedRuns = count(hooks(dir), 'config-changed')
    ok(home, 'resolved', '--no-retry', 'rc/0')
    await untilUnit(reader, 'the unit to leave error', s => s.workload !== 'error')
    assert.is(count(hooks(dir), 'config-changed'), failedRuns, '--no-retry does not run the hook')
    unlinkSync(join(dir, 'fail-config-changed'))

    // update-status every 5 s, applied at once by the running agent.
    ok(home, 'model-config', 'update-status-hook-interval=5s')
    const before = count(hooks(dir), 'update-status')
    const first = await until('a first update-status', () => count(hooks(dir), 'update-status'), n => n > before)
    const t0 = performance.now()
    await until('two more update-status', () => count(hooks(dir), 'update-status'), n => n >= first + 2)
    const elapsed = (performance.now() - t0) / 1000
    assert.ok(elapsed >= 6 && elapsed <= 90, `two intervals took ${elapsed.toFixed(1)} s (expected about 10 s)`)
    ok(home, 'model-config', '--reset', 'update-status-hook-interval')

    // The machine's boot clock: it booted during this test, not with the host.
    const hostClockWhy = timeNamespaceUnavailable()
    const booted = machineBoot(home)
    if (hostClockWhy === undefined) {
      assert.ok(booted.epoch >= startedAt - 2, `machine booted at ${booted.epoch}, before this test began (${startedAt}): the host's uptime`)
    } else {
      const log = readFileSync(join(home, 'controllers', 'local', 'machines', 'machine-0', 'agent.log'), 'utf8')
      assert.ok(log.includes(hostClockNotice('0', { [hostClockEnvName]: hostClockWhy })!), 'the agent says why it has the host\'s clock')
    }

    // juju-reboot (after the hook): the hook goes on and commits, the machine agent
    // restarts, the workload dies with it, and start runs again.
    const workload = Number(readFileSync(join(dir, 'workload.pid'), 'utf8'))
    assert.ok(processAlive(workload))
    let mark = hooks(dir).length
    writeFileSync(join(dir, 'reboot-after'), '')
    const rebootAt = Date.now() / 1000
    ok(home, 'config', 'rc', 'x=2')
    await until('start after the reboot', () => hooks(dir).slice(mark), h => h.includes('start'))
    assert.equal(hooks(dir).slice(mark), ['config-changed', 'config-changed went on', 'start'])
    // As test_hookcmds asserts against Juju: the derived boot epoch is strictly later.
    const rebooted = machineBoot(home)
    if (hostClockWhy === undefined) {
      assert.ok(Math.trunc(rebooted.epoch) > Math.trunc(booted.epoch), `boot epoch ${booted.epoch} → ${rebooted.epoch} on juju-reboot`)
      assert.ok(rebooted.epoch >= rebootAt - 1, `the machine booted again after juju-reboot (${rebootAt}), at ${rebooted.epoch}`)
    }
    await until('the old workload to die with the machine', () => processAlive(workload), alive => !alive)
    await untilUnit(reader, 'the unit idle again', s => s.agent === 'idle')

    // juju-reboot --now: the hook is killed at once and runs again after the reboot, then start.
    mark = hooks(dir).length
    writeFileSync(join(dir, 'reboot-now'), '')
    ok(home, 'config', 'rc', 'x=3')
    await until('start after the --now reboot', () => hooks(dir).slice(mark), h => h.includes('start'))
    assert.equal(hooks(dir).slice(mark), ['config-changed', 'config-changed', 'start'], 'killed, re-run after the reboot, then start')

    // A kill -9 of the machine agent (its watchdog starts it again) is no reboot: the boot epoch holds, uptime goes on.
    await untilUnit(reader, 'the unit idle again', s => s.agent === 'idle')
    const beforeCrash = machineBoot(home)
    if (hostClockWhy === undefined) assert.ok(Math.trunc(beforeCrash.epoch) > Math.trunc(rebooted.epoch), `boot epoch ${rebooted.epoch} → ${beforeCrash.epoch} on juju-reboot --now`)
    const crashed = agentPid(home)
    process.kill(crashed, 'SIGKILL')
    await until('the watchdog to start the agent again', () => agentPid(home), pid => pid !== crashed && processAlive(pid))
    const afterCrash = machineBoot(home)
    assert.ok(Math.abs(afterCrash.epoch - beforeCrash.epoch) <= 1, `boot epoch ${beforeCrash.epoch} → ${afterCrash.epoch} on a crash restart`)
    assert.ok(afterCrash.uptime > beforeCrash.uptime, 'uptime goes on counting')
    assert.is(count(hooks(dir).slice(mark), 'start'), 1, 'no start hook: the machine did not reboot')
  } finally {
    await reader?.close()
    cantrip(home, ['destroy-controller', 'local', '--no-prompt'])
    if (existsSync(join(dir, 'workload.pid'))) {
      try { process.kill(Number(readFileSync(join(dir, 'workload.pid'), 'utf8')), 'SIGKILL') } catch { /* gone */ }
    }
    removeHome(home)
  }
})

test.run()
