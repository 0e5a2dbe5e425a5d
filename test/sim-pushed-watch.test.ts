/**
 * The view watch's push path in the whole simulated system (issue 28's "the tested code
 * is the shipped code"): examples/sim/connection-reset-while-changes-pushed.yaml resets
 * the machines' connections to each controller, loses pushes to message loss and kills
 * the leader while changes are being pushed on held watches. The run must pass (every
 * agent at the newest view after the heal), and every view an agent is given, pushed or
 * answered, must be at least the revision its watch named: the controllers never take an
 * agent back in time.
 */
import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { decodeApiReply } from '../actors/controller/api-requests.ts'
import { replyRevision } from '../actors/machine/view-watch.ts'
import { decode } from '../runtime/codec.ts'
import type { RequestOptions, Transport } from '../runtime/transport.ts'
import { parseScenario } from '../sim/scenario/parse-scenario.ts'
import { defaultSystemParts, runScenario } from '../sim/scenario/run-scenario.ts'
import type { MachineAgentNetwork } from '../sim/system/machine-agent-types.ts'
import { SimMachineAgent } from '../sim/system/sim-machine-agent.ts'

const path = new URL('../examples/sim/connection-reset-while-changes-pushed.yaml', import.meta.url).pathname
const scenario = parseScenario(readFileSync(path, 'utf8'), path)

interface WatchLog {
  pushes: number
  answers: number
  /** Watches that failed because their connection was reset. */
  reset: number
  /** Views given below the revision the watch named. */
  older: string[]
}

/** A machine-watch request's named revision, or undefined for any other request. */
function watchedRevision (data: Uint8Array): number | undefined {
  const request = decode(data, 'test') as { op?: unknown, revision?: unknown }
  return request.op === 'machine-watch' && typeof request.revision === 'number' ? request.revision : undefined
}

/** The agent's network, its transports' watch requests observed (pushes and answers checked against the revision named). */
function observed (network: MachineAgentNetwork, log: WatchLog): MachineAgentNetwork {
  const check = (peer: string, named: number, bytes: Uint8Array, how: string): void => {
    const reply = decodeApiReply('machine-watch', bytes, 'test')
    if (!reply.ok) return
    const revision = replyRevision(reply)
    if (revision < named) log.older.push(`${peer} ${how} revision ${revision} to a watch naming ${named}`)
  }
  const watch = (transport: Transport): Transport['request'] => async (peer, protocol, data, options) => {
    const named = watchedRevision(data)
    if (named === undefined) return await transport.request(peer, protocol, data, options)
    const onPush = options.onPush
    const spied: RequestOptions = onPush === undefined
      ? options
      : { ...options, onPush: bytes => { log.pushes++; check(peer, named, bytes, 'pushed'); onPush(bytes) } }
    try {
      const answer = await transport.request(peer, protocol, data, spied)
      log.answers++
      check(peer, named, answer, 'answered')
      return answer
    } catch (error) {
      if ((error as Error).name === 'PeerUnreachableError' && /connection reset/.test((error as Error).message)) log.reset++
      throw error
    }
  }
  return {
    transport: peerId => {
      const transport = network.transport(peerId)
      const request = watch(transport)
      // The rest is the transport's own, called on it (its private fields need the real receiver).
      return new Proxy(transport, {
        get: (target, key) => {
          if (key === 'request') return request
          const value = Reflect.get(target, key, target) as unknown
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
        }
      })
    },
    crash: peerId => { network.crash(peerId) }
  }
}

test('agents end at the newest view, never older than the revision they named, when connections reset under pushed changes', async () => {
  const log: WatchLog = { pushes: 0, answers: 0, reset: 0, older: [] }
  const parts = {
    ...defaultSystemParts,
    startMachineAgent: (options: ConstructorParameters<typeof SimMachineAgent>[0]) => new SimMachineAgent({ ...options, network: observed(options.network, log) })
  }
  const { result } = await runScenario(scenario, { seed: scenario.seed, scenarioPath: path, recordEvents: true }, parts)
  assert.is(result.outcome, 'pass', result.failure)
  assert.ok(result.convergedAtMs !== undefined, 'converged after the heal')
  assert.equal(log.older, [])
  assert.ok(log.pushes >= 20, `changes pushed on held watches: ${log.pushes}`)
  assert.ok(log.reset >= 2, `held watches that a reset connection failed: ${log.reset}`)
  const resets = result.faults.filter(fault => fault.kind === 'reset-connection').length
  assert.ok(resets >= 8, `reset-connection faults scheduled: ${resets}`)
})

test.run()
