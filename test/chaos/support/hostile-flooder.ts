/**
 * An insider flooding a topic from its own process (so its signing and sending do not
 * slow the peers under test, which share the test's event loop): a libp2p peer with the
 * network key dials the victim, subscribes, prints "ready", then on "go" on stdin
 * publishes `burst` notices every `intervalMs` until stdin closes or "stop" arrives,
 * printing "sent N" after each burst.
 *
 *   node --import tsx test/chaos/support/hostile-flooder.ts <network key hex> <victim multiaddr> <topic> <burst> <intervalMs>
 */
import '../../../runtime/polyfill.ts'
import { Libp2pTransport } from '../../../agent/mesh/libp2p-transport.ts'
import { generatePeerKey } from '../../../agent/mesh/peer-identity.ts'

const [keyHex, victim, topic, burstText, intervalText] = process.argv.slice(2)
if (keyHex === undefined || victim === undefined || topic === undefined || burstText === undefined || intervalText === undefined) {
  process.stderr.write('hostile-flooder: expected <network key hex> <victim multiaddr> <topic> <burst> <intervalMs>\n')
  process.exit(2)
}
const burst = Number(burstText)
const intervalMs = Number(intervalText)
const flooder = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey: Buffer.from(keyHex, 'hex'), heartbeatIntervalMs: 100 })
flooder.subscribe(topic, () => {})
await flooder.dial(victim, { timeoutMs: 10_000 })
const deadline = performance.now() + 10_000
while (flooder.topicPeers(topic).length === 0 && performance.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
process.stdout.write(`ready ${flooder.peerId}\n`)

let flooding = false
let sent = 0
process.stdin.setEncoding('utf8').on('data', (text: string) => {
  if (text.includes('go')) flooding = true
  if (text.includes('stop')) flooding = false
})
const closed = new Promise<void>(resolve => { process.stdin.once('end', resolve); process.stdin.once('close', resolve) })
let done = false
void closed.then(() => { done = true })
while (!done) {
  if (flooding) {
    for (let i = 0; i < burst; i++) await flooder.publish(topic, new TextEncoder().encode(`flood ${sent++}`)).catch(() => {})
    // Progress after every burst: the test keeps the flood going until it is big enough, whatever the machine's load.
    process.stdout.write(`sent ${sent}\n`)
  }
  await new Promise(resolve => setTimeout(resolve, intervalMs))
  if (!flooding && sent > 0) process.stdout.write(`sent ${sent}\n`)
}
await flooder.stop()
process.exit(0)
