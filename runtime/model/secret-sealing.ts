import type { ModelCommand } from './model-types.ts'
import type { SecretContentField, SecretHookChanges, SecretUpsert } from './secret-types.ts'

/**
 * Sealing a secret's content before its command is proposed (DESIGN.md §10): only the
 * controllers hold the key, so a controller seals plain content as a command arrives and
 * opens a revision only to answer a unit entitled to read it. The model never sees
 * plain content (runtime/model/apply/secret-records.ts refuses it). The real sealer is
 * AES-256-GCM with the key in the controller's data directory (agent/secret-key-store.ts);
 * the simulator and in-memory test groups use `encodingSealer`, which only encodes.
 */
export interface SecretSealer {
  seal (content: Readonly<Record<string, string>>): string
  /** Throws when the sealed text is not this sealer's (wrong key, damaged). */
  open (sealed: string): Record<string, string>
}

const encodedPrefix = 'enc:'

/** Encodes without a key: for the simulator and in-memory groups, never for a real controller. */
export const encodingSealer: SecretSealer = {
  seal: content => encodedPrefix + JSON.stringify(content),
  open: sealed => {
    if (!sealed.startsWith(encodedPrefix)) throw new Error('secret content was sealed with another key')
    return JSON.parse(sealed.slice(encodedPrefix.length)) as Record<string, string>
  }
}

/**
 * Plain content sealed. Content that is not a map of strings becomes an empty sealed
 * value, which the model refuses: whatever arrived, plain text never reaches the log.
 */
function sealField (field: SecretContentField, sealer: SecretSealer): SecretContentField {
  if (typeof field !== 'object' || field === null || !('plain' in field)) return field
  const plain: unknown = field.plain
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain) || !Object.values(plain).every(v => typeof v === 'string')) return { sealed: '' }
  return { sealed: sealer.seal(plain as Record<string, string>) }
}

function sealUpsert<T extends SecretUpsert> (change: T, sealer: SecretSealer): T {
  if (typeof change !== 'object' || change === null || change.content === undefined) return change
  return { ...change, content: sealField(change.content, sealer) }
}

/** Lists that are not lists are left for the model to refuse: they carry no content it would keep. */
function sealHookChanges (changes: SecretHookChanges, sealer: SecretSealer): SecretHookChanges {
  if (typeof changes !== 'object' || changes === null) return changes
  return {
    ...changes,
    ...(Array.isArray(changes.creates) ? { creates: changes.creates.map(change => sealUpsert(change, sealer)) } : {}),
    ...(Array.isArray(changes.updates) ? { updates: changes.updates.map(change => sealUpsert(change, sealer)) } : {})
  }
}

/** The command with any plain secret content sealed; every other command as it is. */
export function sealCommand (command: ModelCommand, sealer: SecretSealer): ModelCommand {
  switch (command.type) {
    case 'commit-hook-changes':
      return command.secrets === undefined ? command : { ...command, secrets: sealHookChanges(command.secrets, sealer) }
    case 'add-secret':
      return { ...command, content: sealField(command.content, sealer) }
    case 'update-secret':
      return { ...command, secret: sealUpsert(command.secret, sealer) }
    default:
      return command
  }
}
