/**
 * Version skew: a controller or agent that reports a version other than this client's
 * gets one warning line on stderr, naming it and both versions. Agents that report no
 * version (older releases) are not warned about: there is nothing to compare.
 */
import { cantripVersion } from '../version.ts'

export interface ReportedVersion {
  /** How the warning names it: `controller c1 (…peer)`, `machine-0 (…peer)`. */
  who: string
  version: string | null
}

export function versionSkewWarnings (reported: readonly ReportedVersion[]): string[] {
  return reported
    .filter(r => r.version !== null && r.version !== cantripVersion)
    .map(r => `WARNING version skew: ${r.who} runs ${r.version}, this client ${cantripVersion}`)
}
