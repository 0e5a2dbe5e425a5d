/**
 * The agent launcher a provider starts (`node cantripd-stub.mjs --bootstrap FILE
 * --data-dir DIR`): it runs the agent version the machine has switched to
 * (`<data dir>/tools/current`, agent/tools/agent-tools-dir.ts), or the installation's
 * own cantripd beside it when the machine has none yet, in this same process — so the
 * provider's pid file and watchdog see one process whatever version runs, and a swap is
 * a restart of this launcher.
 *
 * Before it starts a version just switched to, it counts the start; after
 * limits.agentUpgradeStartsMax starts without the new agent reporting itself healthy, it
 * switches back and records why (Juju's agents fall back the same way when new binaries
 * do not come up). It imports only node: modules and that file, so it loads in
 * milliseconds.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { limits } from '../runtime/limits.ts'
import { prepareLaunch } from './tools/agent-tools-dir.ts'

function dataDirArgument (argv: readonly string[]): string | undefined {
  const index = argv.indexOf('--data-dir')
  return index >= 0 ? argv[index + 1] : argv.find(arg => arg.startsWith('--data-dir='))?.slice('--data-dir='.length)
}

/** The installation's own agent beside this launcher: the bundle when bundled, else the source. */
function ownProgram (): string {
  const bundled = fileURLToPath(new URL('./cantripd.mjs', import.meta.url))
  return existsSync(bundled) && import.meta.url.endsWith('.mjs') ? bundled : fileURLToPath(new URL('./cantripd.ts', import.meta.url))
}

const dataDir = dataDirArgument(process.argv)
const program = (dataDir === undefined ? undefined : prepareLaunch(dataDir, limits.agentUpgradeStartsMax)) ?? ownProgram()
// The agent reads its arguments from process.argv, as if it had been started itself.
process.argv[1] = program
await import(pathToFileURL(program).href)
