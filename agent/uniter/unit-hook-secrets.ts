/**
 * The secrets of one hook, action or `juju exec` run (agent/hook-tools/hook-secrets.ts),
 * after Juju's HookContext and its pending secret changes
 * (internal/worker/uniter/runner/context/context.go, secrets.go): creates and updates
 * are kept apart and applied in that order at commit, so `secret-add` then `secret-set`
 * in one hook makes revisions 1 and 2 and `secret-remove --revision 1` can then remove
 * the first; reads see the pending changes first, then ask a controller for content.
 */
import { randomBytes } from 'node:crypto'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { ModelContext, RelationRecord } from '../../runtime/model/model-types.ts'
import type { SecretHookChanges, SecretRecord } from '../../runtime/model/secret-types.ts'
import { secretUri } from '../../runtime/model/secret-types.ts'
import { tableValues } from '../../runtime/model/table.ts'
import type { SecretContentReply, ApiRequests } from '../../actors/controller/api-requests.ts'
import { HookToolError } from '../hook-tools/hook-context.ts'
import type { HookSecrets, SecretFields, SecretMetadataView, SecretRef } from '../hook-tools/hook-secrets.ts'

export interface UnitHookSecretsOptions {
  unit: string
  application: string
  model: () => ModelContext
  isLeader: () => Promise<boolean>
  /** A controller's answer to secret-get; absent: content cannot be read. */
  secretContent?: (request: Omit<ApiRequests['secret-content'], 'op'>) => Promise<SecretContentReply>
}

interface Pending extends SecretFields {
  content?: Record<string, string>
}

interface PendingCreate extends Pending {
  owner: 'application' | 'unit'
  content: Record<string, string>
}

const notLeader = 'this unit is not the leader'
const idAlphabet = '0123456789abcdefghijklmnopqrstuv'

/** A new secret id: 20 characters of base32hex, as Juju's xid prints 96 random-ish bits. */
export function newSecretId (): string {
  const bytes = randomBytes(20)
  return Array.from(bytes, b => idAlphabet[b % 32]).join('')
}

export class UnitHookSecrets implements HookSecrets {
  readonly #o: UnitHookSecretsOptions
  readonly #creates = new Map<string, PendingCreate>()
  readonly #updates = new Map<string, Pending>()
  readonly #grants: Array<{ id: string, relationId: number, unit?: string }> = []
  readonly #revokes: Array<{ id: string, relationId: number, unit?: string }> = []
  readonly #removes: Array<{ id: string, revision?: number }> = []

  constructor (options: UnitHookSecretsOptions) {
    this.#o = options
  }

  /** Committed secrets this unit owns, as the machine's view has them. */
  #owned (): SecretRecord[] {
    const secrets = this.#o.model().secrets
    if (secrets === undefined) return []
    return tableValues(secrets).filter(s =>
      (s.owner.kind === 'application' && s.owner.name === this.#o.application) || (s.owner.kind === 'unit' && s.owner.name === this.#o.unit))
  }

  #removedWhole (id: string): boolean {
    return this.#removes.some(r => r.id === id && r.revision === undefined)
  }

  /** The owner kind of a secret this unit owns (committed or added in this run); undefined if none. */
  #ownerOf (id: string): 'application' | 'unit' | undefined {
    const created = this.#creates.get(id)
    if (created !== undefined) return created.owner
    const secret = this.#owned().find(s => s.id === id)
    return secret === undefined ? undefined : secret.owner.kind === 'unit' ? 'unit' : 'application'
  }

  async #requireManager (id: string): Promise<void> {
    const owner = this.#ownerOf(id)
    if (owner === undefined || this.#removedWhole(id)) throw new HookToolError(1, `secret ${JSON.stringify(id)} not found`)
    if (owner === 'application' && !await this.#o.isLeader()) throw new HookToolError(1, notLeader)
  }

  #labelOf (id: string): string {
    return this.#updates.get(id)?.label ?? this.#creates.get(id)?.label ?? this.#owned().find(s => s.id === id)?.label ?? ''
  }

  #idByOwnerLabel (label: string): string | undefined {
    for (const [id, create] of this.#creates) if ((this.#updates.get(id)?.label ?? create.label) === label && !this.#removedWhole(id)) return id
    for (const secret of this.#owned()) if (this.#labelOf(secret.id) === label && !this.#removedWhole(secret.id)) return secret.id
    return undefined
  }

  #checkLabel (id: string | undefined, label: string | undefined): void {
    if (label === undefined || label === '') return
    const holder = this.#idByOwnerLabel(label)
    if (holder !== undefined && holder !== id) throw new HookToolError(1, `secret with label ${JSON.stringify(label)} already exists`)
  }

  async add (owner: 'application' | 'unit', content: Record<string, string>, fields: SecretFields): Promise<string> {
    if (owner === 'application' && !await this.#o.isLeader()) throw new HookToolError(1, notLeader)
    if (Object.keys(content).length === 0) throw new HookToolError(1, 'empty secret value not valid')
    this.#checkLabel(undefined, fields.label)
    const id = newSecretId()
    this.#creates.set(id, { ...fields, owner, content })
    return secretUri(id)
  }

  /** Content this run added or set, for the secret named by id or owner label. */
  #pendingContent (ref: SecretRef): Record<string, string> | undefined {
    const id = ref.id ?? (ref.label === undefined ? undefined : this.#idByOwnerLabel(ref.label))
    if (id === undefined || this.#removedWhole(id)) return undefined
    const content = this.#updates.get(id)?.content ?? this.#creates.get(id)?.content
    return content === undefined ? undefined : { ...content }
  }

  async get (ref: SecretRef, options: { refresh: boolean, peek: boolean }): Promise<Record<string, string>> {
    const pending = this.#pendingContent(ref)
    if (pending !== undefined) return pending
    // An owner's label names its secret by id; a consumer's label is the controller's to resolve.
    const id = ref.id ?? (ref.label === undefined ? undefined : this.#idByOwnerLabel(ref.label))
    if (this.#o.secretContent === undefined) throw new HookToolError(1, 'secrets cannot be read in this context')
    const reply = await this.#o.secretContent({
      unit: this.#o.unit,
      ...(id === undefined ? {} : { id }),
      ...(ref.label === undefined || (id !== undefined && ref.id === undefined) ? {} : { label: ref.label }),
      ...(options.refresh ? { refresh: true } : {}),
      ...(options.peek ? { peek: true } : {})
    })
    if (!reply.ok) throw new HookToolError(1, reply.error)
    return reply.content
  }

  async set (id: string, content: Record<string, string> | undefined, fields: SecretFields): Promise<void> {
    await this.#requireManager(id)
    this.#checkLabel(id, fields.label)
    const change: Pending = { ...this.#updates.get(id), ...fields, ...(content === undefined || Object.keys(content).length === 0 ? {} : { content }) }
    this.#updates.set(id, change)
  }

  async remove (id: string, revision: number | undefined): Promise<void> {
    await this.#requireManager(id)
    this.#removes.push({ id, ...(revision === undefined ? {} : { revision }) })
  }

  async grant (id: string, relationId: number, unit: string | undefined): Promise<void> {
    await this.#requireManager(id)
    this.#grants.push({ id, relationId, ...(unit === undefined ? {} : { unit }) })
  }

  async revoke (id: string, relationId: number, unit: string | undefined): Promise<void> {
    await this.#requireManager(id)
    this.#revokes.push({ id, relationId, ...(unit === undefined ? {} : { unit }) })
  }

  async ids (): Promise<string[]> {
    const ids = new Set([...this.#owned().map(s => s.id), ...this.#creates.keys()])
    return [...ids].filter(id => !this.#removedWhole(id)).sort().map(secretUri)
  }

  async info (ref: SecretRef): Promise<SecretMetadataView | undefined> {
    const id = ref.id ?? (ref.label === undefined ? undefined : this.#idByOwnerLabel(ref.label))
    if (id === undefined || this.#removedWhole(id)) return undefined
    const committed = this.#owned().find(s => s.id === id)
    const created = this.#creates.get(id)
    if (committed === undefined && created === undefined) return undefined
    const update: Pending = this.#updates.get(id) ?? {}
    const base: Pending = created ?? {}
    const latest = committed?.revisions.find(r => r.revision === committed.latestRevision)
    return {
      id,
      revision: committed?.latestRevision ?? 1,
      label: update.label ?? base.label ?? committed?.label ?? '',
      owner: this.#ownerOf(id)!,
      description: update.description ?? base.description ?? committed?.description ?? '',
      rotation: update.rotatePolicy ?? base.rotatePolicy ?? committed?.rotatePolicy ?? '',
      expiry: update.expireTime ?? base.expireTime ?? latest?.expireTime ?? null,
      rotates: committed?.nextRotateTime ?? null,
      access: this.#access(committed)
    }
  }

  /** Grants as Juju's secret-info-get shows them: target and scope as tags. */
  #access (secret: SecretRecord | undefined): SecretMetadataView['access'] {
    if (secret === undefined) return []
    const reader = readerOf(this.#o.model())
    return secret.grants.map(grant => ({
      target: `${grant.target.kind}-${grant.target.name.replace('/', '-')}`,
      scope: grant.relationId === null ? `model-${this.#o.model().uuid}` : relationScope(reader.relation(grant.relationId), grant.relationId),
      role: 'view' as const
    }))
  }

  /** The run's changes for commit-hook-changes, or undefined when there are none. */
  changes (now: number): SecretHookChanges | undefined {
    const plain = (content: Record<string, string> | undefined): { content?: { plain: Record<string, string> } } => content === undefined ? {} : { content: { plain: content } }
    const fields = (p: SecretFields): SecretFields => ({
      ...(p.label === undefined ? {} : { label: p.label }),
      ...(p.description === undefined ? {} : { description: p.description }),
      ...(p.rotatePolicy === undefined ? {} : { rotatePolicy: p.rotatePolicy }),
      ...(p.expireTime === undefined ? {} : { expireTime: p.expireTime })
    })
    const creates = [...this.#creates].map(([id, c]) => ({ id, owner: c.owner, content: { plain: c.content }, ...fields(c) }))
    const updates = [...this.#updates].map(([id, u]) => ({ id, ...plain(u.content), ...fields(u) }))
    if (creates.length + updates.length + this.#grants.length + this.#revokes.length + this.#removes.length === 0) return undefined
    return {
      now,
      ...(creates.length === 0 ? {} : { creates }),
      ...(updates.length === 0 ? {} : { updates }),
      ...(this.#grants.length === 0 ? {} : { grants: [...this.#grants] }),
      ...(this.#revokes.length === 0 ? {} : { revokes: [...this.#revokes] }),
      ...(this.#removes.length === 0 ? {} : { removes: [...this.#removes] })
    }
  }
}

/** Juju's relation tag: `relation-` and the key with ':' as '.' and ' ' as '#'. */
function relationScope (relation: RelationRecord | undefined, id: number): string {
  return relation === undefined ? `relation-${id}` : `relation-${relation.key.replaceAll(':', '.').replaceAll(' ', '#')}`
}
