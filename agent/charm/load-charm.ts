import { constants } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { basename, join, resolve } from 'node:path'
import { charmDefinition, type CharmDefinition } from '../../runtime/charm/charm-definition.ts'
import { CharmNotFoundError, InvalidCharmError } from '../../runtime/charm/charm-error.ts'
import { parseCharmMetadata } from '../../runtime/charm/charm-metadata.ts'
import { limits } from '../../runtime/limits.ts'
import { parseCharmYaml } from './charm-yaml.ts'

/**
 * Reads a charm directory's metadata.yaml (required), config.yaml and actions.yaml
 * (optional) and checks them against juju-semantics.md §7. Each file is read with a
 * size bound before it is parsed; every problem is one InvalidCharmError line naming the
 * charm, the file and the field.
 */
export interface LoadedCharm extends CharmDefinition {
  /** The directory, resolved to an absolute path. */
  readonly dir: string
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

export async function loadCharmDir (dir: string): Promise<LoadedCharm> {
  const root = resolve(dir)
  let rootStat
  try {
    rootStat = await stat(root)
  } catch (cause) {
    throw new CharmNotFoundError(root, 'does not exist', { cause })
  }
  if (!rootStat.isDirectory()) throw new CharmNotFoundError(root, 'is not a directory')

  // Until metadata.yaml names the charm, messages name it by its directory.
  const label = basename(root)
  const metadataText = await readCharmFile(root, 'metadata.yaml', label)
  if (metadataText === undefined) throw new CharmNotFoundError(root, 'has no metadata.yaml')
  const metadata = parseCharmYaml(metadataText, label, 'metadata.yaml')
  const hasManifest = await exists(join(root, 'manifest.yaml'))

  // config.yaml and actions.yaml are read only after metadata.yaml is known to be sound,
  // so a metadata problem is reported first and their messages can use the charm's name.
  const { name } = parseCharmMetadata(metadata, { label, hasManifest })
  const configText = await readCharmFile(root, 'config.yaml', name)
  const actionsText = await readCharmFile(root, 'actions.yaml', name)
  const definition = charmDefinition({
    metadata,
    ...(configText === undefined ? {} : { config: parseCharmYaml(configText, name, 'config.yaml') }),
    ...(actionsText === undefined ? {} : { actions: parseCharmYaml(actionsText, name, 'actions.yaml') })
  }, { label, hasManifest })
  return { dir: root, ...definition }
}

/**
 * The file as UTF-8 text, or undefined when it does not exist. Opened non-blocking so a
 * FIFO in its place cannot hang the agent, and read to at most one byte past the limit.
 */
async function readCharmFile (root: string, file: string, charm: string): Promise<string | undefined> {
  let handle
  try {
    handle = await open(join(root, file), constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new InvalidCharmError(charm, file, undefined, 'a readable file', (cause as NodeJS.ErrnoException).code ?? String(cause), { cause })
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw new InvalidCharmError(charm, file, undefined, 'a regular file', info.isDirectory() ? 'a directory' : 'a special file')
    const max = limits.charmFileBytesMax
    if (info.size > max) throw new InvalidCharmError(charm, file, undefined, `at most ${max} bytes`, `${info.size} bytes`)
    // The size can change between stat and read; never hold more than the limit plus one.
    const buffer = new Uint8Array(max + 1)
    let length = 0
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null)
      if (bytesRead === 0) break
      length += bytesRead
    }
    if (length > max) throw new InvalidCharmError(charm, file, undefined, `at most ${max} bytes`, 'more')
    try {
      return utf8.decode(buffer.subarray(0, length))
    } catch (cause) {
      throw new InvalidCharmError(charm, file, undefined, 'UTF-8 text', 'bytes that are not UTF-8', { cause })
    }
  } finally {
    await handle.close()
  }
}

async function exists (path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}
