/**
 * A local machine's own boot clock (providers/machine-boot-clock.ts,
 * agent/time-namespace-boot-clock.ts): the decision at each start of its agent (first
 * boot, same boot after a crash, a new boot after juju-reboot or a host reboot), the
 * whole-second CLOCK_BOOTTIME offset that makes /proc/uptime read `now - bootEpoch`, the
 * record kept in the machine's directory and refused in one line when it is not one, the
 * command the local provider runs (the watchdog's restarts included), the host's clock
 * with the reason where no namespace can be made, and, where this host can make time
 * namespaces, a real one.
 *
 * What is matched: lxcfs's per-container /proc/uptime on Juju's LXD machines, which
 * canonical/operator's test/charms/test_hookcmds (`_on_test_reboot_marker`: boot epoch =
 * time.time() - /proc/uptime) and test/integration/test_hookcmds.py
 * (test_juju_reboot_queues_reboot: the epoch strictly later after juju-reboot) rely on;
 * the boot identity is Juju's reboot detection's (worker/uniter/reboot/resolver.go), as
 * agent/machine-boot.ts keeps it.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { bootClockFileName, HostBootClock, hostClockEnvName, hostClockNotice, readHostUptimeMs, TimeNamespaceBootClock, timeNamespaceUnavailable } from '../agent/time-namespace-boot-clock.ts'
import { LocalProvider, type LocalMachineClock } from '../providers/local-provider.ts'
import { boottimeOffsetSeconds, decideMachineBoot, formatMachineBootRecord, parseMachineBootRecord, type HostBootReading } from '../providers/machine-boot-clock.ts'
import type { InstanceSpec } from '../providers/provider-contract.ts'
import { createMemoryLogger, type LogRecord } from '../runtime/logger.ts'
import { SimClock } from '../sim/sim-clock.ts'
import { SimFileSystem } from '../sim/sim-file-system.ts'
import { SimProcessRunner } from '../sim/sim-process-runner.ts'
import { flush, settle } from './support/sim-settle.ts'

/** The machine's uptime in ms that an offset gives, as the kernel adds it to the host's boottime. */
const machineUptimeMs = (host: HostBootReading, offsetSeconds: number): number => host.hostUptimeMs + offsetSeconds * 1000
/** What the charm derives: `time.time() - /proc/uptime`, in ms. */
const derivedEpochMs = (host: HostBootReading, offsetSeconds: number): number => host.nowMs - machineUptimeMs(host, offsetSeconds)

// The host booted at 1,700,000,000.250 s; readings at various later moments.
const hostBootMs = 1_700_000_000_250
const at = (uptimeMs: number, bootId = 'k1/0'): HostBootReading => ({ nowMs: hostBootMs + uptimeMs, hostUptimeMs: uptimeMs, bootId })

test('first boot: the machine boots now, its uptime under a second, its epoch a whole number of seconds after the host\'s', () => {
  const host = at(64_524_620)
  const d = decideMachineBoot(undefined, host)
  assert.is(d.kind, 'first boot')
  assert.is(d.boottimeOffsetSeconds, -64_524)
  assert.equal(d.record, { bootId: 'k1/0', epochMs: hostBootMs + 64_524_000 })
  assert.is(machineUptimeMs(host, d.boottimeOffsetSeconds), 620)
  assert.is(derivedEpochMs(host, d.boottimeOffsetSeconds), d.record.epochMs)
})

test('same boot (a crash restart, start-agent): the epoch stays, the offset is the same, the derived epoch does not move', () => {
  const first = decideMachineBoot(undefined, at(64_524_620))
  // 40 s later, and read with a few ms between the wall clock and /proc/uptime.
  const later: HostBootReading = { ...at(64_564_620), nowMs: hostBootMs + 64_564_627 }
  const again = decideMachineBoot(first.record, later)
  assert.is(again.kind, 'same boot')
  assert.equal(again.record, first.record)
  assert.is(again.boottimeOffsetSeconds, first.boottimeOffsetSeconds)
  assert.is(machineUptimeMs(later, again.boottimeOffsetSeconds), 40_620)
  assert.ok(Math.abs(derivedEpochMs(later, again.boottimeOffsetSeconds) - first.record.epochMs) <= 10)
})

test('juju-reboot (one reboot more in the boot identity): a new epoch, later; uptime restarts near 0', () => {
  const first = decideMachineBoot(undefined, at(64_524_620))
  const host = at(64_600_130, 'k1/1')
  const d = decideMachineBoot(first.record, host)
  assert.is(d.kind, 'new boot')
  assert.equal(d.record, { bootId: 'k1/1', epochMs: hostBootMs + 64_600_000 })
  assert.ok(d.record.epochMs > first.record.epochMs)
  assert.is(machineUptimeMs(host, d.boottimeOffsetSeconds), 130)
})

test('a host reboot (another kernel boot id): a new boot of the machine too', () => {
  const first = decideMachineBoot(undefined, at(64_524_620))
  const rebootedAtMs = hostBootMs + 100_000_000
  const host: HostBootReading = { nowMs: rebootedAtMs + 35_400, hostUptimeMs: 35_400, bootId: 'k2/0' }
  const d = decideMachineBoot(first.record, host)
  assert.is(d.kind, 'new boot')
  assert.is(d.boottimeOffsetSeconds, -35)
  assert.is(machineUptimeMs(host, d.boottimeOffsetSeconds), 400)
  assert.ok(d.record.epochMs > first.record.epochMs)
})

test('the offset: rounded to whole seconds; never below minus the host\'s whole uptime (the kernel refuses a negative boottime)', () => {
  assert.is(boottimeOffsetSeconds(hostBootMs + 10_000, at(20_000)), -10)
  assert.is(boottimeOffsetSeconds(hostBootMs + 10_400, at(20_000)), -10)
  assert.is(boottimeOffsetSeconds(hostBootMs + 10_600, at(20_000)), -11)
  // An epoch before the host's boot (the host rebooted, the identity somehow the same): uptime above the host's.
  assert.is(boottimeOffsetSeconds(hostBootMs - 5_000, at(20_000)), 5)
  // The wall clock set back below the epoch: uptime stops at 0, not below.
  assert.is(boottimeOffsetSeconds(hostBootMs + 90_000, at(20_700)), -20)
  assert.ok(machineUptimeMs(at(20_700), -20) >= 0)
})

test('the record: kept as one JSON line and read back; anything else is refused in one line saying what was expected', () => {
  const record = { bootId: 'a1b2/3', epochMs: 1_795_706_866_250 }
  assert.is(formatMachineBootRecord(record), '{"bootId":"a1b2/3","epochMs":1795706866250}\n')
  assert.equal(parseMachineBootRecord(formatMachineBootRecord(record)), record)
  assert.equal(parseMachineBootRecord('yesterday\n'), { error: 'expected {"bootId": string, "epochMs": a whole number of ms}, got "yesterday"' })
  assert.equal(parseMachineBootRecord('{"bootId":"x","epochMs":-1}'), { error: 'expected {"bootId": string, "epochMs": a whole number of ms}, got "{\\"bootId\\":\\"x\\",\\"epochMs\\":-1}"' })
  assert.equal(parseMachineBootRecord('{"epochMs":5}'), { error: 'expected {"bootId": string, "epochMs": a whole number of ms}, got "{\\"epochMs\\":5}"' })
})

test('the wrap: unshare with the decided offset, the record kept in the data directory; a bad record is said in one line and the machine boots anew', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-boot-clock-'))
  try {
    const records: LogRecord[] = []
    let host = at(64_524_620)
    const clock = new TimeNamespaceBootClock({ logger: createMemoryLogger('local-provider', records), readHost: () => host })
    const command = { file: '/usr/bin/node', args: ['cantripd-stub.mjs', '--data-dir', dir] }
    assert.equal(clock.wrap(dir, command, 'provider'), {
      file: 'unshare', args: ['--time', '--boottime', '-64524', '--', '/usr/bin/node', 'cantripd-stub.mjs', '--data-dir', dir], env: {}
    })
    assert.is(readFileSync(join(dir, bootClockFileName), 'utf8'), `{"bootId":"k1/0","epochMs":${hostBootMs + 64_524_000}}\n`)
    host = at(64_564_630)
    assert.is(clock.wrap(dir, command, 'provider').args[2], '-64524', 'same boot, same offset')
    host = at(64_600_130, 'k1/1')
    assert.is(clock.wrap(dir, command, 'provider').args[2], '-64600', 'juju-reboot: uptime from 0')
    writeFileSync(join(dir, bootClockFileName), 'garbage\n')
    host = at(64_700_000, 'k1/1')
    assert.is(clock.wrap(dir, command, 'provider').args[2], '-64700')
    assert.equal(records.filter(r => r.level === 'warning').map(r => r.message),
      [`machine boot clock: ${join(dir, bootClockFileName)}: expected {"bootId": string, "epochMs": a whole number of ms}, got "garbage"; the machine boots anew`])
    // A service its init restarts keeps the host's clock, and is told why.
    assert.equal(clock.wrap(dir, command, 'init'), {
      file: '/usr/bin/node', args: command.args,
      env: { [hostClockEnvName]: 'its service manager starts it again with a fixed command line, which no boot clock set at install could follow' }
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('no time namespaces: the command as it was, and the agent says why in one line', () => {
  const clock = new HostBootClock('making a time namespace needs root (running as uid 1000)')
  const wrapped = clock.wrap('/d', { file: 'node', args: ['stub.mjs'] }, 'provider')
  assert.equal(wrapped, { file: 'node', args: ['stub.mjs'], env: { CANTRIP_MACHINE_HOST_CLOCK: 'making a time namespace needs root (running as uid 1000)' } })
  assert.is(hostClockNotice('3', wrapped.env),
    'machine 3: /proc/uptime is this host\'s, not the machine\'s own, so it does not restart on juju-reboot: making a time namespace needs root (running as uid 1000)')
  assert.is(hostClockNotice('3', {}), undefined, 'its own clock (or a real host): nothing to say')
})

test('the local provider runs every start through the boot clock: the first, and the watchdog\'s restart after a crash', async () => {
  const clock = new SimClock({ startMs: 1_000_000 })
  const files = new SimFileSystem()
  const started: string[] = []
  const processes = new SimProcessRunner(clock, () => { throw new Error('no plain processes here') }, {
    files,
    detachedScript: spec => { started.push(`${spec.command} ${spec.args.join(' ')} ${spec.env['X'] ?? ''}`.trim()); return { durationMs: 0, hang: true } }
  })
  const wraps: string[] = []
  const bootClock: LocalMachineClock = {
    wrap: (dataDir, command, restartedBy) => {
      wraps.push(`${dataDir} ${restartedBy}`)
      return { file: 'clocked', args: [command.file, ...command.args], env: { X: `start-${wraps.length}` } }
    }
  }
  const provider = new LocalProvider({
    home: '/srv/machines',
    logger: createMemoryLogger('local-provider', []),
    command: { file: 'node', args: (_bootstrap, dataDir) => ['stub.mjs', '--data-dir', dataDir] },
    processes, files, clock, bootClock,
    watchIntervalMs: 1_000, restartDelayMs: 1_000, startCheckMs: 500
  })
  const spec: InstanceSpec = { machineId: '3', token: 't', bootstrap: new TextEncoder().encode('ok'), constraints: {} }
  await settle(clock, provider.startInstance(spec), 50, 10_000)
  provider.start()
  processes.crash(processes.detachedPids()[0]!)
  for (let i = 0; i < 40 && started.length < 2; i++) { clock.advance(100); await flush() }
  await provider.stop()
  assert.equal(wraps, ['/srv/machines/machine-3/agent provider', '/srv/machines/machine-3/agent provider'])
  assert.equal(started, [
    'clocked node stub.mjs --data-dir /srv/machines/machine-3/agent start-1',
    'clocked node stub.mjs --data-dir /srv/machines/machine-3/agent start-2'
  ])
})

const unavailable = timeNamespaceUnavailable()
test(`a real time namespace, as the agent is started in it (${unavailable === undefined ? 'available here' : `skipped: ${unavailable}`})`, () => {
  if (unavailable !== undefined) return
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-boot-clock-'))
  try {
    const clock = new TimeNamespaceBootClock({ logger: createMemoryLogger('t', []), readHost: () => ({ nowMs: Date.now(), hostUptimeMs: readHostUptimeMs(), bootId: 'b/0' }) })
    const uptimeIn = (): number => {
      const command = clock.wrap(dir, { file: 'cat', args: ['/proc/uptime'] }, 'provider')
      return Number(execFileSync(command.file, command.args, { encoding: 'utf8' }).split(' ')[0])
    }
    // A first boot reads under a second (plus however long this busy machine took to run cat).
    assert.ok(uptimeIn() < 30, 'a machine that just booted')
    // A machine that booted 1000 s ago (as kept), on the same boot: its uptime says so.
    const epochMs = Date.now() - 1_000_000
    writeFileSync(join(dir, bootClockFileName), formatMachineBootRecord({ bootId: 'b/0', epochMs }))
    const uptime = uptimeIn()
    assert.ok(uptime >= 999 && uptime < 1030, `uptime ${uptime} s, expected about 1000 s`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
