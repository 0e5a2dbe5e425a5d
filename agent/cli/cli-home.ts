/**
 * Where the CLI keeps what it knows of its controllers, like Juju's
 * ~/.local/share/juju/controllers.yaml: `$CANTRIP_HOME` (default
 * `~/.local/share/cantrip`) holds `controllers.yaml` and one directory per controller
 * with its network key, the admin's identity and the controllers' data.
 *
 *   current-controller: local
 *   controllers:
 *     local:
 *       dir: /home/me/.local/share/cantrip/controllers/local
 *       controllers: [{ peer-id, addresses, pid, data-dir, unit? }]   # one per member of the group
 *       removed-controllers: [{ peer-id, …, removed-at }]       # members enable-ha replaced
 *       provider: local
 *       version: 0.1.0
 *       current-model: staging                                  # absent: "default"
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, join } from 'node:path'
import { parse, stringify } from 'yaml'
import { InvalidInputError } from '../../runtime/errors.ts'
import { defaultModelName, isModelName } from '../../runtime/ids.ts'
import { checkStoreWritable } from './store-check.ts'

const component = 'cantrip'

export interface ControllerMember {
  'peer-id': string
  addresses: string[]
  pid: number
  'data-dir': string
  /** The systemd unit that runs it (`cantrip bootstrap --systemd` where systemd runs the host). */
  unit?: { name: string, scope: 'system' | 'user' }
  /**
   * A member on another host (`cantrip enable-ha --to ssh:user@host`), reached over ssh
   * to start and stop it (agent/cli/remote-controller.ts); its `data-dir` is on that host.
   */
  host?: string
  /** The ssh key that reaches `host` (`enable-ha --private-key`); default: ssh's own. */
  'ssh-key-file'?: string
}

/** A member `enable-ha` took out of the group because it was down; shown by show-controller. */
export type RemovedMember = ControllerMember & { 'removed-at': string }

/**
 * A member's name, as every command shows it: its data directory's (`c0`, `c1`, …). Names
 * are never reused, so the member that replaces a lost `c2` is `c3`, as Juju never reuses
 * a machine id.
 */
export function controllerMemberName (member: ControllerMember): string {
  return basename(member['data-dir'])
}

export interface ControllerEntry {
  dir: string
  controllers: ControllerMember[]
  provider: string
  version: string
  /** The model commands go to without -m (add-model and switch set it); absent: "default". */
  'current-model'?: string
  /** Bootstrapped with `--inspect`: every agent streams its actors (members added by enable-ha too). */
  inspect?: boolean
  /** Bootstrapped with `--inspect-data`: the streams show databags, config and action parameters (secrets stay redacted). */
  'inspect-data'?: boolean
  /** Bootstrapped with `--systemd` on a host that runs it: members are units (added ones too). */
  systemd?: boolean
  'removed-controllers'?: RemovedMember[]
}

export interface ControllersFile {
  'current-controller': string | null
  controllers: Record<string, ControllerEntry>
}

/** The client's store: CANTRIP_HOME, or the XDG default when it is unset or empty (as Juju treats an empty JUJU_DATA). */
export function cantripHome (): string {
  const configured = process.env['CANTRIP_HOME']
  return configured === undefined || configured === '' ? join(homedir(), '.local', 'share', 'cantrip') : configured
}

/** Drops a controller from controllers.yaml; if it was current, the first one left becomes current. */
export function forgetController (name: string): void {
  const file = readControllers()
  delete file.controllers[name]
  if (file['current-controller'] === name) file['current-controller'] = Object.keys(file.controllers)[0] ?? null
  writeControllers(file)
}

export function readControllers (): ControllersFile {
  const file = join(cantripHome(), 'controllers.yaml')
  if (!existsSync(file)) return { 'current-controller': null, controllers: {} }
  const value = parse(readFileSync(file, 'utf8')) as ControllersFile | null
  if (value === null || typeof value !== 'object' || typeof value.controllers !== 'object') {
    throw new InvalidInputError(component, `a controllers file at ${file}`, 'something else')
  }
  return value
}

/** Written whole to a temporary file and renamed, so a crash never leaves half a file. */
export function writeControllers (file: ControllersFile): void {
  const home = cantripHome()
  checkStoreWritable(home)
  mkdirSync(home, { recursive: true, mode: 0o700 })
  const path = join(home, 'controllers.yaml')
  writeFileSync(`${path}.tmp`, stringify(file), { mode: 0o600 })
  renameSync(`${path}.tmp`, path)
}

/** The named controller, or the current one; a clear error when there is none. */
export function controllerEntry (name?: string): { name: string, entry: ControllerEntry } {
  const file = readControllers()
  const chosen = name ?? file['current-controller'] ?? undefined
  if (chosen === undefined) throw new InvalidInputError(component, 'a controller (run "cantrip bootstrap" first, or pass -c NAME)', 'none')
  const entry = file.controllers[chosen]
  if (entry === undefined) throw new InvalidInputError(component, `one of the known controllers (${Object.keys(file.controllers).join(', ') || 'none'})`, chosen)
  return { name: chosen, entry }
}

/**
 * `-m [controller:]model` (or none) as a controller and a model: the controller named
 * there, else `-c`, else the current one; the model named, else that controller's
 * current model. Names are checked here; whether the model exists, by the caller.
 */
export function modelTarget (spec: string | undefined, controllerFlag?: string): { controller: string, entry: ControllerEntry, model: string } {
  const colon = spec?.indexOf(':') ?? -1
  const controllerPart = spec !== undefined && colon >= 0 ? spec.slice(0, colon) : undefined
  const modelPart = spec !== undefined ? spec.slice(colon + 1) : undefined
  if (controllerPart !== undefined && controllerFlag !== undefined && controllerPart !== controllerFlag) {
    throw new InvalidInputError(component, `-m naming the same controller as -c ${controllerFlag}`, spec)
  }
  const { name, entry } = controllerEntry(controllerPart === '' ? undefined : controllerPart ?? controllerFlag)
  const model = modelPart ?? entry['current-model'] ?? defaultModelName
  if (!isModelName(model)) throw new InvalidInputError(component, 'a model name like "default" or "staging-2" (lower-case letters, digits and hyphens)', model)
  return { controller: name, entry, model }
}

/** Makes `model` the controller's current model (and the controller the current one). */
export function setCurrentModel (controller: string, model: string): void {
  const file = readControllers()
  const entry = file.controllers[controller]
  if (entry === undefined) throw new InvalidInputError(component, 'a known controller', controller)
  if (model === defaultModelName) delete entry['current-model']
  else entry['current-model'] = model
  file['current-controller'] = controller
  writeControllers(file)
}
