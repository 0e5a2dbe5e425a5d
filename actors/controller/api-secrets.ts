/**
 * `secret-content`: a unit's `secret-get`, answered by a controller, the only place the
 * content can be opened (runtime/model/secret-sealing.ts). The policy table admits
 * controllers and machine agents; a machine agent must host the unit, and the unit must
 * own the secret or hold a grant (runtime/model/secret-access.ts). A consumer's new
 * tracked revision or label is committed before the content is returned, as Juju's
 * secretsmanager saves the consumer before it answers.
 */
import { readerOf } from '../../runtime/model/model-draft.ts'
import { planSecretRead } from '../../runtime/model/secret-access.ts'
import { isSecretId } from '../../runtime/model/secret-types.ts'
import type { ApiContext, Invalid, WireBody } from './api-operations.ts'
import { apiPermits, apiRefusal } from './api-policy.ts'
import type { ApiReplies, ApiRequests } from './api-requests.ts'

const component = 'controller api'
const labelLengthMax = 256

export function parseSecretContent (body: WireBody, peer: string): ApiRequests['secret-content'] | Invalid {
  if (typeof body.unit !== 'string') return { invalid: apiRefusal(component, 'secret-content', peer, body.unit) }
  const { id, label, refresh, peek } = body
  if (id !== undefined && !isSecretId(id)) return { invalid: `${component}: expected "id" to be a secret id (20 characters 0-9, a-v), got a ${typeof id}` }
  if (label !== undefined && (typeof label !== 'string' || label.length > labelLengthMax)) return { invalid: `${component}: expected "label" to be a string of at most ${labelLengthMax} characters` }
  if (id === undefined && (label === undefined || label === '')) return { invalid: `${component}: expected a secret "id" or "label", got neither` }
  if ((refresh !== undefined && typeof refresh !== 'boolean') || (peek !== undefined && typeof peek !== 'boolean')) return { invalid: `${component}: expected "refresh" and "peek" to be booleans` }
  return {
    op: 'secret-content',
    unit: body.unit,
    ...(id === undefined ? {} : { id: id as string }),
    ...(label === undefined ? {} : { label: label as string }),
    ...(refresh === true ? { refresh: true } : {}),
    ...(peek === true ? { peek: true } : {})
  }
}

export async function secretContent ({ node, caller, request: { from } }: ApiContext, request: ApiRequests['secret-content']): Promise<ApiReplies['secret-content']> {
  const refusal = { ok: false as const, error: apiRefusal(component, 'secret-content', from, request.unit) }
  if (!apiPermits('secret-content', caller, request.unit)) return refusal
  try {
    const model = await node.read()
    const record = readerOf(model).unit(request.unit)
    if (record === undefined || (caller?.kind === 'machine' && record.machine !== caller.id)) return refusal
    const plan = planSecretRead(model, request.unit, request)
    if (!plan.ok) return plan
    const content = node.secretSealer.open(plan.sealed)
    if (plan.track !== undefined) {
      const result = await node.submit({
        type: 'secret-consumed',
        unit: request.unit,
        id: plan.id,
        revision: plan.track.revision,
        ...(plan.track.label === undefined ? {} : { label: plan.track.label }),
        requestId: `${node.id}/secret-consumed/${request.unit}/${plan.id}/${node.clock.now()}/${model.revision}`,
        proposer: { kind: 'controller', id: node.id }
      })
      if (!result.ok) return { ok: false, error: result.error }
    }
    return { ok: true, id: plan.id, revision: plan.revision, content }
  } catch (error) {
    // Never the content: only what failed.
    return { ok: false, error: `${component}: cannot read secret: ${error instanceof Error ? error.message : String(error)}` }
  }
}

export function parseRevealSecret (body: WireBody): ApiRequests['reveal-secret'] | Invalid {
  if (!isSecretId(body.id)) return { invalid: `${component}: expected "id" to be a secret id (20 characters 0-9, a-v), got ${typeof body.id === 'string' ? JSON.stringify(body.id) : `a ${typeof body.id}`}` }
  if (body.revision !== undefined && (!Number.isSafeInteger(body.revision) || (body.revision as number) < 1)) return { invalid: `${component}: expected "revision" to be a revision (an integer >= 1)` }
  return { op: 'reveal-secret', id: body.id, ...(body.revision === undefined ? {} : { revision: body.revision as number }) }
}

/** `show-secret --reveal`: an admin reads any revision of any secret, as Juju's admins do. */
export async function revealSecret ({ node }: ApiContext, request: ApiRequests['reveal-secret']): Promise<ApiReplies['reveal-secret']> {
  try {
    const secret = readerOf(await node.read()).secret(request.id)
    if (secret === undefined) return { ok: false, error: `secret ${JSON.stringify(request.id)} not found` }
    const revision = request.revision ?? secret.latestRevision
    const stored = secret.revisions.find(r => r.revision === revision)
    if (stored === undefined) return { ok: false, error: `secret revision ${revision} not found` }
    return { ok: true, revision, content: node.secretSealer.open(stored.sealed) }
  } catch (error) {
    return { ok: false, error: `${component}: cannot reveal secret: ${error instanceof Error ? error.message : String(error)}` }
  }
}
