/**
 * The real world's unit effects (actors/unit/unit-host-effects.ts) for one machine: each
 * unit's workspace under `<data dir>/agents/unit-<app>-<n>` with its hook-tool service
 * (the C client and the unit's socket), hooks and commands run as processes, charms
 * fetched into place; random state ids and request-id prefixes, so nothing repeats across
 * restarts of the agent process.
 */
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import type { UnitEffects, UnitWorkspace } from '../../actors/unit/unit-host-effects.ts'
import type { Logger } from '../../runtime/logger.ts'
import type { ProcessRunner } from '../../runtime/process-runner.ts'
import { hashString32 } from '../../runtime/random.ts'
import { startHookToolService } from './hook-tool-service.ts'
import { ProcessUnitWorkspace, type HookToolService } from './process-unit-workspace.ts'
import type { UnitControllerApi } from './unit-hook-context.ts'

export interface ProcessUnitEffectsOptions {
  machineId: string
  /** The model's name, for the hooks' JUJU_MODEL_NAME; "default" when not given. */
  modelName?: string
  /** Unit agents live in `<dataDir>/agents/unit-<app>-<n>`. */
  dataDir: string
  controller: UnitControllerApi
  processRunner: ProcessRunner
  /**
   * One tool service per unit (its own socket and tools directory); by default the real
   * one (the C client and the unit's socket). Closed with the unit's workspace.
   */
  toolsFor?: (unit: string, agentDir: string) => Promise<HookToolService>
  /** Copies the charm with this URL into `dir` (replacing what is there). */
  fetchCharm: (url: string, dir: string) => Promise<void>
  logger: Logger
  hookTimeoutMs?: number
  /** The PATH after the tools directory in hooks; default `defaultAgentPath()`. */
  agentPath?: string
  /** Ships the agent's log records so far and waits (bounded) for a controller to keep them (agent/log-shipper.ts). */
  flushLogs?: () => Promise<unknown>
}

export class ProcessUnitEffects implements UnitEffects {
  readonly #o: ProcessUnitEffectsOptions

  constructor (options: ProcessUnitEffectsOptions) {
    this.#o = options
  }

  async openUnit (unit: string): Promise<UnitWorkspace> {
    const o = this.#o
    const agentDir = join(o.dataDir, 'agents', `unit-${unit.replace('/', '-')}`)
    const logger = o.logger.child(unit)
    const tools = await (o.toolsFor ?? (async (_unit, dir) => await startHookToolService(dir, logger)))(unit, agentDir)
    return new ProcessUnitWorkspace({
      unit,
      machineId: o.machineId,
      agentDir,
      controller: o.controller,
      processRunner: o.processRunner,
      tools,
      logger,
      fetchCharm: o.fetchCharm,
      ...(o.modelName === undefined ? {} : { modelName: o.modelName }),
      ...(o.hookTimeoutMs === undefined ? {} : { hookTimeoutMs: o.hookTimeoutMs }),
      ...(o.agentPath === undefined ? {} : { agentPath: o.agentPath })
    })
  }

  newStateId (): string {
    return randomUUID()
  }

  requestPrefix (unit: string): string {
    return `${unit}/${randomUUID()}`
  }

  unitSeed (unit: string): number {
    return hashString32(unit, 1)
  }

  /** Every unit's records go through the agent's one shipper: flushing it flushes the unit's. */
  async flushLogs (): Promise<unknown> {
    return await this.#o.flushLogs?.()
  }
}
