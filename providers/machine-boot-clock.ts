/**
 * A local machine's own boot clock, as lxcfs gives each LXD container one: `/proc/uptime`
 * inside the machine reads the time since the machine booted, not since this host did, so
 * it restarts near 0 when the machine reboots (`juju-reboot`, or a reboot of the host)
 * and keeps counting through a crash restart of its agent. Charms rely on it: ops'
 * test_hookcmds derives the machine's boot epoch as `time.time() - /proc/uptime` and
 * expects it to move forward after `juju-reboot`
 * (canonical/operator test/integration/test_hookcmds.py, test_juju_reboot_queues_reboot).
 *
 * The machine's boot epoch is data kept in its directory; at each start of its agent the
 * launcher decides here whether this start is a new boot and which CLOCK_BOOTTIME offset
 * (whole seconds: what a Linux time namespace takes) makes the machine's uptime read
 * `now - bootEpoch`. CLOCK_MONOTONIC is never offset: Node's timers run on it.
 *
 * Pure: the readings come in, the decision goes out (agent/time-namespace-boot-clock.ts
 * reads the host and enters the namespace).
 */

/** What a machine keeps of its boot: which boot it was (agent/machine-boot.ts's id) and when, on the wall clock. */
export interface MachineBootRecord {
  /** The machine's boot identity: the kernel's boot id and the count of `juju-reboot`s. */
  readonly bootId: string
  /** When the machine booted, in ms since the Unix epoch. */
  readonly epochMs: number
}

/** The host's clocks and the machine's boot identity, read together at a start of the agent. */
export interface HostBootReading {
  /** The wall clock, ms since the Unix epoch. */
  readonly nowMs: number
  /** The host's own CLOCK_BOOTTIME (its /proc/uptime, less any offset the reader itself runs under), in ms. */
  readonly hostUptimeMs: number
  /** The machine's boot identity now. */
  readonly bootId: string
}

/** Why this start has the boot epoch it has. */
export type MachineBootKind = 'first boot' | 'new boot' | 'same boot'

export interface MachineBootDecision {
  /** What the machine keeps from now on (unchanged on a crash restart). */
  readonly record: MachineBootRecord
  readonly kind: MachineBootKind
  /** The CLOCK_BOOTTIME offset, whole seconds, never making the machine's boottime negative. */
  readonly boottimeOffsetSeconds: number
}

const msPerSecond = 1000

/**
 * The decision at one start. Same boot identity as kept: a crash restart or `start-agent`,
 * the epoch stays. Otherwise (no record yet, a `juju-reboot`, or the host rebooted) the
 * machine boots now. A new epoch is put a whole number of seconds after the host's boot,
 * so the whole-second offset shows it exactly and later restarts round to the same offset.
 */
export function decideMachineBoot (kept: MachineBootRecord | undefined, host: HostBootReading): MachineBootDecision {
  const hostBootMs = host.nowMs - host.hostUptimeMs
  const kind: MachineBootKind = kept === undefined ? 'first boot' : kept.bootId === host.bootId ? 'same boot' : 'new boot'
  const epochMs = kind === 'same boot' ? kept!.epochMs : hostBootMs + Math.floor(host.hostUptimeMs / msPerSecond) * msPerSecond
  return { record: { bootId: host.bootId, epochMs }, kind, boottimeOffsetSeconds: boottimeOffsetSeconds(epochMs, host) }
}

/**
 * The offset that makes the machine's uptime `now - epoch`: the host's boot minus the
 * machine's, rounded to whole seconds. An epoch in the future (the wall clock set back)
 * cannot give a negative uptime: the kernel refuses a namespace whose boottime would be
 * below 0, so the offset stops at minus the host's whole uptime.
 */
export function boottimeOffsetSeconds (epochMs: number, host: Pick<HostBootReading, 'nowMs' | 'hostUptimeMs'>): number {
  const hostBootMs = host.nowMs - host.hostUptimeMs
  const offset = Math.round((hostBootMs - epochMs) / msPerSecond)
  return Math.max(offset, -Math.floor(host.hostUptimeMs / msPerSecond))
}

/** The record as kept on disk: one JSON line. */
export function formatMachineBootRecord (record: MachineBootRecord): string {
  return `${JSON.stringify({ bootId: record.bootId, epochMs: record.epochMs })}\n`
}

/** The record back from its text, or why it is not one (the caller says so and starts a new boot). */
export function parseMachineBootRecord (text: string): MachineBootRecord | { error: string } {
  const expected = 'expected {"bootId": string, "epochMs": a whole number of ms}'
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { error: `${expected}, got ${quoted(text)}` }
  }
  const v = typeof value === 'object' && value !== null ? value as Record<string, unknown> : {}
  if (typeof v.bootId !== 'string' || v.bootId === '' || typeof v.epochMs !== 'number' || !Number.isFinite(v.epochMs) || v.epochMs < 0) {
    return { error: `${expected}, got ${quoted(text)}` }
  }
  return { bootId: v.bootId, epochMs: v.epochMs }
}

function quoted (text: string): string {
  const line = text.trim()
  return JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line)
}
