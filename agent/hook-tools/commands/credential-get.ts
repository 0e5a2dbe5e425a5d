/**
 * credential-get (juju-semantics §5.3): the cloud specification of the unit's model, for
 * applications that have been trusted (`deploy --trust`, `cantrip trust APP`, or
 * `config APP trust=true`); others get Juju's refusal, `cannot access cloud credentials:
 * permission denied`, exit 1 (internal/worker/uniter/runner/jujuc/credential-get.go over
 * the uniter facade's CloudSpec, which answers ErrPerm without trust).
 *
 * Juju writes its params.CloudSpec struct. In json its tags apply (`omitempty` fields left
 * out when empty); in yaml (and smart, which is yaml for a struct) Go's yaml.v2 finds no
 * yaml tags and uses the lower-cased field names with every field present — so the two
 * formats differ in their keys, exactly as Juju's do.
 */
import { HookToolError } from '../hook-context.ts'
import type { CloudSpec } from '../hook-context.ts'
import { checkEmpty } from './args.ts'
import { outputFlags, outputFormat, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'

/** params.CloudSpec under its json tags. */
function jsonDocument (spec: CloudSpec): Map<string, unknown> {
  const doc = new Map<string, unknown>([['type', spec.type], ['name', spec.name]])
  if (spec.region !== '') doc.set('region', spec.region)
  const credential = new Map<string, unknown>([['auth-type', spec.credential.authType]])
  if (Object.keys(spec.credential.attributes).length > 0) credential.set('attrs', spec.credential.attributes)
  doc.set('credential', credential)
  if (spec.isControllerCloud) doc.set('is-controller-cloud', true)
  return doc
}

/** params.CloudSpec as yaml.v2 writes a struct without yaml tags. */
function yamlDocument (spec: CloudSpec): Map<string, unknown> {
  return new Map<string, unknown>([
    ['type', spec.type],
    ['name', spec.name],
    ['region', spec.region],
    ['endpoint', ''],
    ['identityendpoint', ''],
    ['storageendpoint', ''],
    ['credential', new Map<string, unknown>([['authtype', spec.credential.authType], ['attributes', spec.credential.attributes], ['redacted', []]])],
    ['cacertificates', []],
    ['skiptlsverify', false],
    ['iscontrollercloud', spec.isControllerCloud]
  ])
}

export const credentialGet: HookTool = {
  name: 'credential-get',
  args: '',
  purpose: 'access cloud credentials',
  doc: 'credential-get returns the cloud specification used by the unit\'s model.',
  flags: () => ({ ...outputFlags }),
  async run (call, parsed) {
    checkEmpty(parsed.args)
    let spec: CloudSpec
    try {
      spec = await call.context.cloudSpec()
    } catch (error) {
      throw new HookToolError(1, `cannot access cloud credentials: ${error instanceof Error ? error.message : String(error)}`)
    }
    await writeOutput(call, parsed, outputFormat(parsed) === 'json' ? jsonDocument(spec) : yamlDocument(spec))
  }
}
