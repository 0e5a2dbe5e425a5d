/**
 * Packs a Python (ops-style) charm as charmcraft packs one, without charmcraft:
 *
 *   node --import tsx scripts/pack-ops-charm.ts CHARM_DIR [-o OUT.charm] [--lib DIR]...
 *        [--venv-module NAME[=APT_PACKAGE]]... [--venv-dir DIR]...
 *
 * The `.charm` is a zip holding what `charmcraft pack` puts in one: the project's files
 * (src/, lib/, …; charmcraft's usual excludes left out, symlinks followed), a `dispatch`
 * that runs `./src/charm.py` with `PYTHONPATH=lib:venv` (charmcraft's file-dispatch
 * reference), the `metadata.yaml`, `actions.yaml` and `config.yaml` charmcraft writes
 * from a unified `charmcraft.yaml`, a `manifest.yaml` naming the bases, and `venv/` with
 * the charm's Python dependencies. Where charmcraft pip-installs those, this takes them
 * from the Python the hooks will run (the first `python3` on the hook PATH), installing
 * the Debian package (`python3-yaml` for `yaml`) through scripts/ensure-apt.sh when the
 * module is missing, as the project's scripts do for system packages.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse, stringify } from 'yaml'
import { defaultAgentPath } from '../agent/uniter/process-unit-workspace.ts'
import { zipFile, type ZipMember } from '../test/support/zip-file.ts'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** What charmcraft's dispatch does: the hook named by JUJU_DISPATCH_PATH (or $0), the charm's code on PYTHONPATH. */
export const charmcraftDispatch = '#!/bin/sh\n\nJUJU_DISPATCH_PATH="${JUJU_DISPATCH_PATH:-$0}" PYTHONPATH=lib:venv \\\n  exec ./src/charm.py\n'

/** The charmcraft.yaml keys charmcraft moves into metadata.yaml when it packs. */
const metadataKeys = ['name', 'display-name', 'title', 'summary', 'description', 'maintainers', 'docs', 'issues', 'source', 'website',
  'terms', 'assumes', 'subordinate', 'requires', 'provides', 'peers', 'extra-bindings', 'storage', 'resources', 'containers', 'devices']

/** Never packed: VCS and build leftovers, and what packing writes itself. */
const excluded = new Set(['.git', '.github', '.tox', '.venv', 'venv', 'build', 'parts', 'prime', 'stage', '__pycache__',
  '.pytest_cache', '.mypy_cache', '.ruff_cache', 'tests', 'test', 'dispatch', 'metadata.yaml', 'actions.yaml', 'config.yaml', 'manifest.yaml'])

export interface VenvPackage {
  /** A package directory or module file to copy. */
  readonly from: string
  /** Its name under venv/ (default: its basename). */
  readonly as?: string
  /** Copy only `*.py` files (a pure-Python install: PyYAML then uses its Python parser). */
  readonly pythonOnly?: boolean
}

export interface PackOpsCharmOptions {
  /** The project directory holding charmcraft.yaml (or metadata.yaml) and src/charm.py. */
  readonly dir: string
  readonly out: string
  /** Directories or files copied into lib/ beside the project's own lib/. */
  readonly lib?: readonly string[]
  readonly venv: readonly VenvPackage[]
}

export interface PackedCharm { readonly name: string, readonly path: string, readonly bytes: number, readonly unpackedBytes: number, readonly files: number }

export function packOpsCharm (options: PackOpsCharmOptions): PackedCharm {
  const dir = resolve(options.dir)
  if (!existsSync(join(dir, 'src', 'charm.py'))) throw new Error(`pack-ops-charm: expected ${join(dir, 'src', 'charm.py')}, got no such file`)
  const files = new Map<string, { data: Buffer, mode: number }>()
  for (const [path, file] of walk(dir, '')) files.set(path, file)
  for (const extra of options.lib ?? []) for (const [path, file] of walk(resolve(extra), join('lib', basename(extra)))) files.set(path, file)
  for (const pkg of options.venv) {
    const name = pkg.as ?? basename(pkg.from)
    for (const [path, file] of walk(resolve(pkg.from), join('venv', name))) {
      if (pkg.pythonOnly !== true || path.endsWith('.py')) files.set(path, file)
    }
  }
  const generated = charmFiles(dir)
  for (const [path, text] of Object.entries(generated.files)) files.set(path, { data: Buffer.from(text), mode: path === 'dispatch' ? 0o755 : 0o644 })

  const members: ZipMember[] = [...files.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, file]) => ({
    name, data: file.data, mode: 0o100000 | file.mode, deflate: true
  }))
  const zip = zipFile(members)
  writeFileSync(options.out, zip)
  const unpackedBytes = [...files.values()].reduce((sum, file) => sum + file.data.length, 0)
  return { name: generated.name, path: resolve(options.out), bytes: zip.length, unpackedBytes, files: files.size }
}

/** dispatch, metadata.yaml, actions.yaml, config.yaml and manifest.yaml as charmcraft writes them. */
function charmFiles (dir: string): { name: string, files: Record<string, string> } {
  const files: Record<string, string> = { dispatch: charmcraftDispatch }
  const unifiedPath = join(dir, 'charmcraft.yaml')
  const unified = existsSync(unifiedPath) ? parse(readFileSync(unifiedPath, 'utf8')) as Record<string, unknown> : {}
  let metadata: Record<string, unknown>
  if (existsSync(join(dir, 'metadata.yaml'))) {
    // An older project keeps its own metadata.yaml (and actions.yaml, config.yaml): packed as they are.
    metadata = parse(readFileSync(join(dir, 'metadata.yaml'), 'utf8')) as Record<string, unknown>
    for (const file of ['metadata.yaml', 'actions.yaml', 'config.yaml']) {
      if (existsSync(join(dir, file))) files[file] = readFileSync(join(dir, file), 'utf8')
    }
  } else {
    metadata = Object.fromEntries(metadataKeys.filter(key => unified[key] !== undefined).map(key => [key, unified[key]]))
    files['metadata.yaml'] = stringify(metadata, { lineWidth: 0 })
    if (unified['actions'] !== undefined) files['actions.yaml'] = stringify(unified['actions'], { lineWidth: 0 })
    if (unified['config'] !== undefined) files['config.yaml'] = stringify(unified['config'], { lineWidth: 0 })
  }
  if (typeof metadata['name'] !== 'string') throw new Error(`pack-ops-charm: expected a charm name in ${dir}/charmcraft.yaml or metadata.yaml, got none`)
  files['manifest.yaml'] = stringify({ 'charmcraft-version': 'none (scripts/pack-ops-charm.ts)', bases: manifestBases(unified) })
  return { name: metadata['name'], files }
}

/** `base: ubuntu@24.04` with its platforms, as a manifest's bases list. */
function manifestBases (unified: Record<string, unknown>): unknown[] {
  const base = typeof unified['base'] === 'string' ? unified['base'] : 'ubuntu@22.04'
  const [name, channel] = base.split('@')
  const platforms = unified['platforms'] !== null && typeof unified['platforms'] === 'object' ? Object.keys(unified['platforms']) : ['amd64']
  return [{ name, channel, architectures: platforms }]
}

/** The regular files under `from`, symlinks followed, keyed by their path under `prefix`. */
function * walk (from: string, prefix: string): Generator<[string, { data: Buffer, mode: number }]> {
  const stack: Array<[string, string]> = [[from, prefix]]
  while (stack.length > 0) {
    const [path, name] = stack.pop()!
    const info = statSync(path)
    if (info.isDirectory()) {
      for (const entry of readdirSync(path).sort()) {
        if (excluded.has(entry) && name === prefix && prefix === '') continue
        if (entry === '__pycache__' || entry.endsWith('.charm') || entry.endsWith('.pyc')) continue
        stack.push([join(path, entry), name === '' ? entry : join(name, entry)])
      }
    } else if (info.isFile()) {
      yield [name, { data: readFileSync(path), mode: (info.mode & 0o111) !== 0 ? 0o755 : 0o644 }]
    }
  }
}

/** The python3 the hooks run: the first on the hook PATH of agent/uniter (tools first, then these). */
export function hookPython (): string {
  for (const dir of defaultAgentPath().split(':')) {
    const candidate = join(dir, 'python3')
    if (existsSync(candidate)) return candidate
  }
  throw new Error(`pack-ops-charm: expected python3 on the hook PATH (${defaultAgentPath()}), got none; install python3`)
}

/**
 * Where the hook Python imports `module` from (a package directory or a module file),
 * installing `aptPackage` from Debian first when it cannot import it.
 */
export function hookPythonModule (module: string, aptPackage?: string): string {
  const python = hookPython()
  const locate = (): string | undefined => {
    const run = spawnSync(python, ['-c', `import os, ${module} as m; f = m.__file__; print(os.path.dirname(f) if os.path.basename(f) == '__init__.py' else f)`], { encoding: 'utf8' })
    return run.status === 0 ? run.stdout.trim() : undefined
  }
  const found = locate()
  if (found !== undefined) return found
  if (aptPackage === undefined) throw new Error(`pack-ops-charm: expected ${python} to import "${module}", got an ImportError`)
  execFileSync(join(root, 'scripts', 'ensure-apt.sh'), ['pack-ops-charm', aptPackage], { stdio: 'inherit' })
  const installed = locate()
  if (installed === undefined) throw new Error(`pack-ops-charm: expected ${python} to import "${module}" after installing ${aptPackage}, got an ImportError`)
  return installed
}

function main (argv: readonly string[]): void {
  const lib: string[] = []
  const venv: VenvPackage[] = []
  let dir: string | undefined
  let out: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = (): string => {
      const next = argv[++i]
      if (next === undefined) throw new Error(`pack-ops-charm: expected a value after ${arg}, got none`)
      return next
    }
    if (arg === '-o' || arg === '--output') out = value()
    else if (arg === '--lib') lib.push(value())
    else if (arg === '--venv-dir') venv.push({ from: value() })
    else if (arg === '--venv-module') {
      const [module, apt] = value().split('=')
      venv.push({ from: hookPythonModule(module!, apt) })
    } else if (arg.startsWith('-')) throw new Error(`pack-ops-charm: expected -o, --lib, --venv-dir or --venv-module, got ${JSON.stringify(arg)}`)
    else dir = arg
  }
  if (dir === undefined) throw new Error('pack-ops-charm: expected a charm directory, got none')
  const packed = packOpsCharm({ dir, out: out ?? `${basename(resolve(dir))}.charm`, lib, venv })
  console.log(`packed ${packed.name}: ${relative(process.cwd(), packed.path)} (${packed.files} files, ${packed.bytes} bytes)`)
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2))
  } catch (error) {
    console.error((error as Error).message)
    process.exit(1)
  }
}
