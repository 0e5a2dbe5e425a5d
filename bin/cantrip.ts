/**
 * The `cantrip` executable: the composition root of the client. agent/ holds the
 * commands that speak to controllers and sim/ the simulator; neither may import the
 * other (DESIGN.md §3), so this file, above both, puts them in one program, and
 * `cantrip sim` runs in this process like every other command.
 */
import '../runtime/polyfill.ts'
import { runCantrip } from '../agent/cli/cantrip-main.ts'
import { registerSimCommand } from '../sim/cli/sim-command.ts'

process.exitCode = await runCantrip(process.argv.slice(2), [registerSimCommand])
// libp2p may leave timers behind; the command is done.
process.exit()
