/**
 * A bounded, append-only list as plain data, split into chunks so appending copies one
 * chunk and the chunk index instead of the whole list. When it grows past its maximum
 * the oldest whole chunks are dropped, so it keeps between `max - chunkSize + 1` and
 * `max` of the newest items.
 */
export type ChunkedList<T> = readonly (readonly T[])[]

export const listChunkSize = 256

export function listLength<T> (list: ChunkedList<T>): number {
  let length = 0
  for (const chunk of list) length += chunk.length
  return length
}

export function * listItems<T> (list: ChunkedList<T>): Generator<T> {
  for (const chunk of list) yield * chunk
}

/** Appends `items`; returns the new list and the items dropped from its head to stay within `max`. */
export function listAppend<T> (list: ChunkedList<T>, items: readonly T[], max: number): { list: ChunkedList<T>, dropped: T[] } {
  if (items.length === 0) return { list, dropped: [] }
  const chunks = [...list]
  let last = chunks.length > 0 ? [...chunks.pop()!] : []
  for (const item of items) {
    if (last.length >= listChunkSize) {
      chunks.push(last)
      last = []
    }
    last.push(item)
  }
  chunks.push(last)
  let length = 0
  for (const chunk of chunks) length += chunk.length
  const dropped: T[] = []
  while (length > max && chunks.length > 0) {
    const head = chunks.shift()!
    length -= head.length
    dropped.push(...head)
  }
  return { list: chunks, dropped }
}

/** The items whose `key(item) > bound`, for a list ordered by `key`. */
export function listAfter<T> (list: ChunkedList<T>, key: (item: T) => number, bound: number): T[] {
  // Find the first chunk whose last item is beyond the bound, then scan from there.
  let low = 0
  let high = list.length
  while (low < high) {
    const mid = (low + high) >>> 1
    const chunk = list[mid]!
    if (chunk.length > 0 && key(chunk[chunk.length - 1]!) > bound) high = mid
    else low = mid + 1
  }
  const out: T[] = []
  for (let i = low; i < list.length; i++) {
    for (const item of list[i]!) if (key(item) > bound) out.push(item)
  }
  return out
}
