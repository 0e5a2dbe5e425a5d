/**
 * Test fixture: a Libp2pTransport in a process of its own, so a test can kill -9 it (as a
 * controller dies) and watch what its peers see. Reads its peer key and network key from
 * argv (base64), listens on loopback, prints its address on stdout and waits to be killed.
 */
import '../../runtime/polyfill.ts'
import { Libp2pTransport } from '../../agent/mesh/libp2p-transport.ts'

const [privateKey, networkKey] = process.argv.slice(2).map(arg => new Uint8Array(Buffer.from(arg, 'base64')))
const transport = await Libp2pTransport.create({ privateKey: privateKey!, networkKey: networkKey!, heartbeatIntervalMs: 100 })
process.stdout.write(`${transport.addresses()[0]!}\n`)
process.on('SIGTERM', () => { void transport.stop().then(() => process.exit(0)) })
