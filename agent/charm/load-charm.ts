import { constants } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { basename, join, resolve } from 'node:path'
import { charmDefinition, type CharmDefinition } from '../../runtime/charm/charm-definition.ts'
import { CharmNotFoundError, InvalidCharmError } from '../../runtime/charm/charm-error.ts'
import { parseCharmMetadata } from '../../runtime/charm/charm-metadata.ts'
import { limits } from '../../runtime/limits.ts'
import { parseCharmYaml } from './charm-yaml.ts'
import { charmcraftFiles } from '../../runtime/charm/charmcraft-yaml.ts'
import { stringify } from 'yaml'

/**
 * Reads a charm directory's metadata.yaml (required), config.yaml and actions.yaml
 * (optional) and checks them against juju-semantics.md §7. Where one of the three is
 * absent and a unified charmcraft.yaml is there, its part of charmcraft.yaml stands in
 * for it (runtime/charm/charmcraft-yaml.ts), as `charmcraft pack` would have written it;
 * `generated` holds those files as YAML, for the packer to add. Each file is read with a
 * size bound before it is parsed; every problem is one InvalidCharmError line naming the
 * charm, the file and the field.
 */
export interface LoadedCharm extends CharmDefinition {
  /** The directory, resolved to an absolute path. */
  readonly dir: string
  /** metadata.yaml, config.yaml or actions.yaml derived from charmcraft.yaml, by file name; empty when none was. */
  readonly generated: Readonly<Record<string, string>>
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
  const charmcraftText = await readCharmFile(root, 'charmcraft.yaml', label)
  const charmcraft = charmcraftText === undefined ? undefined : charmcraftFiles(parseCharmYaml(charmcraftText, label, 'charmcraft.yaml'), label)
  if (metadataText === undefined && charmcraft === undefined) throw new CharmNotFoundError(root, 'has no metadata.yaml (nor a charmcraft.yaml)')
  const metadata = metadataText === undefined ? charmcraft!.metadata : parseCharmYaml(metadataText, label, 'metadata.yaml')
  // charmcraft always packs a manifest.yaml: a charm described by charmcraft.yaml is a v2 charm.
  const hasManifest = await exists(join(root, 'manifest.yaml')) || metadataText === undefined

  // config.yaml and actions.yaml are read only after metadata.yaml is known to be sound,
  // so a metadata problem is reported first and their messages can use the charm's name.
  const { name } = parseCharmMetadata(metadata, { label, hasManifest })
  const configText = await readCharmFile(root, 'config.yaml', name)
  const actionsText = await readCharmFile(root, 'actions.yaml', name)
  const config = configText === undefined ? charmcraft?.config : parseCharmYaml(configText, name, 'config.yaml')
  const actions = actionsText === undefined ? charmcraft?.actions : parseCharmYaml(actionsText, name, 'actions.yaml')
  const definition = charmDefinition({
    metadata,
    ...(config === undefined ? {} : { config }),
    ...(actions === undefined ? {} : { actions })
  }, { label, hasManifest })
  const generated: Record<string, string> = {}
  if (metadataText === undefined) generated['metadata.yaml'] = stringify(metadata)
  if (configText === undefined && charmcraft?.config !== undefined) generated['config.yaml'] = stringify(charmcraft.config)
  if (actionsText === undefined && charmcraft?.actions !== undefined) generated['actions.yaml'] = stringify(charmcraft.actions)
  return { dir: root, ...definition, generated }
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
