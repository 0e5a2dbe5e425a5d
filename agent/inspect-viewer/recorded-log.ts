import { readFile, stat } from 'node:fs/promises'
import { mergeByTime } from './model/event-log.ts'
import { viewerLimits } from './viewer-limits.ts'

/**
 * Recorded inspection logs (`cantripd --inspect-log FILE`, `cantrip sim --inspect-log
 * FILE`): JSONL, one wire message per line with `at`. Several logs are merged by time.
 * A line that is not a JSON object is refused with its file and line number.
 */

const component = 'cantrip inspect'

export async function readRecordedLog (file: string): Promise<Array<Record<string, unknown>>> {
  const size = (await stat(file).catch(() => { throw new Error(`${component}: expected a recorded log at ${file}, got no such file`) })).size
  if (size > viewerLimits.logFileBytesMax) throw new Error(`${component}: expected a log of at most ${viewerLimits.logFileBytesMax} bytes, got ${size} in ${file}`)
  const lines = (await readFile(file, 'utf8')).split('\n')
  const messages: Array<Record<string, unknown>> = []
  lines.forEach((line, i) => {
    if (line.trim() === '') return
    let value: unknown
    try { value = JSON.parse(line) } catch { throw new Error(`${component}: expected JSON on line ${i + 1} of ${file}, got ${line.slice(0, 60)}`) }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { at?: unknown }).at !== 'number') {
      throw new Error(`${component}: expected a message with "at" on line ${i + 1} of ${file}, got ${line.slice(0, 60)}`)
    }
    messages.push(value as Record<string, unknown>)
  })
  return messages
}

export async function readRecordedLogs (files: readonly string[]): Promise<Array<Record<string, unknown>>> {
  const logs = await Promise.all(files.map(readRecordedLog))
  return mergeByTime(logs as Array<Array<Record<string, unknown> & { at: number }>>)
}
