/**
 * Change notices over the real libp2p mesh: a notice from a controller reaches a machine
 * agent's watcher; the same notice published by a machine agent (a controller-only
 * topic) is rejected by the receivers, counted, lowers the sender's score, and changes
 * nothing.
 */
import '../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { changeNoticeValidator, changeTopic, parseChangeNotice } from '../actors/controller/change-notices.ts'
import { Libp2pWorld } from '../agent/mesh/libp2p-world.ts'
import { encode } from '../runtime/codec.ts'

test('a machine agent publishing on the controller-only notice topic is rejected, counted and penalised; a controller is heard', async () => {
  const world = await Libp2pWorld.create({ peers: 3, heartbeatIntervalMs: 200 })
  try {
    const [controller, machineA, machineB] = world.transports as [typeof world.transports[number], typeof world.transports[number], typeof world.transports[number]]
    const topic = changeTopic('model-1')
    const heard: number[] = []
    // Every peer validates the topic: only the controller's notices are accepted.
    for (const transport of world.transports) transport.setTopicValidator(topic, changeNoticeValidator(() => new Set([controller.peerId])))
    machineA.subscribe(topic, message => { heard.push(parseChangeNotice(message.data)!.revision) })
    machineB.subscribe(topic, () => {})
    controller.subscribe(topic, () => {})
    await world.waitForMesh(topic, 10_000)

    await controller.publish(topic, encode({ v: 1, revision: 7 }, 'test'))
    await world.waitFor('the controller\'s notice', () => heard.includes(7), 5_000)

    const rejectedBefore = machineA.counters().rejected
    await machineB.publish(topic, encode({ v: 1, revision: 999 }, 'test'))
    await world.waitFor('machine B\'s notice rejected by machine A', () => machineA.counters().rejected > rejectedBefore, 5_000)
    await world.wait(300)
    assert.not.ok(heard.includes(999), 'the forged notice was never delivered')
    assert.ok(machineA.peerScore(machineB.peerId) < 0, `machine B's score at machine A: ${machineA.peerScore(machineB.peerId)}`)
  } finally {
    await world.close()
  }
})

test.run()
