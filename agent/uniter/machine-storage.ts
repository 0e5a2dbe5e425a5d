/**
 * Storage on the local provider: each instance is made under the machine's directory,
 * laid out as Juju lays out its rootfs storage (`<machine dir>/storage/<name>/<n>`,
 * Juju's `/var/lib/juju/storage/<name>/<n>`). A filesystem is a directory; a block device
 * is a sparse file of the requested size at `<name>/<n>.img` (no loop device: the agent
 * is not root), which `storage-get location` names. A charm's `location` is not mounted
 * over (that needs root); the instance stays where it was made and the hook tools say
 * where. Made again after a restart, it keeps what the charm wrote.
 */
import { mkdir, open } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { parseStorageId } from '../../runtime/ids.ts'
import type { StorageProvisionerEffects } from '../../actors/machine/storage-provisioner.ts'
import { defaultStorageSizeMiB } from '../../runtime/model/storage-directives.ts'

export function machineStorage (machineDir: string): StorageProvisionerEffects {
  return {
    async provisionStorage (_unit, storage) {
      const { name, number } = parseStorageId(storage.id)
      const base = join(machineDir, 'storage', name, String(number))
      if (storage.kind === 'filesystem') {
        await mkdir(base, { recursive: true, mode: 0o755 })
        return base
      }
      const file = `${base}.img`
      await mkdir(dirname(file), { recursive: true })
      const handle = await open(file, 'a')
      try {
        await handle.truncate((storage.sizeMiB ?? defaultStorageSizeMiB) * 1024 * 1024)
      } finally {
        await handle.close()
      }
      return file
    }
  }
}
