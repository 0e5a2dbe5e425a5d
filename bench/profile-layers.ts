import { existsSync, readFileSync } from 'node:fs'
import { SourceMap } from 'node:module'
import { fileURLToPath } from 'node:url'

/**
 * `node --import tsx bench/profile-layers.ts FILE.cpuprofile…`: a V8 CPU profile's samples
 * by layer of the mesh stack (issue 28), each sample counted once for the innermost layer
 * on its stack that is named below (so Node's socket code called from yamux counts as the
 * socket, a Uint8Array copy inside Noise as Noise). Works on the sources run through tsx
 * and on the bundle (esbuild keeps function names, and the bundle's source map is not
 * needed: the layers are told apart by package path or function name).
 */
interface CallFrame { functionName: string, url: string, lineNumber: number, columnNumber: number }
interface ProfileNode { id: number, callFrame: CallFrame, children?: number[] }
interface Profile { nodes: ProfileNode[], samples: number[], timeDeltas?: number[] }

/** Layers by the package (or file) a frame's code comes from; first match wins. */
const layers: Array<[string, RegExp]> = [
  ['socket (@libp2p/tcp, node:net)', /@libp2p\/tcp|stream-to-it/],
  ['pnet (xsalsa20) / network handshake', /@libp2p\/pnet|xsalsa20|network-handshake/],
  ['wasm ciphers (Noise ChaCha20-Poly1305, pnet XSalsa20)', /^wasm:/],
  ['noise', /libp2p-noise|as-chacha20poly1305|@noble\/|network-noise/],
  ['yamux', /libp2p-yamux|lazy-window-updates/],
  ['gossipsub / pubsub', /gossipsub|@libp2p\/pubsub|protons|signing-key|wire-message-id/],
  ['request channel', /agent\/mesh\/(request-channel|serving-channel|channel-frames|frame-writer|mesh-envelopes)/],
  ['msgpackr', /msgpackr|runtime\/codec/],
  ['it-* / uint8arraylist plumbing', /\/it-|uint8arraylist|race-signal|p-defer|@libp2p\/utils|abort-error|main-event/],
  ['libp2p core', /node_modules\/libp2p\/|@libp2p\//],
  ['transport (ours)', /agent\/mesh\//]
]

/** Node's own code and V8's entries count for the package that called them. */
function isNodeOwn (url: string): boolean {
  return url === '' || url.startsWith('node:')
}

function layerOf (url: string): string {
  for (const [name, pattern] of layers) if (pattern.test(url)) return name
  return 'other (ours, bench, …)'
}

const maps = new Map<string, SourceMap | undefined>()

/** A bundle frame's original source (dist/*.mjs.map, *.cjs.map), so the bundle's layers are told apart too. */
function sourceOf (frame: CallFrame): string {
  if (!frame.url.startsWith('file://') || !/\.[cm]js$/.test(frame.url)) return frame.url
  if (!maps.has(frame.url)) {
    const mapFile = `${fileURLToPath(frame.url)}.map`
    maps.set(frame.url, existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : undefined)
  }
  const entry = maps.get(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber)
  return entry !== undefined && 'originalSource' in entry ? entry.originalSource : frame.url
}

export function layerShares (profile: Profile): Array<{ layer: string, share: number }> {
  const byId = new Map(profile.nodes.map(node => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const counts = new Map<string, number>()
  let busy = 0
  for (const sample of profile.samples) {
    const leaf = byId.get(sample)!.callFrame.functionName
    if (leaf === '(idle)') continue
    busy++
    let layer = leaf === '(garbage collector)' ? 'gc' : undefined
    for (let id: number | undefined = sample; id !== undefined && layer === undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame
      if (!isNodeOwn(frame.url)) layer = layerOf(sourceOf(frame))
    }
    // Nothing of ours or a package's on the stack: Node's event loop reading sockets, timers.
    const name = layer ?? 'node (event loop, socket reads, microtasks)'
    counts.set(name, (counts.get(name) ?? 0) + 1)
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([layer, c]) => ({ layer, share: Number((c / busy * 100).toFixed(1)) }))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of process.argv.slice(2)) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
    console.log(`${file} (${profile.samples.length} samples; shares of the busy ones)`)
    for (const row of layerShares(profile)) console.log(`  ${String(row.share).padStart(5)} %  ${row.layer}`)
  }
}
