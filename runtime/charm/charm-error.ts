import { CantripError, describeValue } from '../errors.ts'

/**
 * Errors about charm files and charm archives. Each message is one line that names the
 * charm, the file, the field path (where there is one), what was expected and what
 * arrived, so an author can fix the charm from the message alone:
 *
 *   charm "web": metadata.yaml: field "requires.db.scope": expected "global" or "container", got "galaxy"
 */

/** A charm file that does not follow the rules of juju-semantics.md §7. */
export class InvalidCharmError extends CantripError {
  override name = 'InvalidCharmError'
  readonly charm: string
  readonly file: string
  readonly field: string | undefined

  /** `got` is already rendered (see `gotValue`), so callers can say "none" or "an empty file". */
  constructor (charm: string, file: string, field: string | undefined, expected: string, got: string, options?: { cause?: unknown }) {
    const where = field === undefined ? '' : ` field ${JSON.stringify(field)}:`
    super(oneLine(`charm ${JSON.stringify(charm)}: ${file}:${where} expected ${expected}, got ${got}`), options)
    this.charm = charm
    this.file = file
    this.field = field
  }
}

/** The charm directory or its metadata.yaml is not there (Juju: "charm missing from disk"). */
export class CharmNotFoundError extends CantripError {
  override name = 'CharmNotFoundError'
  constructor (dir: string, detail: string, options?: { cause?: unknown }) {
    super(oneLine(`charm missing from disk: ${JSON.stringify(dir)} ${detail}`), options)
  }
}

/** A charm directory that cannot be packed, or archive bytes that must not be unpacked. */
export class InvalidCharmArchiveError extends CantripError {
  override name = 'InvalidCharmArchiveError'
  readonly entry: string | undefined

  constructor (subject: string, entry: string | undefined, expected: string, got: string, options?: { cause?: unknown }) {
    const where = entry === undefined ? '' : ` entry ${JSON.stringify(entry)}:`
    super(oneLine(`${subject}:${where} expected ${expected}, got ${got}`), options)
    this.entry = entry
  }
}

/** What arrived, for the "got" half of a message: "nothing" for a missing value. */
export function gotValue (value: unknown): string {
  return value === undefined ? 'nothing' : describeValue(value)
}

/**
 * Quoting with JSON.stringify already escapes control characters; this catches anything
 * that slipped through (an fs error text, say) so a message is always one line.
 */
function oneLine (message: string): string {
  return message.replace(/[\u0000-\u001f\u007f]+/g, ' ')
}
