/**
 * Opens a Connection, loading its module on first use: the mesh stack behind it (libp2p,
 * Noise, yamux, gossipsub, the model replica's codecs) is most of the client's code, and
 * the commands that never reach a controller (`version`, `--help`, `completion`, a usage
 * error) should not pay for reading and compiling it (issue 26: `cantrip version` within
 * 300 ms of `node -e 0`). Everything else imports Connection as a type only.
 */
import type { ControllerEntry } from './cli-home.ts'
import type { Connection } from './connection.ts'

export async function openConnection (entry: ControllerEntry, name?: string): Promise<Connection> {
  const { Connection } = await import('./connection.ts')
  return await Connection.open(entry, name)
}
