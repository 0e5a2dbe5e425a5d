import { describeHook, type HookInfo, type HookKind } from '../../actors/unit/hook-info.ts'
import type { LocalState } from '../../actors/unit/local-state.ts'
import type { Life } from '../../actors/unit/remote-state.ts'
import type { UnitEmitted } from '../../actors/unit/unit-effects.ts'

/**
 * The uniter's ordering invariants (juju-semantics §1.5, §2.1, §2.2, §2.5, §6), checked
 * from outside the code they check: it sees only the events each unit emits and the
 * crash markers the world adds, never the resolver's own reasoning.
 */
export type PropertyName =
  | 'a: one operation at a time'
  | 'b: -changed U only after -joined U'
  | 'c: -broken only after every -departed'
  | 'd: first deploy order'
  | 'e: nothing but the failed hook while in error'
  | 'f: a finished hook never runs twice'

export interface Violation {
  property: PropertyName
  unit: string
  message: string
}

/** Identity of a hook for "the same hook again" (a retry re-runs the persisted hook info). */
export function hookKey (hook: HookInfo): string {
  return `${describeHook(hook)}#${hook.relationId ?? ''}`
}

/** Hooks that may run on first deploy before the first `config-changed` (§2.1, §2.13, §1.4 item 15). */
const firstDeployHooks: ReadonlySet<HookKind> = new Set<HookKind>([
  'storage-attached',
  // Storage detached (while alive) before the unit started is torn down by the storage resolver.
  'storage-detaching',
  'install',
  'relation-created',
  'leader-elected',
  'leader-settings-changed',
  // §1.4 item 15 checks the charm before the config: a refresh between install and the first
  // config-changed runs upgrade-charm, whose commit queues that config-changed.
  'upgrade-charm'
])

/** The hook a persisted local state is in error on (§1.1: pending = failed, also kept under an action or a forced upgrade). */
export function errorHookOf (local: LocalState | undefined): HookInfo | undefined {
  if (local === undefined) return undefined
  const op = local.operation
  if (op.kind === 'run-hook') return op.step === 'pending' ? op.hook : undefined
  if (op.kind === 'continue') return undefined
  return op.hook
}

interface UnitTrack {
  /** The hook whose operation started (hook.started) and has not been committed, failed or re-queued. */
  inflight: HookInfo | undefined
  /** The hook the unit is in error on. */
  error: HookInfo | undefined
  /** A config-changed has started (or been skipped): first deploy is over. */
  configStarted: boolean
  configCommitted: boolean
  /** Per relation id: remote units whose -joined committed and whose -departed did not. */
  members: Map<number, Set<string>>
  /** A hook found finished (`done`) on disk after a crash: it must be committed, not run again. */
  finished: HookInfo | undefined
  /** The last hook events of the unit, for messages. */
  recent: string[]
}

function newTrack (): UnitTrack {
  return { inflight: undefined, error: undefined, configStarted: false, configCommitted: false, members: new Map(), finished: undefined, recent: [] }
}

function cloneTrack (track: UnitTrack): UnitTrack {
  const members = new Map<number, Set<string>>()
  for (const [id, set] of track.members) members.set(id, new Set(set))
  return { ...track, members, recent: [...track.recent] }
}

/**
 * Checks, event by event, the hook events of units (`hook.started`, `hook.committed`,
 * `hook.failed`, `hook.requeued`, in the order each unit emitted them) plus crash markers:
 *
 * (a) a unit starts no hook while another of its hooks is in flight;
 * (b) per relation id, `-changed U` only while U is a member (joined committed, departed not);
 * (c) `-broken` only when every unit that joined has departed;
 * (d) while alive and before the first `config-changed`, only storage, install,
 *     relation-created and leadership hooks; `start` only after `config-changed` committed;
 * (e) between a failure (or a crash that left a hook pending) and the commit of that hook
 *     (success or `resolved --no-retry`), no other hook starts or commits.
 */
export class HookOrderChecker {
  readonly violations: Violation[] = []
  readonly #units = new Map<string, UnitTrack>()
  events = 0

  #track (unit: string): UnitTrack {
    let track = this.#units.get(unit)
    if (track === undefined) {
      track = newTrack()
      this.#units.set(unit, track)
    }
    return track
  }

  clone (): HookOrderChecker {
    const copy = new HookOrderChecker()
    for (const [unit, track] of this.#units) copy.#units.set(unit, cloneTrack(track))
    copy.violations.push(...this.violations)
    copy.events = this.events
    return copy
  }

  #violate (unit: string, property: PropertyName, message: string): void {
    const track = this.#track(unit)
    this.violations.push({ property, unit, message: `${message} (recent hook events of ${unit}: ${track.recent.slice(-8).join(' | ') || 'none'})` })
  }

  #note (track: UnitTrack, line: string): void {
    track.recent.push(line)
    if (track.recent.length > 16) track.recent.shift()
  }

  /** Start tracking `unit` from a persisted local state (restored agent, or a state in the middle of a model path). */
  restore (unit: string, local: LocalState, inflight?: HookInfo): void {
    const track = newTrack()
    track.inflight = inflight
    track.error = inflight === undefined ? errorHookOf(local) : undefined
    track.configStarted = local.started || local.configHash !== ''
    track.configCommitted = track.configStarted
    for (const rel of Object.values(local.relations)) track.members.set(rel.id, new Set(Object.keys(rel.members)))
    this.#units.set(unit, track)
  }

  /** The agent died (kill -9): whatever ran is gone; the durable state says whether a hook is left pending (§2.11). */
  crash (unit: string, durable: LocalState | undefined): void {
    const track = this.#track(unit)
    this.#note(track, `CRASH(${durable === undefined ? 'no state' : `${durable.operation.kind}/${durable.operation.step}`})`)
    track.inflight = undefined
    track.error = errorHookOf(durable)
    const op = durable?.operation
    track.finished = op?.kind === 'run-hook' && op.step === 'done' ? op.hook : undefined
  }

  event (unit: string, event: UnitEmitted, life: Life): void {
    switch (event.type) {
      case 'hook.started': this.#started(unit, event.hook, life); break
      case 'hook.committed': this.#committed(unit, event.hook, event.ran); break
      case 'hook.failed': {
        const track = this.#track(unit)
        this.#note(track, `failed ${describeHook(event.hook)}`)
        if (track.inflight !== undefined && hookKey(track.inflight) === hookKey(event.hook)) track.inflight = undefined
        track.error = event.hook
        break
      }
      case 'hook.requeued': {
        // A graceful stop killed the hook: it goes back to queued, not in error (§2.11), even
        // when it was the retry of a failed hook.
        const track = this.#track(unit)
        this.#note(track, `requeued ${describeHook(event.hook)}`)
        if (track.inflight !== undefined && hookKey(track.inflight) === hookKey(event.hook)) track.inflight = undefined
        if (track.error !== undefined && hookKey(track.error) === hookKey(event.hook)) track.error = undefined
        break
      }
      default: return
    }
    this.events++
  }

  #started (unit: string, hook: HookInfo, life: Life): void {
    const track = this.#track(unit)
    const name = describeHook(hook)
    if (track.finished !== undefined) {
      this.#violate(unit, 'f: a finished hook never runs twice', `${unit} started "${name}" before committing "${describeHook(track.finished)}", which had finished before the crash`)
      track.finished = undefined
    }
    this.#note(track, `start ${name}${life === 'alive' ? '' : ` (${life})`}`)
    if (track.inflight !== undefined) {
      this.#violate(unit, 'a: one operation at a time', `${unit} started "${name}" while "${describeHook(track.inflight)}" was still running`)
    }
    if (track.error !== undefined && hookKey(track.error) !== hookKey(hook)) {
      this.#violate(unit, 'e: nothing but the failed hook while in error', `${unit} started "${name}" while in error on "${describeHook(track.error)}"`)
    }
    if (!track.configStarted && life === 'alive' && hook.kind !== 'config-changed' && hook.kind !== 'start' && !firstDeployHooks.has(hook.kind)) {
      this.#violate(unit, 'd: first deploy order', `${unit} started "${name}" before its first config-changed`)
    }
    if (hook.kind === 'start' && !track.configCommitted) {
      this.#violate(unit, 'd: first deploy order', `${unit} started "start" before any config-changed committed`)
    }
    if (hook.relationId !== undefined) {
      const members = track.members.get(hook.relationId) ?? new Set<string>()
      if (hook.kind === 'relation-changed' && hook.remoteUnit !== undefined && !members.has(hook.remoteUnit)) {
        this.#violate(unit, 'b: -changed U only after -joined U', `${unit} started "${name}" on relation ${hook.relationId} but ${hook.remoteUnit} has not joined (members: ${[...members].join(',') || 'none'})`)
      }
      if (hook.kind === 'relation-broken' && members.size > 0) {
        this.#violate(unit, 'c: -broken only after every -departed', `${unit} started "${name}" on relation ${hook.relationId} while ${[...members].join(',')} have not departed`)
      }
    }
    if (hook.kind === 'config-changed') track.configStarted = true
    track.inflight = hook
  }

  #committed (unit: string, hook: HookInfo, ran: boolean): void {
    const track = this.#track(unit)
    const name = describeHook(hook)
    if (track.finished !== undefined) {
      if (hookKey(track.finished) !== hookKey(hook) || ran) {
        this.#violate(unit, 'f: a finished hook never runs twice', `${unit} committed "${name}"${ran ? ' as run' : ''} while "${describeHook(track.finished)}" waited for its commit`)
      }
      track.finished = undefined
    }
    this.#note(track, `${ran ? 'commit' : 'skip'} ${name}`)
    if (track.inflight !== undefined && hookKey(track.inflight) === hookKey(hook)) {
      track.inflight = undefined
    } else if (ran) {
      this.#violate(unit, 'a: one operation at a time', `${unit} committed "${name}" as run, but the hook in flight was ${track.inflight === undefined ? 'none' : `"${describeHook(track.inflight)}"`}`)
    }
    if (track.error !== undefined) {
      if (hookKey(track.error) === hookKey(hook)) track.error = undefined
      else this.#violate(unit, 'e: nothing but the failed hook while in error', `${unit} committed "${name}" while in error on "${describeHook(track.error)}"`)
    }
    const id = hook.relationId
    switch (hook.kind) {
      case 'config-changed': track.configStarted = true; track.configCommitted = true; break
      case 'relation-joined':
        if (id !== undefined && hook.remoteUnit !== undefined) {
          const members = track.members.get(id) ?? new Set<string>()
          members.add(hook.remoteUnit)
          track.members.set(id, members)
        }
        break
      case 'relation-departed':
        if (id !== undefined && hook.remoteUnit !== undefined) track.members.get(id)?.delete(hook.remoteUnit)
        break
      case 'relation-broken':
        if (id !== undefined) track.members.delete(id)
        break
      default: break
    }
  }
}

export function formatViolations (violations: readonly Violation[], max = 5): string {
  return violations.slice(0, max).map(v => `  [${v.property}] ${v.message}`).join('\n') +
    (violations.length > max ? `\n  … and ${violations.length - max} more` : '')
}
