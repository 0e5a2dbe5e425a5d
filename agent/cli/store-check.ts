/**
 * Before a command writes to the client's store (`$CANTRIP_HOME`: controllers.yaml and
 * the controllers' directories) it checks that it can, so a read-only or unwritable home
 * is one line naming the path and the cause before anything is started or created —
 * not a raw Node error about a mkdir after a controller is already running.
 */
import { accessSync, constants, existsSync } from 'node:fs'
import { dirname } from 'node:path'
import { CantripError } from '../../runtime/errors.ts'
import { cantripHome } from './cli-home.ts'

/** The commands that write the store (controllers.yaml, a controller's directory): checked before they run. */
export const storeWritingCommands: ReadonlySet<string> = new Set(['bootstrap', 'add-model', 'switch', 'enable-ha', 'destroy-controller', 'destroy-model'])

export class StoreNotWritableError extends CantripError {
  override name = 'StoreNotWritableError'
}

/** Throws `cannot write to "<home>": read-only file system` (or the cause) when the store cannot be written. */
export function checkStoreWritable (home = cantripHome()): void {
  // The home may not exist yet: what matters is the nearest directory that does.
  let dir = home
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir)
  try {
    accessSync(dir, constants.W_OK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const cause = code === 'EROFS' ? 'read-only file system' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : String(code ?? error)
    throw new StoreNotWritableError(`cannot write to ${JSON.stringify(home)}: ${cause}`, { cause: error })
  }
}
