/**
 * The example bundle pins its workloads' ports (kv unit N on 18400 + N, web on 18500 + N).
 * When one of them is taken, the demo deploys a copy of the bundle with free port bases
 * instead (written into the controller's directory, so destroy-controller removes it).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { freePortRun, portFree } from '../../agent/free-port.ts'
import { dirname, resolve } from 'node:path'
import { parse, stringify } from 'yaml'

/** The workloads bind every address, so that is where a port must be free. */
const anyAddress = '0.0.0.0'

interface BundleApp { charm: string, num_units?: number, options?: Record<string, unknown> }
interface BundleFile { applications: Record<string, BundleApp>, [key: string]: unknown }

/** Each application with a `port-base` option: the ports its units will listen on. */
function pinnedPorts (bundle: BundleFile): Array<{ app: string, base: number, count: number }> {
  return Object.entries(bundle.applications).flatMap(([app, spec]) => {
    const base = spec.options?.['port-base']
    return typeof base === 'number' ? [{ app, base, count: Math.max(1, spec.num_units ?? 1) }] : []
  })
}

/**
 * The bundle to deploy: `bundlePath` itself when its ports are free, else a copy with
 * free port bases and absolute charm paths at `copyPath`; `moved` says what changed.
 * `always` moves every pinned port: demos started together on one host (tests of two
 * clones at once) each look before any of them listens, so "free now" is not enough.
 */
export async function bundleWithFreePorts (bundlePath: string, copyPath: string, always = false): Promise<{ path: string, moved: string[] }> {
  const bundle = parse(readFileSync(bundlePath, 'utf8')) as BundleFile
  const moved: string[] = []
  for (const { app, base, count } of pinnedPorts(bundle)) {
    let free = !always
    for (let i = 0; i < count && free; i++) free = await portFree(base + i, anyAddress)
    if (free) continue
    const next = await freePortRun(count, anyAddress)
    bundle.applications[app]!.options!['port-base'] = next
    moved.push(`${app} ${base}→${next}`)
  }
  if (moved.length === 0) return { path: bundlePath, moved }
  for (const spec of Object.values(bundle.applications)) spec.charm = resolve(dirname(bundlePath), spec.charm)
  writeFileSync(copyPath, stringify(bundle))
  return { path: copyPath, moved }
}
