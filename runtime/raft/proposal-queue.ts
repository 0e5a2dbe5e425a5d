import { assert } from '../assert.ts'

/**
 * How a state machine lets its leader fold several commands into one entry (group
 * commit). Optional: a machine without it gets one entry per command.
 */
export interface CommandGrouping<Command, Result> {
  /** Commands one entry may carry. */
  readonly commandsMax: number
  /** Encoded command bytes one entry may carry; a larger command is an entry of its own. */
  readonly bytesMax: number
  /** False for a command that must be an entry of its own (one that itself holds commands, say). */
  groupable: (command: Command) => boolean
  /** One entry's bytes for the commands `encoded` (each as encodeCommand made it), in order. */
  encodeGroup: (encoded: readonly Uint8Array[]) => Uint8Array
  /** The result of each command, in order, from the result of their entry. */
  splitResult: (result: Result, count: number) => Result[]
}

interface Waiter<Result> {
  readonly data: Uint8Array
  readonly alone: boolean
  readonly resolve: (result: Result) => void
  readonly reject: (error: Error) => void
}

/** One entry to append: its bytes, and how to settle the proposals it carries. */
export interface QueuedEntry<Result> {
  readonly data: Uint8Array
  readonly commands: number
  resolve: (result: Result) => void
  reject: (error: Error) => void
}

/**
 * The leader's proposals waiting for the next Ready (group commit). While the host
 * persists and applies one Ready, the proposals that arrive queue here; when it takes the
 * next, they are appended as few entries as the grouping allows, in arrival order, each
 * command still applying with its own result. etcd's server does the same for its
 * proposals (they wait in the raft node's proposal channel while a Ready is handled and
 * go to the leader's log together); folding them into one entry also makes it one apply
 * pass, one change notice and one look at the held watches on every controller.
 */
export class ProposalQueue<Command, Result> {
  readonly #grouping: CommandGrouping<Command, Result> | undefined
  readonly #queuedMax: number
  #waiting: Array<Waiter<Result>> = []

  constructor (grouping: CommandGrouping<Command, Result> | undefined, queuedMax: number) {
    assert(grouping === undefined || (grouping.commandsMax >= 1 && grouping.bytesMax >= 1), 'proposal queue: a grouping needs room for one command')
    this.#grouping = grouping
    this.#queuedMax = queuedMax
  }

  get size (): number {
    return this.#waiting.length
  }

  /** Queues `data` (encoded `command`); false when limits.raftProposalsQueuedMax are already waiting. */
  add (command: Command, data: Uint8Array, resolve: (result: Result) => void, reject: (error: Error) => void): boolean {
    if (this.#waiting.length >= this.#queuedMax) return false
    const alone = this.#grouping === undefined || !this.#grouping.groupable(command)
    this.#waiting.push({ data, alone, resolve, reject })
    return true
  }

  /** Takes everything queued as entries to append, in order. */
  take (): Array<QueuedEntry<Result>> {
    const waiting = this.#waiting
    this.#waiting = []
    return entryRuns(waiting, this.#grouping).map(run => this.#entry(run))
  }

  /** Refuses everything queued (the host stopped). */
  rejectAll (error: Error): void {
    for (const waiter of this.take()) waiter.reject(error)
  }

  #entry (run: Array<Waiter<Result>>): QueuedEntry<Result> {
    if (run.length === 1) return { data: run[0]!.data, commands: 1, resolve: run[0]!.resolve, reject: run[0]!.reject }
    const grouping = this.#grouping!
    return {
      data: grouping.encodeGroup(run.map(w => w.data)),
      commands: run.length,
      resolve: result => {
        let results: Result[]
        try {
          results = grouping.splitResult(result, run.length)
        } catch (error) {
          // Every proposer hears of it; the host then stops on the broken state machine.
          for (const w of run) w.reject(error instanceof Error ? error : new Error(String(error)))
          throw error
        }
        run.forEach((w, i) => { w.resolve(results[i]!) })
      },
      reject: error => { for (const w of run) w.reject(error) }
    }
  }
}

/**
 * Consecutive proposals in runs of at most `commandsMax` commands and `bytesMax` encoded
 * bytes (a larger one, or one that may not be grouped, alone), in order.
 */
export function entryRuns<W extends { data: Uint8Array, alone: boolean }> (waiting: readonly W[], grouping: Pick<CommandGrouping<unknown, unknown>, 'commandsMax' | 'bytesMax'> | undefined): W[][] {
  const runs: W[][] = []
  let run: W[] = []
  let bytes = 0
  for (const w of waiting) {
    const size = w.data.byteLength
    const fits = grouping !== undefined && !w.alone && run.length < grouping.commandsMax && bytes + size <= grouping.bytesMax
    if (run.length > 0 && (!fits || run[0]!.alone)) {
      runs.push(run)
      run = []
      bytes = 0
    }
    run.push(w)
    bytes += size
  }
  if (run.length > 0) runs.push(run)
  return runs
}
