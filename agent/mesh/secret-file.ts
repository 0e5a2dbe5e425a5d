/**
 * Writes a small secret (a peer key, a network key) so that only its owner can read it
 * and a crash never leaves a torn file: the bytes go to a temporary file created with
 * mode 0600 beside the target, are synced, and replace the target by rename.
 */
import { randomBytes } from 'node:crypto'
import { open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { StorageFailedError } from '../../runtime/errors.ts'

export async function writeSecretFile (path: string, bytes: Uint8Array, component: string): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    // 'wx': never follow or reuse a file someone else put there.
    const file = await open(temporary, 'wx', 0o600)
    try {
      await file.writeFile(bytes)
      await file.sync()
    } finally {
      await file.close()
    }
    await rename(temporary, path)
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {})
    throw new StorageFailedError(component, `write ${JSON.stringify(path)}`, (error as Error).message, { cause: error })
  }
  // Make the rename itself durable; a directory that cannot be synced (some file
  // systems) still has the file, so that failure is not fatal.
  try {
    const directory = await open(dirname(path), 'r')
    try { await directory.sync() } finally { await directory.close() }
  } catch {}
}
