import { closeSync, openSync, writeSync } from 'node:fs'
import { createInspector, type StatelyInspectionEvent } from '@statelyai/inspect'
import type { InspectionEvent, Observer } from 'xstate'

/**
 * `cantrip sim … --inspect-log [FILE]`: the simulated actors' inspection messages as
 * the JSONL `cantripd --inspect-log` writes (one `@statelyai/inspect` wire message per
 * line with cantrip's `agent`, `actorKind`, `name`, and `at` — here the simulated time),
 * so `cantrip inspect --log FILE` (or `--sim REPORT.json`) opens a simulated run like a
 * recorded live one. The machine agents' actors (actors/machine/machine-agent.ts: the
 * deployer, the unit and relation actors) are inspected; one run at a time (not a swarm). Values are not redacted: a
 * simulated model has no secrets.
 */

export type SimActorKind = 'unit' | 'relation' | 'machine' | 'raft' | 'provisioner' | 'deployer' | 'other'

interface Sink { write: (line: string) => void, close: () => void, lines: number }

/** Lines one log may hold; past it the log ends with a note (a runaway scenario must not fill the disk). */
export const simInspectLinesMax = 5_000_000

/** Nesting depth serialised (statechart definitions and snapshots). */
const definitionDepthMax = 64

let sink: Sink | undefined

/** Starts writing the log (replacing the file); every unit actor started until `stop` is inspected. */
export function startSimInspectLog (file: string): { stop: () => number } {
  if (sink !== undefined) throw new Error(`sim: expected one --inspect-log at a time, got a second (${file})`)
  const fd = openSync(file, 'w')
  let closed = false
  const current: Sink = {
    lines: 0,
    write: line => {
      // Actors still stopping after the run ended are not logged.
      if (closed || current.lines >= simInspectLinesMax) return
      writeSync(fd, `${line}\n`)
      current.lines++
    },
    close: () => {
      if (closed) return
      closed = true
      closeSync(fd)
    }
  }
  sink = current
  return {
    stop: () => {
      current.close()
      if (sink === current) sink = undefined
      return current.lines
    }
  }
}

/** The kind of an inspected actor from its definition's id; XState's invoked helpers are `other`. */
function kindOf (definition: string | undefined): SimActorKind {
  let id: unknown
  try { id = definition === undefined ? undefined : (JSON.parse(definition) as { id?: unknown }).id } catch { id = undefined }
  return id === 'unit' || id === 'relation' || id === 'machine' ? id : 'other'
}

/**
 * The `inspect` option for a root actor named `name` of `kind` in agent `agent` (and its
 * children), with `now` the agent's simulated clock; `{}` when no log is being written.
 */
export function simInspectOption (agent: string, kind: SimActorKind, name: string, now: () => number): { inspect?: Observer<InspectionEvent> } {
  const target = sink
  if (target === undefined) return {}
  const names = new Map<string, { actorKind: SimActorKind, name: string }>()
  let root: string | undefined
  const send = (event: StatelyInspectionEvent): void => {
    if (event.type === '@xstate.actor' && !names.has(event.sessionId)) {
      root ??= event.sessionId
      names.set(event.sessionId, event.sessionId === root ? { actorKind: kind, name } : { actorKind: kindOf(event.definition), name: `${name}/${event.name}` })
    }
    const known = names.get(event.sessionId) ?? { actorKind: 'other', name: event.sessionId }
    target.write(JSON.stringify({ ...event, agent, actorKind: known.actorKind, name: known.name, at: Math.floor(now()) }))
  }
  // Definitions are nested deeper than Stately's default depth (10) cuts them at.
  return { inspect: createInspector({ send }, { serializationDepthLimit: definitionDepthMax }).inspect }
}
