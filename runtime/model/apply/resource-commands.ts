import { limits } from '../../limits.ts'
import { isPlainRecord } from '../charm-summary.ts'
import type { CharmRecord, ModelCommand, ResourceRecord } from '../model-types.ts'
import { requireAdmin } from './authorisation.ts'
import { applicationName, sortedRecord } from './fields.ts'
import { charmOf, getApplication } from './lookups.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'
import { putApplication } from './writes.ts'

/**
 * Resources an operator supplies (`deploy --resource NAME=PATH`, `attach-resource APP
 * NAME=PATH`): the model records, per application and resource name, the content's address
 * in the controllers' store, its size and a revision; the content itself is uploaded to
 * the store beforehand, as a charm archive is. Only a `file` resource the charm declares
 * may be supplied.
 *
 * Attaching bumps the resource's revision and the application's charm-modified version,
 * so every unit runs `upgrade-charm` then `config-changed` (juju-semantics §2.10: Juju's
 * attach-resource increments CharmModifiedVersion for a resource that is not pending).
 */

const hashPattern = /^[0-9a-f]{64}$/

/** One resource's content as a command carries it: checked against the charm's declaration. */
function resourceContent (c: ModelCommand, charm: CharmRecord, name: unknown, value: unknown): { name: string, hash: string, size: number } {
  if (typeof name !== 'string') refuse(c, `resource name must be a string, got ${q(name)}`)
  const declared = charm.metadata.resources?.[name]
  if (declared === undefined) refuse(c, `charm ${q(charm.url)} has no resource ${q(name)}`)
  if (declared.type !== 'file') refuse(c, `resource ${q(name)} of charm ${q(charm.url)} is an ${declared.type}, not a file`)
  if (!isPlainRecord(value)) refuse(c, `resource ${q(name)} must be {hash, size}`)
  const { hash, size } = value
  if (typeof hash !== 'string' || !hashPattern.test(hash)) refuse(c, `resource ${q(name)} hash must be a sha256 hex digest`)
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0 || size > limits.charmArchiveBytesMax) {
    refuse(c, `resource ${q(name)} size must be a whole number of bytes up to ${limits.charmArchiveBytesMax}`)
  }
  return { name, hash, size }
}

/** `deploy`'s resources: revision 1 each. */
export function deployResources (c: ModelCommand, charm: CharmRecord, value: unknown): Record<string, ResourceRecord> {
  if (value === undefined) return {}
  if (!isPlainRecord(value)) refuse(c, 'resources must be a map of resource name to {hash, size}')
  const out: Record<string, ResourceRecord> = {}
  for (const [name, entry] of Object.entries(value)) {
    const content = resourceContent(c, charm, name, entry)
    out[content.name] = { revision: 1, hash: content.hash, size: content.size }
  }
  return sortedRecord(out)
}

export const resourceCommands: HandlerTable<'attach-resource'> = {
  'attach-resource': (d, c) => {
    requireAdmin(c)
    const app = getApplication(d, c, applicationName(c, c.application))
    if (app.life !== 'alive') refuse(c, `application is ${app.life}`)
    const content = resourceContent(c, charmOf(d, app), c.resource, { hash: c.hash, size: c.size })
    const revision = (app.resources?.[content.name]?.revision ?? 0) + 1
    putApplication(d, {
      ...app,
      resources: sortedRecord({ ...app.resources, [content.name]: { revision, hash: content.hash, size: content.size } }),
      charmModifiedVersion: app.charmModifiedVersion + 1
    })
    return { revision }
  }
}
