/**
 * The usage-error form across every command, as Juju's cmd package prints it: an unknown
 * flag, a missing argument or an unknown command is one `ERROR …` line on stderr (no help
 * after it), with commander's "did you mean" kept on that line, and exit status 2
 * (juju/cmd's flag errors; `juju stauts` says `ERROR juju: "stauts" is not a juju command`
 * and suggests `status`). In-process for every command (nothing is sent: parsing fails
 * first), and once through the built CLI for the exit status a shell sees.
 */
import '../runtime/polyfill.ts'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Command } from 'commander'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { runCantrip } from '../agent/cli/cantrip-main.ts'
import { createContext } from '../agent/cli/cli-context.ts'
import { loadCommands } from '../agent/cli/commands/index.ts'
import { registerSimCommand } from '../sim/cli/sim-command.ts'
import { cantrip, removeHome } from './support/cli-process.ts'

const commands = await loadCommands()
/** `cantrip sim`, as bin/cantrip.ts adds it. */
const simCommand = { names: ['sim'], load: async () => registerSimCommand }

/** Every command name the executable registers (bin/cantrip.ts adds `sim`). */
function commandNames (): string[] {
  const program = new Command('cantrip')
  const context = createContext({ noColor: true })
  for (const register of commands) register(program, context)
  registerSimCommand(program)
  return program.commands.map(c => c.name())
}

/** Runs the CLI in this process with stderr captured (stdout too, so nothing leaks into the test log). */
async function runCaptured (argv: string[]): Promise<{ status: number, stderr: string, stdout: string }> {
  let stderr = ''
  let stdout = ''
  const writeErr = process.stderr.write.bind(process.stderr)
  const writeOut = process.stdout.write.bind(process.stdout)
  process.stderr.write = ((chunk: string | Uint8Array) => { stderr += String(chunk); return true }) as typeof process.stderr.write
  process.stdout.write = ((chunk: string | Uint8Array) => { stdout += String(chunk); return true }) as typeof process.stdout.write
  try {
    const status = await runCantrip(argv, [simCommand])
    return { status, stderr, stdout }
  } finally {
    process.stderr.write = writeErr
    process.stdout.write = writeOut
  }
}

const usage = suite('usage errors')

usage('every command: an unknown flag is one ERROR line and exit 2', async () => {
  const names = commandNames()
  assert.ok(names.length >= 40, `${names.length} commands`)
  // `cantrip sim` hands its flags to the simulator, whose usage error is exit 64 (sim-command.ts);
  // the hidden `__complete` takes whatever the shell typed.
  for (const name of names.filter(n => n !== 'sim' && n !== '__complete')) {
    const run = await runCaptured([name, '--no-such-flag'])
    assert.is(run.status, 2, `${name}: ${run.stderr}`)
    assert.match(run.stderr, /^ERROR [^\n]+\n$/, `${name}: ${JSON.stringify(run.stderr)}`)
    // export-statecharts names its missing required --format first: a usage error all the same.
    assert.match(run.stderr, /unknown option '--no-such-flag'|required option '--format <format>' not specified/, name)
    assert.is(run.stdout, '', name)
  }
})

usage('"did you mean" stays on the one line: a misspelt command and a misspelt flag', async () => {
  const command = await runCaptured(['stauts'])
  assert.is(command.status, 2)
  assert.is(command.stderr, 'ERROR unknown command \'stauts\' (did you mean status?); see "cantrip --help"\n')
  const flag = await runCaptured(['remove-machine', '0', '--forse'])
  assert.is(flag.status, 2)
  assert.is(flag.stderr, 'ERROR unknown option \'--forse\' (did you mean --force?)\n')
})

usage('a missing argument and a surplus one, and --help still prints the help with exit 0', async () => {
  const missing = await runCaptured(['show-task'])
  assert.equal([missing.status, missing.stderr], [2, 'ERROR missing required argument \'id\'\n'])
  const surplus = await runCaptured(['show-task', '1', '2'])
  assert.is(surplus.status, 2)
  assert.match(surplus.stderr, /^ERROR too many arguments for 'show-task'\. Expected 1 argument but got 2\.\n$/)
  const help = await runCaptured(['exec', '--help'])
  assert.is(help.status, 0)
  assert.match(help.stdout, /Usage: cantrip exec/)
  assert.match(help.stdout, /Examples:\n {2}cantrip exec --all -- hostname -f/)
})

usage('wait-for: Juju\'s subcommands complete after it; a misspelt --query or a query that does not parse fails before connecting', async () => {
  assert.equal(await runCaptured(['__complete', 'wait-for']), { status: 0, stdout: 'application\nmachine\nmodel\nunit\n', stderr: '' })
  const flag = await runCaptured(['wait-for', 'application', 'kv', '--queyr', 'status=="active"'])
  assert.equal([flag.status, flag.stderr], [2, 'ERROR unknown option \'--queyr\' (did you mean --query?)\n'])
  const kind = await runCaptured(['wait-for', 'relation', 'kv'])
  assert.equal([kind.status, kind.stderr], [2, 'ERROR unknown command \'relation\'; see "cantrip --help"\n'])
  // Exit 1, as Juju's wait-for returns the parse error from its Run (cmd/juju/waitfor/strategy.go).
  const query = await runCaptured(['wait-for', 'unit', 'kv/0', '--query', 'workload-status="active"'])
  assert.equal([query.status, query.stderr], [1, 'ERROR cantrip wait-for: cannot parse query at column 16: expected "==" or "=>", got "="\n'])
  const name = await runCaptured(['wait-for', 'unit', 'kv', '--timeout', '1s'])
  assert.equal([name.status, name.stderr], [1, 'ERROR cantrip wait-for: expected a unit name like "kv/0", got "kv"\n'])
})

usage('the built CLI: exit status 2 and the one line, as a shell sees them', () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-usage-'))
  try {
    const run = cantrip(home, ['deploy', '--bogus'])
    assert.equal([run.status, run.stderr, run.stdout], [2, 'ERROR unknown option \'--bogus\'\n', ''])
  } finally {
    removeHome(home)
  }
})

usage.run()
