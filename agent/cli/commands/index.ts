/**
 * Every CLI command, in help order, as a table of the names each file registers and a
 * loader for its code. A run of `cantrip NAME` loads only NAME's file (and what it
 * imports): compiling modules is most of a short command's CPU on Node 20, which has no
 * compile cache for ES modules, and the build splits each loader's file into its own chunk.
 * Help, completion and an unknown name load them all, so help lists every command and
 * commander's "did you mean" sees every name. test/cli-command-table.test.ts checks that
 * each file registers exactly the names listed here.
 */
import type { RegisterCommand } from '../cli-context.ts'

export interface CommandModule {
  /** Every command name and alias the file registers. */
  readonly names: readonly string[]
  readonly load: () => Promise<RegisterCommand>
  /** Looks at the other commands when it runs (completion lists them all). */
  readonly needsEveryCommand?: boolean
}

export const commandModules: readonly CommandModule[] = [
  { names: ['bootstrap'], load: async () => (await import('./bootstrap.ts')).registerBootstrap },
  { names: ['controllers', 'show-controller'], load: async () => (await import('./controllers.ts')).registerControllers },
  { names: ['destroy-controller'], load: async () => (await import('./destroy-controller.ts')).registerDestroyController },
  { names: ['enable-ha'], load: async () => (await import('./enable-ha.ts')).registerEnableHa },
  { names: ['start-agent'], load: async () => (await import('./start-agent.ts')).registerStartAgent },
  { names: ['members'], load: async () => (await import('./members.ts')).registerMembers },
  { names: ['version'], load: async () => (await import('./version.ts')).registerVersion },
  { names: ['add-model', 'models', 'switch', 'destroy-model'], load: async () => (await import('./models.ts')).registerModels },
  { names: ['model-config'], load: async () => (await import('./model-config.ts')).registerModelConfig },
  { names: ['upgrade-model'], load: async () => (await import('./upgrade.ts')).registerUpgrade },
  { names: ['upgrade-controller'], load: async () => (await import('./upgrade-controller.ts')).registerUpgradeController },
  { names: ['sync-agent-binary'], load: async () => (await import('./sync-agent-binary.ts')).registerSyncAgentBinary },
  { names: ['status'], load: async () => (await import('./status-command.ts')).registerStatus },
  { names: ['wait-for'], load: async () => (await import('./wait-for.ts')).registerWaitFor },
  { names: ['deploy'], load: async () => (await import('./deploy.ts')).registerDeploy },
  { names: ['add-unit', 'remove-unit', 'remove-application'], load: async () => (await import('./units.ts')).registerUnits },
  { names: ['storage', 'add-storage', 'detach-storage'], load: async () => (await import('./storage.ts')).registerStorage },
  { names: ['integrate', 'relate', 'remove-relation'], load: async () => (await import('./relations.ts')).registerRelations },
  { names: ['config', 'expose', 'unexpose'], load: async () => (await import('./config.ts')).registerConfig },
  { names: ['trust'], load: async () => (await import('./trust.ts')).registerTrust },
  {
    names: ['add-secret', 'update-secret', 'remove-secret', 'grant-secret', 'revoke-secret', 'secrets', 'show-secret'],
    load: async () => (await import('./secrets.ts')).registerSecrets
  },
  { names: ['attach-resource'], load: async () => (await import('./attach-resource.ts')).registerAttachResource },
  { names: ['resources', 'list-resources'], load: async () => (await import('./resources.ts')).registerResources },
  { names: ['resolved', 'run'], load: async () => (await import('./actions.ts')).registerActions },
  { names: ['exec'], load: async () => (await import('./exec.ts')).registerExec },
  { names: ['actions', 'list-actions', 'show-action', 'show-application'], load: async () => (await import('./charm-actions.ts')).registerCharmActions },
  { names: ['operations', 'list-operations', 'show-operation', 'show-task'], load: async () => (await import('./operations.ts')).registerOperations },
  { names: ['retry-provisioning', 'add-machine', 'remove-machine'], load: async () => (await import('./machines.ts')).registerMachines },
  { names: ['machines', 'list-machines', 'show-machine'], load: async () => (await import('./show-machine.ts')).registerShowMachine },
  { names: ['refresh'], load: async () => (await import('./refresh.ts')).registerRefresh },
  { names: ['debug-log'], load: async () => (await import('./debug-log.ts')).registerDebugLog },
  { names: ['show-status-log'], load: async () => (await import('./show-status-log.ts')).registerShowStatusLog },
  { names: ['show-unit'], load: async () => (await import('./show-unit.ts')).registerShowUnit },
  { names: ['export-statecharts'], load: async () => (await import('./export-statecharts.ts')).registerExportStatecharts },
  { names: ['inspect'], load: async () => (await import('./inspect.ts')).registerInspect },
  { names: ['ssh'], load: async () => (await import('./ssh.ts')).registerSsh },
  { names: ['completion', '__complete'], load: async () => (await import('./completion.ts')).registerCompletion, needsEveryCommand: true }
]

/** Every command's register function, in help order (tests and the demo list them all). */
export async function loadCommands (modules: readonly CommandModule[] = commandModules): Promise<RegisterCommand[]> {
  return await Promise.all(modules.map(async m => await m.load()))
}

/**
 * The modules a run needs: the one that registers the command named in argv, or every
 * module (help, completion, no command, an unknown name or anything this cannot read, so
 * commander answers as it would with all of them registered).
 */
export function modulesFor (argv: readonly string[], modules: readonly CommandModule[]): readonly CommandModule[] {
  const name = commandName(argv)
  const chosen = name === undefined ? undefined : modules.find(m => m.names.includes(name))
  return chosen === undefined || chosen.needsEveryCommand === true ? modules : [chosen]
}

/** The program's own options that come before a command: those taking a value, and flags. */
const programValueOptions = new Set(['-m', '--model'])
const programFlags = new Set(['--no-color'])

/** The first word that is not one of the program's own options, or undefined if one cannot tell. */
export function commandName (argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!
    if (programValueOptions.has(word)) { i++; continue }
    if (programFlags.has(word) || word.startsWith('--model=') || /^-m./.test(word)) continue
    return word.startsWith('-') ? undefined : word
  }
  return undefined
}
