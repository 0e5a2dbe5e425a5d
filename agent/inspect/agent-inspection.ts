/**
 * The inspection of one agent process, as `cantripd --inspect` / `--inspect-log` /
 * `--inspect-data` ask for it: the hub every actor's observer feeds, the WebSocket server
 * (its URL also written to `<data dir>/inspect.url`, one line, for `cantrip inspect` to
 * find) and the JSONL log. `inspect` is what the roles pass down to whoever creates actors.
 */
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import { createActorInspection } from './actor-inspection.ts'
import { InspectHub } from './inspect-hub.ts'
import { InspectLog } from './inspect-log.ts'
import { InspectServer, type InspectAddress } from './inspect-server.ts'

/** The file in an agent's data directory that holds its inspection URL. */
export const inspectUrlFile = 'inspect.url'

export interface AgentInspectionOptions {
  /** The agent's name on the stream: `controller-<id>`, `machine-<N>`. */
  agent: string
  dataDir: string
  address?: InspectAddress
  logFile?: string
  /** `--inspect-data`: relation databags and config values as they are. */
  data: boolean
}

export class AgentInspection {
  readonly hub: InspectHub
  readonly inspect: ActorInspect
  readonly server: InspectServer | undefined
  readonly #log: InspectLog | undefined
  readonly #urlFile: string | undefined

  private constructor (hub: InspectHub, inspect: ActorInspect, server: InspectServer | undefined, log: InspectLog | undefined, urlFile: string | undefined) {
    this.hub = hub
    this.inspect = inspect
    this.server = server
    this.#log = log
    this.#urlFile = urlFile
  }

  static async start (options: AgentInspectionOptions): Promise<AgentInspection> {
    const hub = new InspectHub()
    const inspect = createActorInspection({ agent: options.agent, now: () => Date.now(), sanitise: { data: options.data }, emit: message => { hub.publish(message) } })
    const log = options.logFile === undefined ? undefined : new InspectLog(options.logFile)
    if (log !== undefined) hub.listen(message => { log.write(message, Date.now()) })
    const server = options.address === undefined ? undefined : await InspectServer.start(hub, options.address)
    let urlFile: string | undefined
    if (server !== undefined) {
      urlFile = join(options.dataDir, inspectUrlFile)
      writeFileSync(urlFile, server.url + '\n')
    }
    return new AgentInspection(hub, inspect, server, log, urlFile)
  }

  get url (): string | undefined {
    return this.server?.url
  }

  async stop (): Promise<void> {
    // A stale URL would send the viewer to a port someone else may hold next.
    if (this.#urlFile !== undefined) rmSync(this.#urlFile, { force: true })
    await this.server?.stop()
    await this.#log?.close()
  }
}
