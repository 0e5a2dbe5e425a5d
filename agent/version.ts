/**
 * The one source of the cantrip version: package.json's `version`, read once. The CLI
 * prints it as the client version; every cantripd reports it (in its presence heartbeat
 * and in `controller-status`) so the CLI can warn about a skew between client, controllers
 * and agents.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { packageRoot } from './package-root.ts'

const packageJson = join(packageRoot, 'package.json')

function readPackageVersion (): string {
  const value = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: unknown }).version
  if (typeof value !== 'string' || value === '') throw new Error(`cantrip: expected a "version" string in ${packageJson}, got ${JSON.stringify(value)}`)
  return value
}

export const cantripVersion = readPackageVersion()
