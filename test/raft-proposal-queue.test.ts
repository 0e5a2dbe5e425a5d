import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { limits } from '../runtime/limits.ts'
import { ProposalQueue, type CommandGrouping } from '../runtime/raft/proposal-queue.ts'

/**
 * The leader's group-commit queue (runtime/raft/proposal-queue.ts), on its own: bounded,
 * ordered, one entry per proposal without a grouping, and every waiter settled.
 */

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)
const text = (data: Uint8Array): string => new TextDecoder().decode(data)

/** Joins commands with "+" and splits a "+"-joined result back. */
const joining: CommandGrouping<string, string> = {
  commandsMax: 3,
  bytesMax: 100,
  groupable: command => command !== 'solo',
  encodeGroup: encoded => bytes(encoded.map(text).join('+')),
  splitResult: (result, count) => {
    const parts = result.split('+')
    assert.is(parts.length, count)
    return parts
  }
}

function queue (grouping: CommandGrouping<string, string> | undefined, queuedMax = 10): { q: ProposalQueue<string, string>, settled: string[], add: (command: string) => boolean } {
  const q = new ProposalQueue<string, string>(grouping, queuedMax)
  const settled: string[] = []
  const add = (command: string): boolean => q.add(command, bytes(command), r => { settled.push(`${command}=${r}`) }, e => { settled.push(`${command}!${e.message}`) })
  return { q, settled, add }
}

test('proposals go as entries of at most commandsMax, in order; one that may not be grouped goes alone', () => {
  const { q, settled, add } = queue(joining)
  for (const command of ['a', 'b', 'c', 'd', 'solo', 'e']) add(command)
  const entries = q.take()
  assert.equal(entries.map(e => text(e.data)), ['a+b+c', 'd', 'solo', 'e'])
  assert.is(q.size, 0)
  entries[0]!.resolve('1+2+3')
  entries[2]!.reject(new Error('lost'))
  assert.equal(settled, ['a=1', 'b=2', 'c=3', 'solo!lost'])
})

test('without a grouping every proposal is an entry of its own', () => {
  const { q, add } = queue(undefined)
  add('a')
  add('b')
  assert.equal(q.take().map(e => [text(e.data), e.commands]), [['a', 1], ['b', 1]])
})

test(`the queue holds at most its maximum (limits.raftProposalsQueuedMax = ${limits.raftProposalsQueuedMax} on a host), and a stop refuses every waiter`, () => {
  const { q, settled, add } = queue(joining, 2)
  assert.equal([add('a'), add('b'), add('c')], [true, true, false])
  q.rejectAll(new Error('stopped'))
  assert.equal(settled, ['a!stopped', 'b!stopped'])
  assert.is(q.size, 0)
})

test.run()
