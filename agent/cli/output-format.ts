/**
 * `--format` for the commands about the controllers themselves (controllers,
 * show-controller, members, version): a plain column table, YAML or JSON, refused before
 * anything is sent when it is none of the formats a command offers.
 */
import { stringify } from 'yaml'
import { InvalidInputError } from '../../runtime/errors.ts'
import { plainTable } from './plain-table.ts'

export type OutputFormat = 'tabular' | 'yaml' | 'json'

export function parseFormat (component: string, value: string, allowed: readonly OutputFormat[]): OutputFormat {
  if (!allowed.includes(value as OutputFormat)) throw new InvalidInputError(component, `--format ${allowed.join(', ')}`, value)
  return value as OutputFormat
}

/** A document as YAML or JSON (one line, for scripts). */
export function formatDocument (format: 'yaml' | 'json', value: unknown): string {
  return format === 'json' ? JSON.stringify(value) : stringify(value).trimEnd()
}

/** Rows under a header, each column as wide as its widest cell, two spaces apart (plain-table.ts). */
export function formatTable (header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  return plainTable([header, ...rows.map(row => header.map((_, i) => row[i] ?? ''))])
}
