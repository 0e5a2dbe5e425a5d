/**
 * The host's Juju base (juju/juju core/base: `<os>@<channel>`, e.g. `ubuntu@22.04`),
 * read from /etc/os-release's ID and VERSION_ID as Juju's machine agent reads its own
 * host's OS. Gathered here at the agent's edge and reported with its version, so
 * `status` can show a local machine's Base; undefined when the file says neither.
 */
import { readFileSync } from 'node:fs'

export function parseOsRelease (text: string): string | undefined {
  const fields = new Map<string, string>()
  for (const line of text.split('\n')) {
    const match = /^([A-Z_]+)=(?:"([^"]*)"|'([^']*)'|(\S*))\s*$/.exec(line.trim())
    if (match !== null) fields.set(match[1]!, match[2] ?? match[3] ?? match[4] ?? '')
  }
  const id = fields.get('ID')?.toLowerCase()
  const version = fields.get('VERSION_ID')
  if (id === undefined || id === '' || version === undefined || version === '') return undefined
  const base = `${id}@${version}`
  return /^[a-z][a-z0-9-]{0,31}@[0-9A-Za-z][0-9A-Za-z._/-]{0,31}$/.test(base) ? base : undefined
}

export function hostBase (path = '/etc/os-release'): string | undefined {
  try {
    return parseOsRelease(readFileSync(path, 'utf8'))
  } catch {
    return undefined
  }
}
