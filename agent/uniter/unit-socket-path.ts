/**
 * Where a unit's hook tool socket lives. Unix socket paths are limited to 107 bytes, and
 * `<agentDir>/agent.socket` only works for agent directories of up to about 94 bytes: under the
 * default `~/.local/share/cantrip/controllers/NAME/machines/machine-N/agent/agents/unit-…`
 * it is too long. Then the socket goes into a per-user directory under the system's
 * temporary directory (mode 0700, ours, not a symlink — checked, not assumed), named by
 * a digest of the agent directory so an agent restarting finds the same path.
 */
import { createHash } from 'node:crypto'
import { lstatSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { InvalidInputError } from '../../runtime/errors.ts'
import { socketPathBytesMax } from '../hook-tools/transport/tool-server.ts'
/** What ToolServer adds to the socket's directory to bind (`/.sXXXXXX/s`, tool-server.ts); never longer than `/agent.socket`. */
const bindSuffixBytes = '/.sXXXXXX/s'.length
/** Hex digits of the agent directory's digest in the fallback socket name. */
const digestChars = 24

function fits (dir: string, name: string): boolean {
  return Buffer.byteLength(join(dir, name)) <= socketPathBytesMax && Buffer.byteLength(dir) + bindSuffixBytes <= socketPathBytesMax
}

/** The per-user socket directory, made if missing; refused unless it is a 0700 directory of ours. */
export function runtimeSocketDir (base = tmpdir()): string {
  const uid = process.getuid?.() ?? 0
  const dir = join(base, `cantrip-${uid}`)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const info = lstatSync(dir)
  if (!info.isDirectory() || info.uid !== uid || (info.mode & 0o077) !== 0) {
    throw new InvalidInputError('hook tool socket', `${dir} to be a directory of uid ${uid} with mode 0700`, `${info.isDirectory() ? 'a directory' : 'not a directory'} of uid ${info.uid}, mode ${(info.mode & 0o777).toString(8)}`)
  }
  return dir
}

export function unitSocketPath (agentDir: string, base = tmpdir()): string {
  if (fits(agentDir, 'agent.socket')) return join(agentDir, 'agent.socket')
  const name = `${createHash('sha256').update(agentDir).digest('hex').slice(0, digestChars)}.socket`
  const dir = runtimeSocketDir(base)
  if (!fits(dir, name)) throw new InvalidInputError('hook tool socket', `a temporary directory short enough for a unix socket (${socketPathBytesMax} bytes)`, dir)
  return join(dir, name)
}
