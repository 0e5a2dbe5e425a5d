/**
 * The agent bundle: what a machine needs, besides Node, to run cantripd at one version
 * (Juju's agent binary tarball, `juju-<version>-<os>-<arch>.tgz`). It is packed from an
 * installation's built dist/ (scripts/build.ts) in the charm archive format
 * (agent/charm/charm-archive.ts: sorted entries, deflated, content-addressed by sha256),
 * so the controllers keep, replicate and serve it with the charm store's own code and a
 * machine unpacks it with the charm unpacker's checks.
 *
 * Entries, under one root that is a package of its own (its package.json says the
 * version, which is what the unpacked agent reports):
 *
 *   package.json                  name, version and type only
 *   dist/cantripd.mjs, .cjs       the agent's loader, its program bundle and V8 code cache
 *   and .cjs.v8cache, chunks      (scripts/build.ts) and the modules they import, found by
 *                                 following their import specifiers (not the client's own)
 *   dist/cantripd-stub.mjs        the launcher a provider starts (agent/cantripd-stub.ts)
 *   dist/cantrip-tool             the hook-tool client, compiled where the bundle was built
 *   node_modules/…                the packages left outside the bundle that the agent
 *                                 loads (classic-level and its dependencies), with only
 *                                 this platform's prebuilt binding
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import { packEntries, readCharmArchive, type CharmArchiveEntry } from '../charm/charm-archive.ts'
import { sha256Hex } from '../charm/charm-chunks.ts'
import { CantripError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import { packageRoot } from '../package-root.ts'

/** This host's platform as the model records binaries: `linux/x64`. */
export const agentPlatform = `${process.platform}/${process.arch}`

/** The packages outside the bundle the agent loads at run time; their dependencies follow. */
const runtimeExternals = ['classic-level']
/** Never shipped: build inputs and documentation of the packages above. */
const skippedNames = new Set(['deps', 'binding.cc', 'binding.gyp', 'CHANGELOG.md', 'UPGRADING.md', 'README.md', 'test', 'docs'])
/**
 * `from "./x.mjs"`, `import("./x.mjs")` and `import "./x.mjs"`, minified (no spaces) or
 * not, and a program bundle's renamed import (`__cImp("./x.mjs")`, agent/tools/cached-program.ts).
 */
const specifierPattern = /(?:from\s*|(?:import|__cImp)\s*\(\s*|import\s*)["'](\.\/[A-Za-z0-9._-]+\.mjs)["']/g

export interface AgentBundle {
  readonly version: string
  readonly platform: string
  readonly bytes: Uint8Array
  /** sha256 of `bytes`: the bundle's address in the controllers' agent store. */
  readonly hash: string
}

export class AgentBundleError extends CantripError {
  override name = 'AgentBundleError'
}

/** Packs the agent of the installation at `root` (its dist/ must be built). */
export function packAgentBundle (root: string = packageRoot): AgentBundle {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name?: unknown, version?: unknown }
  if (typeof manifest.version !== 'string') throw new AgentBundleError(`agent bundle: expected a version in ${join(root, 'package.json')}, got ${JSON.stringify(manifest.version)}`)
  const files = new Map<string, { data: Uint8Array, mode: 0o755 | 0o644 }>()
  const packageJson = `${JSON.stringify({ name: manifest.name, version: manifest.version, type: 'module', private: true }, null, 2)}\n`
  files.set('package.json', { data: new TextEncoder().encode(packageJson), mode: 0o644 })
  for (const name of agentDistFiles(join(root, 'dist'))) {
    files.set(`dist/${name}`, { data: readFileSync(join(root, 'dist', name)), mode: name.endsWith('.mjs') && !name.startsWith('chunk-') ? 0o755 : 0o644 })
  }
  if (existsSync(join(root, 'dist', 'cantrip-tool'))) files.set('dist/cantrip-tool', { data: readFileSync(join(root, 'dist', 'cantrip-tool')), mode: 0o755 })
  for (const pkg of runtimePackages(root)) addPackage(files, root, pkg)
  const entries = withDirectories(files)
  const packed = packEntries(entries)
  return { version: manifest.version, platform: agentPlatform, bytes: packed.bytes, hash: packed.hash }
}

/**
 * cantripd.mjs, the stub, the agent's program bundle and code cache beside its loader
 * (`cantripd.cjs`, `cantripd.cjs.v8cache`), and every module they import, statically or on use.
 */
export function agentDistFiles (dist: string): string[] {
  if (!existsSync(join(dist, 'cantripd.mjs'))) throw new AgentBundleError(`agent bundle: expected the built agent at ${join(dist, 'cantripd.mjs')}, got none; run npm run build`)
  const found = new Set<string>()
  const queue = ['cantripd.mjs', 'cantripd-stub.mjs'].filter(name => existsSync(join(dist, name)))
  while (queue.length > 0) {
    const name = queue.pop()!
    if (found.has(name)) continue
    found.add(name)
    if (found.size > limits.charmArchiveEntriesMax) throw new AgentBundleError(`agent bundle: more than ${limits.charmArchiveEntriesMax} files in ${dist}`)
    const text = readFileSync(join(dist, name), 'utf8')
    const program = name.replace(/\.mjs$/, '.cjs')
    if (name.endsWith('.mjs') && existsSync(join(dist, program))) {
      queue.push(program)
      if (existsSync(join(dist, `${program}.v8cache`))) found.add(`${program}.v8cache`)
    }
    for (const match of text.matchAll(specifierPattern)) {
      const imported = match[1]!.slice(2)
      if (!found.has(imported) && existsSync(join(dist, imported))) queue.push(imported)
    }
  }
  return [...found].sort()
}

/** The runtime externals and their dependencies, by name, as npm installed them at the top of node_modules. */
function runtimePackages (root: string): string[] {
  const found = new Set<string>()
  const queue = [...runtimeExternals]
  while (queue.length > 0) {
    const name = queue.pop()!
    if (found.has(name)) continue
    const manifest = join(root, 'node_modules', name, 'package.json')
    if (!existsSync(manifest)) throw new AgentBundleError(`agent bundle: expected package "${name}" in ${join(root, 'node_modules')}, got none`)
    found.add(name)
    const dependencies = (JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {}
    queue.push(...Object.keys(dependencies))
  }
  return [...found].sort()
}

/** A package's files, without build inputs and with only this platform's prebuilt binaries. */
function addPackage (files: Map<string, { data: Uint8Array, mode: 0o755 | 0o644 }>, root: string, name: string): void {
  const base = join(root, 'node_modules', name)
  // An explicit stack, not recursion: the tree is on disk (CONVENTIONS: bounds).
  const stack = ['']
  while (stack.length > 0) {
    const relative = stack.pop()!
    for (const entry of readdirSync(join(base, relative), { withFileTypes: true })) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`
      if (skippedNames.has(entry.name) || entry.name.endsWith('.d.ts')) continue
      if (relative === 'prebuilds' && entry.name !== `${process.platform}-${process.arch}`) continue
      const stat = lstatSync(join(base, path))
      if (stat.isDirectory()) stack.push(path)
      else if (stat.isFile()) files.set(`node_modules/${name}/${path}`, { data: readFileSync(join(base, path)), mode: (stat.mode & 0o111) !== 0 ? 0o755 : 0o644 })
    }
  }
}

/** The files as archive entries with a directory entry for every parent, as the unpacker requires. */
function withDirectories (files: ReadonlyMap<string, { data: Uint8Array, mode: 0o755 | 0o644 }>): CharmArchiveEntry[] {
  const directories = new Set<string>()
  for (const path of files.keys()) {
    for (let parent = posix.dirname(path); parent !== '.'; parent = posix.dirname(parent)) directories.add(parent)
  }
  return [
    ...[...directories].map(path => ({ path, dir: true as const })),
    ...[...files].map(([path, file]) => ({ path, mode: file.mode, data: file.data }))
  ]
}

/**
 * The bundle of the installation at `root`. Packing reads and deflates the agent's files
 * (about half a second), so the result is kept in its dist/ and reused while no file of
 * dist/ is newer.
 */
export function installationAgentBundle (root: string = packageRoot): AgentBundle {
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown }).version
  const dist = join(root, 'dist')
  const cache = join(dist, `.agent-bundle-${String(version)}-${agentPlatform.replace('/', '-')}`)
  if (typeof version === 'string' && existsSync(cache)) {
    const cached = statSync(cache).mtimeMs
    const newest = Math.max(...readdirSync(dist).filter(name => !name.startsWith('.')).map(name => statSync(join(dist, name)).mtimeMs))
    if (cached >= newest) {
      const bytes = new Uint8Array(readFileSync(cache))
      return { version, platform: agentPlatform, bytes, hash: sha256Hex(bytes) }
    }
  }
  const bundle = packAgentBundle(root)
  const temporary = `${cache}.tmp-${process.pid}`
  writeFileSync(temporary, bundle.bytes)
  renameSync(temporary, cache)
  return bundle
}

/**
 * The installation's bundle unpacked into `dist/.agent-<hash>` (once): what the manual
 * provider ships to a host instead of the source tree. Checked and written as any
 * bundle is (readCharmArchive), into a temporary directory renamed into place.
 */
export function stagedAgentBundle (root: string = packageRoot): { dir: string, hash: string } {
  const bundle = installationAgentBundle(root)
  const dir = join(root, 'dist', `.agent-${bundle.hash.slice(0, 16)}`)
  if (existsSync(dir)) return { dir, hash: bundle.hash }
  const temporary = `${dir}.tmp-${process.pid}`
  rmSync(temporary, { recursive: true, force: true })
  mkdirSync(temporary)
  for (const entry of readCharmArchive(bundle.bytes, bundle.hash)) {
    const target = join(temporary, entry.path)
    if ('dir' in entry) mkdirSync(target)
    else if ('link' in entry) symlinkSync(entry.link, target)
    else {
      writeFileSync(target, entry.data)
      chmodSync(target, entry.mode)
    }
  }
  renameSync(temporary, dir)
  return { dir, hash: bundle.hash }
}
