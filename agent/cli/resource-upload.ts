/**
 * Resource files the operator supplies (`deploy --resource NAME=PATH`, `attach-resource
 * APP NAME=PATH`): read (bounded), checked against the resources the charm declares, and
 * put into the controllers' content-addressed store through the same `put-charm` upload a
 * charm archive takes — the store keeps any bytes by their sha256 and replicates them
 * between controllers (agent/controller/replicated-charm-store.ts), and a unit fetches the
 * content by that hash (agent/uniter/unit-resources.ts). The model then records name →
 * {hash, size} (runtime/model/apply/resource-commands.ts).
 */
import { sha256Hex } from '../charm/charm-chunks.ts'
import { openSync, closeSync, fstatSync, readSync } from 'node:fs'
import { InvalidInputError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import type { CharmSummaryInput } from '../../runtime/model/model-types.ts'
import type { ModelClient } from './commands/model-common.ts'

export interface ResourceFile {
  readonly name: string
  readonly path: string
  readonly bytes: Uint8Array
  readonly hash: string
}

/** `NAME=PATH` items as a map; a repeated name, or an item that is not NAME=PATH, is refused. */
export function parseResourceArgs (component: string, items: readonly string[]): Map<string, string> {
  const out = new Map<string, string>()
  for (const item of items) {
    const eq = item.indexOf('=')
    if (eq <= 0 || eq === item.length - 1) throw new InvalidInputError(component, '--resource NAME=PATH', item)
    const name = item.slice(0, eq)
    if (out.has(name)) throw new InvalidInputError(component, `resource "${name}" given once`, item)
    out.set(name, item.slice(eq + 1))
  }
  return out
}

/** Checks `name` is a file resource the charm declares. */
export function checkDeclared (component: string, charm: Pick<CharmSummaryInput, 'name' | 'resources'>, name: string): void {
  const declared = charm.resources ?? {}
  const spec = declared[name]
  const names = Object.keys(declared).sort()
  if (spec === undefined) throw new InvalidInputError(component, `a resource charm "${charm.name}" declares (${names.length === 0 ? 'it declares none' : names.join(', ')})`, name)
  if (spec.type !== 'file') throw new InvalidInputError(component, `a file resource; "${name}" of charm "${charm.name}" is an ${spec.type}`, name)
}

/** Reads one resource file, at most limits.charmArchiveBytesMax bytes (the store's bound). */
export function readResourceFile (component: string, name: string, path: string): ResourceFile {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (error) {
    throw new InvalidInputError(component, `a readable file for resource "${name}"`, path, { cause: error })
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw new InvalidInputError(component, `a regular file for resource "${name}"`, path)
    if (stat.size > limits.charmArchiveBytesMax) throw new InvalidInputError(component, `a resource file of at most ${limits.charmArchiveBytesMax} bytes`, `${stat.size} bytes in ${path}`)
    const bytes = new Uint8Array(stat.size)
    let read = 0
    while (read < bytes.byteLength) {
      const n = readSync(fd, bytes, read, bytes.byteLength - read, read)
      if (n === 0) break
      read += n
    }
    const content = bytes.subarray(0, read)
    return { name, path, bytes: content, hash: sha256Hex(content) }
  } finally {
    closeSync(fd)
  }
}

/** Puts the file into the controllers' store; the store must answer with the same address. */
export async function uploadResource (component: string, client: Pick<ModelClient, 'putCharm'>, file: ResourceFile): Promise<void> {
  const hash = await client.putCharm(file.bytes)
  if (hash !== file.hash) throw new InvalidInputError(component, `the controller to store resource "${file.name}" as ${file.hash}`, hash)
}
