/**
 * The last view of the model this controller sent each machine agent, so that a fetch
 * after a commit that changed nothing the machine sees costs the agent nothing: it names
 * the revision of the view it holds (`since`), and when that is the view kept here and a
 * view taken now holds the same content, the reply says only `unchanged` and where the
 * model is. Most commits on a busy machine are its own units' reports (their agent
 * status, which views do not carry: runtime/model/machine-view.ts), and each is followed
 * by a change notice and a fetch.
 *
 * A view is a pure function of the committed model at its revision, so any controller's
 * view at revision R is the view the agent holds when it names R: a kept view answers
 * for any agent that names its revision, whichever controller that agent fetched from.
 * With it are kept the sources of the latest model it was found to be the view of (the
 * parts it reads whole and each record it read, not the model): when they are still
 * those (sameViewSourcesAs), the answer is `unchanged` without building a view at all.
 */

import { limits } from '../../runtime/limits.ts'
import { machineModelView, noViewChanges, sameViewSourcesAs, verbatimViewChanges, viewChanges, viewSourcesOf, withWholeParts, type ViewSources } from '../../runtime/model/machine-view.ts'
import type { ModelContext } from '../../runtime/model/model-types.ts'
import type { ViewReadTable } from '../../runtime/model/view-footprint.ts'
import { readKey, ViewReaders } from './view-readers.ts'
import type { MachineModelReply } from './api-requests.ts'

interface Kept {
  /** The whole view last sent to the machine. */
  readonly view: ModelContext
  /** What the latest model whose view `view` is holds of the machine's view (not the model itself: see ViewSources). */
  sources: ViewSources
}

export class MachineViewCache {
  /** Machine → the last whole view sent to it; Map order is least recently asked first. */
  readonly #views = new Map<string, Kept>()
  readonly #max: number
  /** What each kept view was built from, to find the views a commit may change. */
  readonly #readers = new ViewReaders()
  /** Told when a machine's kept view is replaced or forgotten (the revision it answers to, and its footprint, moved). */
  onReplaced: ((machine: string) => void) | undefined

  constructor (max: number = limits.machineViewsCachedMax) {
    this.#max = max
  }

  /** The reply to `machine`'s fetch from `model`, its agent holding the view of revision `since` (if any). */
  answer (model: ModelContext, machine: string, since: number | undefined): Extract<MachineModelReply, { ok: true }> {
    const kept = this.#views.get(machine)
    this.#views.delete(machine)
    const held = kept !== undefined && since === kept.view.revision ? kept : undefined
    // The sources kept stand: every part is the same object, and a unit record that moved
    // only its agent status still compares as the same (sameButAgentStatus).
    if (held !== undefined && sameViewSourcesAs(held.sources, model)) return this.#unchanged(machine, held, model, held.sources)
    // Only parts the view takes whole from the model moved (its config): the view is the
    // kept one with those replaced, and it reads the same keys (issue 28: a model-config
    // change built and compared a view per machine at every controller).
    const verbatim = held === undefined ? undefined : verbatimViewChanges(held.view, held.sources, model)
    if (held !== undefined && verbatim !== undefined) {
      const sources = withWholeParts(held.sources, model)
      if (noViewChanges(verbatim)) return this.#unchanged(machine, held, model, sources)
      this.#keep(machine, { view: { ...held.view, ...verbatim }, sources }, undefined)
      return { ok: true, since: held.view.revision, changed: verbatim }
    }
    const reads: Array<readonly [ViewReadTable, string]> = []
    const view = machineModelView(model, machine, (table, key) => { reads.push([table, key]) })
    const sources = viewSourcesOf(model, reads)
    if (held !== undefined) {
      const changed = viewChanges(held.view, view)
      // The same content read the same keys: the footprint kept with it stands.
      if (noViewChanges(changed)) return this.#unchanged(machine, held, model, sources)
      this.#keep(machine, { view, sources }, reads)
      return { ok: true, since: held.view.revision, changed }
    }
    this.#keep(machine, { view, sources }, reads)
    return { ok: true, model: view }
  }

  /** The machines whose kept view may differ between the two models, or 'all' (view-readers.ts). */
  affected (before: ModelContext, after: ModelContext): ReadonlySet<string> | 'all' {
    return this.#readers.affected(before, after)
  }

  #unchanged (machine: string, held: Kept, model: ModelContext, sources: ViewSources): Extract<MachineModelReply, { unchanged: true }> {
    held.sources = sources
    this.#views.set(machine, held)
    return { ok: true, unchanged: true, revision: model.revision, term: model.term }
  }

  /** `reads` undefined: the view read the same keys as the one it replaces. */
  #keep (machine: string, kept: Kept, reads: ReadonlyArray<readonly [ViewReadTable, string]> | undefined): void {
    this.#views.set(machine, kept)
    if (reads !== undefined) this.#readers.set(machine, reads.map(([table, key]) => readKey(table, key)))
    this.onReplaced?.(machine)
    if (this.#views.size > this.#max) {
      const oldest = this.#views.keys().next().value!
      this.#views.delete(oldest)
      this.#readers.forget(oldest)
      this.onReplaced?.(oldest)
    }
  }
}
