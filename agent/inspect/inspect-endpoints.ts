/**
 * Where a controller's agents stream their actors, for `cantrip inspect`: each agent run
 * with `--inspect` writes its WebSocket URL to `<data dir>/inspect.url`. The controllers'
 * data dirs are in controllers.yaml; the local provider's machine agents live under
 * `<controller dir>/machines/machine-N/agent` (the default model's) and
 * `<controller dir>/machines/m-<model>/machine-N/agent` (the others'). An agent without the
 * file (not inspected, or stopped) is left out.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { defaultModelName } from '../../runtime/ids.ts'
import type { ControllerEntry } from '../cli/cli-home.ts'
import { modelMachinesHome } from '../../providers/local-provider.ts'
import { inspectUrlFile } from './agent-inspection.ts'

export interface InspectEndpoint {
  /** As on the stream's `agent` field: `controller-<last 8 of the peer id>`, `machine-<N>`, `<model>:machine-<N>`. */
  agent: string
  url: string
}

/** The name an agent gives itself on the inspection stream. */
export function inspectAgentName (agent: { peerId: string, machineId: string | undefined, model: string }): string {
  if (agent.machineId === undefined) return `controller-${agent.peerId.slice(-8)}`
  return agent.model === defaultModelName ? `machine-${agent.machineId}` : `${agent.model}:machine-${agent.machineId}`
}

export function discoverInspectEndpoints (entry: ControllerEntry): InspectEndpoint[] {
  const found: InspectEndpoint[] = []
  for (const member of entry.controllers) {
    const url = readUrl(member['data-dir'])
    if (url !== undefined) found.push({ agent: inspectAgentName({ peerId: member['peer-id'], machineId: undefined, model: defaultModelName }), url })
  }
  const machinesHome = join(entry.dir, 'machines')
  found.push(...machineEndpoints(machinesHome, defaultModelName))
  for (const name of listDir(machinesHome)) {
    if (name.startsWith('m-')) found.push(...machineEndpoints(modelMachinesHome(machinesHome, name.slice(2)), name.slice(2)))
  }
  return found
}

function machineEndpoints (home: string, model: string): InspectEndpoint[] {
  const found: InspectEndpoint[] = []
  const dirs = listDir(home).filter(name => /^machine-/.test(name))
  // machine-2 before machine-10.
  dirs.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
  for (const name of dirs) {
    const url = readUrl(join(home, name, 'agent'))
    // `machine-0-lxd-1` is machine 0/lxd/1 (localInstanceDirName).
    if (url !== undefined) found.push({ agent: inspectAgentName({ peerId: '', machineId: name.slice('machine-'.length).replaceAll('-', '/'), model }), url })
  }
  return found
}

function listDir (dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

function readUrl (dataDir: string): string | undefined {
  const file = join(dataDir, inspectUrlFile)
  if (!existsSync(file)) return undefined
  try {
    const url = readFileSync(file, 'utf8').trim()
    return /^wss?:\/\/\S+$/.test(url) ? url : undefined
  } catch {
    return undefined
  }
}
