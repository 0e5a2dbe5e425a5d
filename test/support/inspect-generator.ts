/**
 * A stand-in inspecting agent for the viewer's tests and bench: real unit actors (the
 * uniter statechart from actors/unit/, with their relation actors) whose side effects are
 * stubs (hooks succeed after `hookMs`), inspected with `@statelyai/inspect`'s
 * createInspector and served over WebSocket on 127.0.0.1 in the wire format `cantripd
 * --inspect` speaks: Stately inspection events plus `agent`, `actorKind` and `name`; a
 * client first gets every actor as it is now, then live messages.
 */
import { createInspector, type StatelyInspectionEvent } from '@statelyai/inspect'
import { WebSocketServer, type WebSocket } from 'ws'
import type { AnyActorRef } from 'xstate'
import type { HookOutcome, DeployOutcome, ActionOutcome, CommandOutcome } from '../../actors/unit/operation.ts'
import type { LocalState } from '../../actors/unit/local-state.ts'
import { createUnitActor, type UnitInput } from '../../actors/unit/unit-machine.ts'
import type { UnitPorts } from '../../actors/unit/unit-ports.ts'
import type { RemoteState } from '../../actors/unit/remote-state.ts'

export interface GeneratedAgent {
  readonly agent: string
  readonly url: string
  readonly units: readonly string[]
  /** Every message sent, in order (with `at`), as a recorded log would hold them. */
  readonly recorded: Array<Record<string, unknown>>
  /** Changes a unit's config hash, so it runs config-changed (as `cantrip config` would). */
  changeConfig: (unit: string, hash: string) => void
  close: () => Promise<void>
}

export interface GeneratorOptions {
  agent: string
  units: readonly string[]
  hookMs?: number
  /** Listen for clients (default true); false only records. */
  serve?: boolean
  /** Hooks (by kind, e.g. `config-changed`) that fail, as a hook exiting 1 would. */
  failing?: ReadonlySet<string>
}

function remoteFor (unit: string, configHash: string): RemoteState {
  const app = unit.split('/')[0]!
  return {
    life: 'alive',
    resolvedMode: 'none',
    charm: { url: `local:${app}-0`, modifiedVersion: 0, forceUpgrade: false },
    configHash,
    trustHash: '',
    addressesHash: 'addr-0',
    leader: unit.endsWith('/0'),
    leaderSettingsVersion: 1,
    relations: {
      1: { id: 1, endpoint: 'peers', remoteApplication: app, life: 'alive', suspended: false, peer: true, implicit: false, containerScoped: false, members: {}, applicationVersion: 0 }
    },
    storage: {},
    storageRequiredForInstall: [],
    actions: [],
    commands: [],
    subordinates: []
  } as unknown as RemoteState
}

/** Stub effects for every generated unit (bound to each actor as its ports): hooks succeed after `hookMs`. */
function generatedUnitPorts (hookMs: number, failing: ReadonlySet<string>): UnitPorts {
  const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))
  return {
    loadLocalState: async (): Promise<LocalState | undefined> => undefined,
    persistLocalState: async (): Promise<void> => undefined,
    acquireHookLock: (_unit, acquired) => { acquired(); return () => undefined },
    runHook: async (input): Promise<HookOutcome> => {
      await sleep(hookMs)
      return failing.has(input.hook.kind) ? { kind: 'failed', exitCode: 1, reason: 'exit status 1' } : { kind: 'succeeded' }
    },
    deployCharm: async (): Promise<DeployOutcome> => ({ kind: 'deployed' }),
    runAction: async (): Promise<ActionOutcome> => ({ status: 'completed', results: {} }),
    runCommand: async (): Promise<CommandOutcome> => ({ exitCode: 0, stdout: '', stderr: '' })
  }
}

/** The cantrip kind of an actor, from its definition's id (`unit`, `relation`); XState's helpers are `other`. */
function kindOf (definition: string | undefined): string {
  let id: unknown
  try { id = definition === undefined ? undefined : (JSON.parse(definition) as { id?: unknown }).id } catch { id = undefined }
  return typeof id === 'string' && ['unit', 'relation', 'machine'].includes(id) ? id : 'other'
}

export async function startGeneratedAgent (options: GeneratorOptions): Promise<GeneratedAgent> {
  const { agent } = options
  const recorded: Array<Record<string, unknown>> = []
  const clients = new Set<WebSocket>()
  /** The latest @xstate.actor message per session, with its latest snapshot: what a new client gets first. */
  const current = new Map<string, Record<string, unknown>>()
  const meta = new Map<string, { actorKind: string, name: string }>()

  const send = (event: StatelyInspectionEvent): void => {
    if (event.type === '@xstate.actor') {
      const actorKind = kindOf(event.definition)
      const context = (event.snapshot.context ?? {}) as { unit?: string }
      const name = actorKind === 'unit' && typeof context.unit === 'string'
        ? `unit-${context.unit.replace('/', '-')}`
        : event.name
      meta.set(event.sessionId, { actorKind, name })
    }
    const m = meta.get(event.sessionId) ?? { actorKind: 'other', name: event.sessionId }
    const message: Record<string, unknown> = { ...event, agent, actorKind: m.actorKind, name: m.name, at: Date.now() }
    if (event.type === '@xstate.actor') current.set(event.sessionId, message)
    if (event.type === '@xstate.snapshot') {
      const known = current.get(event.sessionId)
      if (known !== undefined) current.set(event.sessionId, { ...known, snapshot: event.snapshot })
    }
    recorded.push(message)
    const line = JSON.stringify(message)
    for (const client of clients) client.send(line)
  }
  const inspector = createInspector({ send })
  const ports = generatedUnitPorts(options.hookMs ?? 50, options.failing ?? new Set())
  const actors = new Map<string, AnyActorRef>()
  for (const unit of options.units) {
    const input: UnitInput = { unit, seed: 1, remote: remoteFor(unit, 'c0'), updateStatusIntervalMs: 3_600_000, automaticallyRetryHooks: false }
    const actor = createUnitActor(ports, { input, inspect: inspector.inspect })
    actors.set(unit, actor)
    actor.start()
  }

  let server: WebSocketServer | undefined
  let url = ''
  if (options.serve !== false) {
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 })
    await new Promise<void>(resolve => server!.once('listening', () => resolve()))
    const address = server.address()
    url = `ws://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
    server.on('connection', socket => {
      for (const message of current.values()) socket.send(JSON.stringify(message))
      clients.add(socket)
      socket.on('close', () => clients.delete(socket))
    })
  }

  return {
    agent,
    url,
    units: options.units,
    recorded,
    changeConfig: (unit, hash) => {
      const actor = actors.get(unit)
      if (actor === undefined) throw new Error(`inspect generator: expected one of ${options.units.join(', ')}, got unit ${JSON.stringify(unit)}`)
      actor.send({ type: 'remote.changed', remote: remoteFor(unit, hash) })
    },
    close: async () => {
      for (const actor of actors.values()) actor.stop()
      for (const client of clients) client.terminate()
      if (server !== undefined) await new Promise<void>(resolve => server!.close(() => resolve()))
    }
  }
}
