/** Every CLI command, in help order. Each file registers one command (or a few close ones). */
import type { RegisterCommand } from '../cli-context.ts'
import { registerBootstrap } from './bootstrap.ts'
import { registerControllers } from './controllers.ts'
import { registerDestroyController } from './destroy-controller.ts'
import { registerEnableHa } from './enable-ha.ts'
import { registerStartAgent } from './start-agent.ts'
import { registerMembers } from './members.ts'
import { registerVersion } from './version.ts'
import { registerStatus } from './status-command.ts'
import { registerWaitFor } from './wait-for.ts'
import { registerActions } from './actions.ts'
import { registerExec } from './exec.ts'
import { registerCharmActions } from './charm-actions.ts'
import { registerOperations } from './operations.ts'
import { registerAttachResource } from './attach-resource.ts'
import { registerConfig } from './config.ts'
import { registerTrust } from './trust.ts'
import { registerSecrets } from './secrets.ts'
import { registerModelConfig } from './model-config.ts'
import { registerDeploy } from './deploy.ts'
import { registerMachines } from './machines.ts'
import { registerShowMachine } from './show-machine.ts'
import { registerModels } from './models.ts'
import { registerRefresh } from './refresh.ts'
import { registerRelations } from './relations.ts'
import { registerUnits } from './units.ts'
import { registerStorage } from './storage.ts'
import { registerDebugLog } from './debug-log.ts'
import { registerShowStatusLog } from './show-status-log.ts'
import { registerShowUnit } from './show-unit.ts'
import { registerExportStatecharts } from './export-statecharts.ts'
import { registerInspect } from './inspect.ts'
import { registerCompletion } from './completion.ts'
import { registerSsh } from './ssh.ts'
import { registerUpgrade } from './upgrade.ts'
import { registerUpgradeController } from './upgrade-controller.ts'
import { registerSyncAgentBinary } from './sync-agent-binary.ts'

export const commands: RegisterCommand[] = [
  registerBootstrap,
  registerControllers,
  registerDestroyController,
  registerEnableHa,
  registerStartAgent,
  registerMembers,
  registerVersion,
  registerModels,
  registerModelConfig,
  registerUpgrade,
  registerUpgradeController,
  registerSyncAgentBinary,
  registerStatus,
  registerWaitFor,
  registerDeploy,
  registerUnits,
  registerStorage,
  registerRelations,
  registerConfig,
  registerTrust,
  registerSecrets,
  registerAttachResource,
  registerActions,
  registerExec,
  registerCharmActions,
  registerOperations,
  registerMachines,
  registerShowMachine,
  registerRefresh,
  registerDebugLog,
  registerShowStatusLog,
  registerShowUnit,
  registerExportStatecharts,
  registerInspect,
  registerSsh,
  registerCompletion
]
