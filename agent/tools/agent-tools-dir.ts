/**
 * A machine's agent binaries on disk, as Juju keeps them (juju/juju agent/tools/
 * toolsdir.go: one directory per version, a symlink naming the one the agent runs,
 * changed only once the new one is whole):
 *
 *   <data dir>/tools/<version>/     an unpacked agent bundle (agent-bundle.ts)
 *   <data dir>/tools/current        symlink to the version the launcher starts
 *   <data dir>/tools/upgrade.json   {from, to, starts}: a switch awaiting the new agent's health check
 *   <data dir>/tools/upgrade-failed.json  {version, error}: why the last upgrade was undone
 *
 * Every change is a rename: a version directory appears whole (the unpacker writes a
 * temporary directory and renames it), and `current` is replaced by renaming a fresh
 * link over it, so a kill -9 at any instant leaves `current` naming the old version or
 * the new one, never neither. The launcher (agent/cantripd-stub.ts) counts the new
 * agent's starts; one that has not reported itself healthy after
 * limits.agentUpgradeStartsMax starts is rolled back to `from`.
 *
 * Only node: modules here: the launcher imports this file and must stay small.
 */
import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export interface UpgradeRecord {
  readonly from: string
  readonly to: string
  /** How many times the launcher has started `to` since the switch. */
  readonly starts: number
}

export interface UpgradeFailure {
  readonly version: string
  readonly error: string
}

export function toolsDir (dataDir: string): string {
  return join(dataDir, 'tools')
}

export function versionDir (dataDir: string, version: string): string {
  return join(toolsDir(dataDir), version)
}

/** The version `current` names, or undefined when the machine runs its installation's own agent. */
export function currentVersion (dataDir: string): string | undefined {
  try {
    return readlinkSync(join(toolsDir(dataDir), 'current'))
  } catch {
    return undefined
  }
}

/** Whether `version` is unpacked whole (its package.json says that version). */
export function hasVersion (dataDir: string, version: string): boolean {
  try {
    const manifest = JSON.parse(readFileSync(join(versionDir(dataDir, version), 'package.json'), 'utf8')) as { version?: unknown }
    return manifest.version === version && existsSync(join(versionDir(dataDir, version), 'dist', 'cantripd.mjs'))
  } catch {
    return false
  }
}

/** The agent program of the version `current` names, if it is there whole. */
export function currentProgram (dataDir: string): string | undefined {
  const version = currentVersion(dataDir)
  return version !== undefined && hasVersion(dataDir, version) ? join(versionDir(dataDir, version), 'dist', 'cantripd.mjs') : undefined
}

/** Points `current` at `version` in one rename, made durable. */
export function switchCurrent (dataDir: string, version: string): void {
  const dir = toolsDir(dataDir)
  mkdirSync(dir, { recursive: true })
  const temporary = join(dir, `.current-${randomBytes(6).toString('hex')}`)
  symlinkSync(version, temporary)
  try {
    renameSync(temporary, join(dir, 'current'))
  } catch (error) {
    rmSync(temporary, { force: true })
    throw error
  }
  syncDirectory(dir)
}

export function readUpgrade (dataDir: string): UpgradeRecord | undefined {
  const value = readJson(join(toolsDir(dataDir), 'upgrade.json'))
  if (value === undefined || typeof value.from !== 'string' || typeof value.to !== 'string' || typeof value.starts !== 'number') return undefined
  return { from: value.from, to: value.to, starts: value.starts }
}

export function readUpgradeFailure (dataDir: string): UpgradeFailure | undefined {
  const value = readJson(join(toolsDir(dataDir), 'upgrade-failed.json'))
  if (value === undefined || typeof value.version !== 'string' || typeof value.error !== 'string') return undefined
  return { version: value.version, error: value.error }
}

/**
 * Switches to `to` (unpacked already), recording the switch first so the launcher can
 * undo it: a crash between the two leaves the record with `current` still at `from`,
 * which the launcher drops (the upgrade is tried again).
 */
export function beginUpgrade (dataDir: string, from: string, to: string): void {
  writeDurably(join(toolsDir(dataDir), 'upgrade.json'), { from, to, starts: 0 })
  switchCurrent(dataDir, to)
}

/** The new agent is healthy: the switch stands and no earlier failure is reported any more. */
export function completeUpgrade (dataDir: string): void {
  rmSync(join(toolsDir(dataDir), 'upgrade.json'), { force: true })
  rmSync(join(toolsDir(dataDir), 'upgrade-failed.json'), { force: true })
}

/** Records why an upgrade to `version` failed, for the agent to report (status shows it). */
export function recordUpgradeFailure (dataDir: string, version: string, error: string): void {
  writeDurably(join(toolsDir(dataDir), 'upgrade-failed.json'), { version, error })
}

/**
 * The launcher's step before it starts an agent: counts a start of a pending switch, or
 * undoes one whose agent did not become healthy within `startsMax` starts. Returns the
 * program to run (undefined: the installation's own).
 */
export function prepareLaunch (dataDir: string, startsMax: number): string | undefined {
  const upgrade = readUpgrade(dataDir)
  if (upgrade !== undefined) {
    const current = currentVersion(dataDir)
    if (current !== upgrade.to) {
      // The switch never happened (a crash between the record and the rename).
      rmSync(join(toolsDir(dataDir), 'upgrade.json'), { force: true })
    } else if (upgrade.starts >= startsMax || !hasVersion(dataDir, upgrade.to)) {
      abandonUpgrade(dataDir, `agent ${upgrade.to} did not pass its health check in ${upgrade.starts} starts; back on ${upgrade.from}`)
    } else {
      writeDurably(join(toolsDir(dataDir), 'upgrade.json'), { ...upgrade, starts: upgrade.starts + 1 })
    }
  }
  return currentProgram(dataDir)
}

/**
 * Undoes a pending switch: `current` back to `from` (or removed, when `from` is the
 * installation's own agent), why recorded, the switch forgotten. Nothing without one.
 */
export function abandonUpgrade (dataDir: string, why: string): void {
  const upgrade = readUpgrade(dataDir)
  if (upgrade === undefined) return
  if (hasVersion(dataDir, upgrade.from)) switchCurrent(dataDir, upgrade.from)
  else rmSync(join(toolsDir(dataDir), 'current'), { force: true })
  recordUpgradeFailure(dataDir, upgrade.to, why)
  rmSync(join(toolsDir(dataDir), 'upgrade.json'), { force: true })
}

function readJson (file: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

/** Written beside, synced, renamed over: a reader sees the old file or the new one. */
function writeDurably (file: string, value: object): void {
  const dir = join(file, '..')
  mkdirSync(dir, { recursive: true })
  const temporary = `${file}.tmp-${randomBytes(6).toString('hex')}`
  const fd = openSync(temporary, 'w', 0o644)
  try {
    writeFileSync(fd, `${JSON.stringify(value)}\n`)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(temporary, file)
  syncDirectory(dir)
}

function syncDirectory (dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
