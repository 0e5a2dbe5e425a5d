/**
 * The one source of the cantrip version: package.json's `version`, read once. The CLI
 * prints it as the client version; every cantripd reports it (in its presence heartbeat
 * and in `controller-status`) so the CLI can warn about a skew between client, controllers
 * and agents.
 *
 * Test-only knob: `CANTRIP_TEST_REPORT_VERSION=X` makes a cantripd *report* version X
 * instead (nothing else changes), so tests can provoke the skew warning without building
 * a second release. Never set it outside tests.
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const packageJson = join(dirname(fileURLToPath(import.meta.url)), '..', 'package.json')

function readPackageVersion (): string {
  const value = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: unknown }).version
  if (typeof value !== 'string' || value === '') throw new Error(`cantrip: expected a "version" string in ${packageJson}, got ${JSON.stringify(value)}`)
  return value
}

export const cantripVersion = readPackageVersion()

/** The test knob's environment variable (see above). */
export const reportVersionVariable = 'CANTRIP_TEST_REPORT_VERSION'

/** The version this agent reports to others: the package version unless the test knob overrides it. */
export function reportedVersion (): string {
  const override = process.env[reportVersionVariable]
  return override === undefined || override === '' ? cantripVersion : override
}
