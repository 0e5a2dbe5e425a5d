/**
 * The identity of a machine's boot, for Juju's reboot detection (its uniter runs `start`
 * again when the machine booted since the unit's agent last ran): the kernel's boot id
 * (`/proc/sys/kernel/random/boot_id`, new on every real boot) and the count of reboots
 * the local provider simulated for this machine (`<data dir>/boot-count`). On the local
 * provider a machine is a process on this host, so `juju-reboot` restarts the machine
 * agent and counts one boot more; a real reboot of the host changes the kernel's id.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const kernelBootIdFile = '/proc/sys/kernel/random/boot_id'

function readText (file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim()
  } catch {
    return undefined
  }
}

function bootCountFile (dataDir: string): string {
  return join(dataDir, 'boot-count')
}

function bootCount (dataDir: string): number {
  const count = Number(readText(bootCountFile(dataDir)) ?? '0')
  return Number.isSafeInteger(count) && count >= 0 ? count : 0
}

/** This boot's id: the kernel's (or `no-kernel-boot-id` without /proc) and the simulated reboots. */
export function machineBootId (dataDir: string): string {
  return `${readText(kernelBootIdFile) ?? 'no-kernel-boot-id'}/${bootCount(dataDir)}`
}

/** Counts one simulated reboot: the next start of the agent is a new boot. */
export function countReboot (dataDir: string): void {
  writeFileSync(bootCountFile(dataDir), `${bootCount(dataDir) + 1}\n`)
}
