/**
 * The `cantrip` executable: the composition root of the client. agent/ holds the
 * commands that speak to controllers and sim/ the simulator; neither may import the
 * other (DESIGN.md §3), so this file, above both, puts them in one program, and
 * `cantrip sim` runs in this process like every other command.
 */
import '../runtime/polyfill.ts'
import { runCantrip } from '../agent/cli/cantrip-main.ts'

// Loaded only when the command is `sim` (or for help), like agent/'s commands.
const simCommand = { names: ['sim'], load: async () => (await import('../sim/cli/sim-command.ts')).registerSimCommand }

// No top-level await: the shipped client is this file bundled as one CommonJS script
// (scripts/build.ts), run with V8's code cache by dist/cantrip.mjs (bin/cantrip-loader.ts).
void runCantrip(process.argv.slice(2), [simCommand]).then(code => {
  process.exitCode = code
  // libp2p may leave timers behind; the command is done.
  process.exit()
})
