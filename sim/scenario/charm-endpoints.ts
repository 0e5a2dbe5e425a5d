import { readFileSync } from 'node:fs'
import { join as joinPath } from 'node:path'
import { parse } from 'yaml'
import { Fields, join, type Json } from './scenario-fields.ts'

/**
 * The endpoints of a charm: from a scenario's `provides:`/`requires:`/`peers:` maps, or
 * from a real charm directory's metadata.yaml. Both accept Juju's two spellings of an
 * endpoint, `db: kv` and `db: { interface: kv, ... }` (other keys of the long form, such
 * as `limit` or `scope`, are the real charm's business and ignored here).
 */
export interface CharmEndpoints {
  provides: Record<string, string>
  requires: Record<string, string>
  peers: Record<string, string>
  subordinate: boolean
}

const namePattern = /^[a-z][a-z0-9-]*$/

/** Endpoint name → interface, from one role's map. */
export function endpointMap (fields: Fields, value: Json, where: string, longFormKeys?: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, spec] of Object.entries(fields.optionalMap(value, where))) {
    const at = join(where, name)
    if (!namePattern.test(name)) fields.fail(at, 'an endpoint name like db or website', name)
    if (typeof spec === 'string') out[name] = fields.string(spec, at, namePattern, 'an interface name like http')
    else out[name] = fields.string(fields.map(spec, at, longFormKeys)['interface'], join(at, 'interface'), namePattern, 'an interface name like http')
  }
  return out
}

/** Reads `<dir>/metadata.yaml`; errors name the metadata file. */
export function readCharmEndpoints (dir: string): CharmEndpoints {
  const file = joinPath(dir, 'metadata.yaml')
  const fields = new Fields(file)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    return fields.refuse('', 'a readable charm metadata.yaml', (error as NodeJS.ErrnoException).code ?? String(error))
  }
  let doc: Json
  try {
    doc = parse(text, { version: '1.2', schema: 'core', uniqueKeys: true })
  } catch (error) {
    return fields.refuse('', 'valid YAML', String((error as Error).message).split('\n')[0]!)
  }
  const top = fields.map(doc, '')
  const subordinate = top['subordinate'] ?? false
  if (typeof subordinate !== 'boolean') return fields.fail('subordinate', 'true or false', subordinate)
  return {
    provides: endpointMap(fields, top['provides'], 'provides'),
    requires: endpointMap(fields, top['requires'], 'requires'),
    peers: endpointMap(fields, top['peers'], 'peers'),
    subordinate
  }
}
