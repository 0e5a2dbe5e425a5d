/**
 * The program bundles' loader (agent/tools/cached-program.ts): it runs a bundle from V8's
 * code cache when the cache was made from that bundle and V8 takes it, and runs it all
 * the same, compiled from source, when the cache is missing, for another bundle or
 * garbage. And the build's own caches (scripts/build.ts, scripts/code-cache.ts) are ones
 * this Node takes, without the flag they were made with.
 */
import '../runtime/polyfill.ts'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Script } from 'node:vm'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cacheDigestBytes, runCachedProgram, wrapProgram } from '../agent/tools/cached-program.ts'
import { distProgram, repoRoot } from './support/dist.ts'

const loader = suite('cached program')

/** A bundle that records how it was called: its import.meta stand-ins and the loader's import. */
const bundleSource = `globalThis.cachedProgramRan = { url: ${'__cantripImportMetaUrl'}, imported: __cImp('node:os').then(m => typeof m.cpus) }
function unusedHelper (n) { return n * 2 }
`

function withBundle (fn: (dir: string, digest: string) => Promise<void> | void): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cantrip-cached-program-'))
    try {
      writeFileSync(join(dir, 'p.cjs'), bundleSource)
      await fn(dir, createHash('sha256').update(bundleSource).digest('hex'))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

function makeCache (dir: string, digest: string): void {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts', 'code-cache.ts'), join(dir, 'p.cjs'), join(dir, 'p.cjs.v8cache'), digest], { cwd: repoRoot, encoding: 'utf8' })
  assert.is(run.status, 0, run.stderr)
}

async function load (dir: string, digest: string): Promise<{ cacheUsed: boolean, url: string, imported: string }> {
  const metaUrl = pathToFileURL(join(dir, 'loader.mjs')).href
  const result = runCachedProgram({ metaUrl, metaResolve: s => s, importModule: async s => await import(s), bundle: 'p.cjs', digest })
  const ran = (globalThis as { cachedProgramRan?: { url: string, imported: Promise<string> } }).cachedProgramRan!
  return { cacheUsed: result.cacheUsed, url: ran.url, imported: await ran.imported }
}

loader('runs the bundle from its cache, with the loader\'s import.meta and import', withBundle(async (dir, digest) => {
  makeCache(dir, digest)
  assert.equal(await load(dir, digest), { cacheUsed: true, url: pathToFileURL(join(dir, 'loader.mjs')).href, imported: 'function' })
}))

loader('runs the bundle from source without a cache', withBundle(async (dir, digest) => {
  assert.is((await load(dir, digest)).cacheUsed, false)
}))

loader('a cache made from another bundle is not used', withBundle(async (dir, digest) => {
  makeCache(dir, digest)
  const other = 'f'.repeat(64)
  assert.is((await load(dir, other)).cacheUsed, false)
}))

loader('a cache V8 rejects (garbage after the right digest) costs only the compile', withBundle(async (dir, digest) => {
  writeFileSync(join(dir, 'p.cjs.v8cache'), Buffer.concat([Buffer.from(digest, 'hex'), Buffer.from('not a code cache at all')]))
  const run = await load(dir, digest)
  assert.is(run.cacheUsed, false)
  assert.is(run.imported, 'function')
}))

loader('a missing bundle is one line naming the file, and exit 1', withBundle(async dir => {
  writeFileSync(join(dir, 'loader.mjs'), `import { startProgram } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'agent', 'tools', 'cached-program.ts')).href)}\nstartProgram({ metaUrl: import.meta.url, metaResolve: s => s, importModule: s => import(s), bundle: 'absent.cjs', digest: '' })\n`)
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(dir, 'loader.mjs')], { cwd: repoRoot, encoding: 'utf8' })
  assert.is(run.status, 1)
  assert.is(run.stderr, `cantrip: expected the program bundle ${join(dir, 'absent.cjs')} (npm run build writes it), got ENOENT\n`)
  assert.is(run.stdout, '')
}))

loader('the build\'s caches of the client and the agent are taken by this Node', () => {
  for (const name of ['cantrip', 'cantripd'] as const) {
    const bundle = distProgram(name).replace(/\.mjs$/, '.cjs')
    const source = readFileSync(bundle, 'utf8')
    const cache = readFileSync(`${bundle}.v8cache`)
    assert.equal(cache.subarray(0, cacheDigestBytes), createHash('sha256').update(source).digest(), `${name}: digest`)
    const script = new Script(wrapProgram(source), { filename: bundle, cachedData: cache.subarray(cacheDigestBytes) })
    assert.is(script.cachedDataRejected, false, name)
  }
})

loader.run()
