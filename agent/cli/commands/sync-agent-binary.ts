/**
 * `cantrip sync-agent-binary --agent-version X --source DIR [--dry-run]`, as Juju's
 * (juju/juju cmd/juju/commands/synctools.go, environs/sync): copies the agent binary of
 * version X into the controllers' agent store and records it in the model, so that
 * `upgrade-model --agent-version X` can then hand it to the machines. Juju copies from
 * its public agent store or a local directory of tarballs; cantrip has no public store,
 * so the source is another installation of cantrip — a checkout or an `npm install` of
 * that release with its dist/ built — whose agent bundle is packed as this client packs
 * its own (agent/tools/agent-bundle.ts).
 *
 * Refused, in one line each, before anything is sent: no --agent-version (Juju requires
 * it too), no --source, a source that is no built installation, and one that holds
 * another version than X.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { CantripError, InvalidInputError } from '../../../runtime/errors.ts'
import { parseAgentVersion } from '../../../runtime/model/agent-binaries.ts'
import { packAgentBundle } from '../../tools/agent-bundle.ts'
import { putAgentBinary } from '../agent-binaries.ts'
import type { RegisterCommand } from '../cli-context.ts'
import { controllerFlags, controllerHelp } from './model-common.ts'

const component = 'cantrip sync-agent-binary'

/** The version the installation at `dir` holds; refused when it is no built cantrip. */
function installationVersion (dir: string): string {
  const manifest = join(dir, 'package.json')
  const missing = [manifest, join(dir, 'dist', 'cantripd.mjs')].find(file => !existsSync(file))
  if (missing !== undefined) throw new CantripError(`${component}: expected --source to be an installation of cantrip with its dist/ built, got ${dir} without ${missing}`)
  const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }).version
  if (typeof version !== 'string' || parseAgentVersion(version) === undefined) throw new InvalidInputError(component, `a version like "0.2.0" in ${manifest}`, version)
  return version
}

export const registerSyncAgentBinary: RegisterCommand = (program, context) => {
  program.command('sync-agent-binary')
    .description('copy the agent binary of another cantrip installation into the controllers\' store, for upgrade-model --agent-version')
    .addHelpText('after', '\nExamples:\n  cantrip sync-agent-binary --agent-version 0.2.0 --source ~/src/cantrip-0.2.0\n  cantrip upgrade-model --agent-version 0.2.0')
    .option('--agent-version <version>', 'the version to copy (required)')
    .option('--source <dir>', 'an installation of cantrip at that version, its dist/ built (required)')
    .option('--dry-run', 'say what would be copied, copy nothing')
    .option(controllerFlags, controllerHelp)
    .action(async (options: { agentVersion?: string, source?: string, dryRun?: boolean, controller?: string }) => {
      if (options.agentVersion === undefined) throw new CantripError(`${component}: expected --agent-version (the version to copy), got none`)
      if (parseAgentVersion(options.agentVersion) === undefined) throw new InvalidInputError(component, '--agent-version as a version like "0.2.0"', options.agentVersion)
      if (options.source === undefined) throw new CantripError(`${component}: expected --source (an installation of cantrip at ${options.agentVersion}; there is no public agent store), got none`)
      const source = resolve(options.source)
      const held = installationVersion(source)
      if (held !== options.agentVersion) throw new CantripError(`${component}: expected the installation at ${source} to hold agent ${options.agentVersion}, got agent ${held}`)
      const bundle = packAgentBundle(source)
      const what = `agent binary ${bundle.version} ${bundle.platform} (sha256 ${bundle.hash}, ${Math.round(bundle.bytes.byteLength / 1024)} kB)`
      if (options.dryRun === true) {
        context.out(`would copy ${what} from ${source}`)
        return
      }
      const connection = await context.connect(options.controller)
      await putAgentBinary(connection, bundle)
      context.out(`copied ${what} from ${source}`)
    })
}
