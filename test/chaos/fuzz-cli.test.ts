/**
 * Fuzzing CLI arguments (issue 12, item 8): random command lines built from cantrip's own
 * commands, flags and typical values plus arbitrary strings, parsed by the same commander
 * program the `cantrip` entry point builds. Each is accepted, or refused with commander's
 * usage error or one CantripError line, before anything is sent: `connect` here refuses
 * (there is no controller), and the commands that start processes or write outside
 * $CANTRIP_HOME (bootstrap, destroy-controller, sim) stop once their arguments have parsed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Command, CommanderError } from 'commander'
import fc from 'fast-check'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { CliContext } from '../../agent/cli/cli-context.ts'
import { loadCommands } from '../../agent/cli/commands/index.ts'
import { CantripError } from '../../runtime/errors.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { accepted, declaredRejection, fuzz, rejected, tallyFigures } from './support/fuzz-harness.ts'

const count = chaosCount(100_000, 2_000)
const test = suite('fuzz: CLI arguments')
const figures: Record<string, number | string> = {}
const parseOnly = new Set(['bootstrap', 'destroy-controller', 'sim'])
let home = ''
let previousHome: string | undefined

class NoController extends CantripError {
  override name = 'NoController'
}

/** Parsing stopped on purpose, before a command that would start or destroy something. */
class Parsed extends Error {}

function program (): Command {
  const context: CliContext = {
    fancy: false,
    model: undefined,
    out: () => {},
    err: () => {},
    async connect () { throw new NoController('cantrip: expected a controller, got none in the fuzz run') }
  }
  const root = new Command('cantrip')
    .option('--no-color', 'plain output')
    .option('-m, --model <model>', 'model')
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} })
  root.hook('preAction', (_root, action) => {
    context.model = (root.opts() as { model?: string }).model
    if (parseOnly.has(action.name())) throw new Parsed()
  })
  for (const register of commands) register(root, context)
  return root
}

const commands = await loadCommands()
const template = program()
const commandNames = template.commands.map(c => c.name())
const flags = [...new Set(template.commands.flatMap(c => c.options.flatMap(o => [o.long, o.short].filter((f): f is string => f !== undefined))))]
const word = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...flags, '-m', '--model', '--help', '-h', '--', '-', '--bogus') },
  fc.constantFrom('web', 'web/0', 'web/-1', 'kv:db', 'web:db', 'x:y:z', '0', '-1', '1.5', '3', '99999999999999999999', 'lxd/0', 'ctl:default', 'a=b', 'port=80', 'port', 'json', 'yaml', 'tabular', 'nonsense', '', ' ', 'localhost', 'local', '--format=json', '--num-units=0', '-n', '0', '10s', '-5m'),
  fc.string({ maxLength: 12 }),
  fc.string({ maxLength: 6, unit: 'binary' })
).map(text => text.replaceAll('/', text.length <= 8 && /^[a-z]+\/-?\d+$/.test(text) ? '/' : '').replaceAll('..', '.'))
const commandLine = fc.tuple(fc.constantFrom(...commandNames, 'no-such-command'), fc.array(word, { maxLength: 6 })).map(([name, args]) => [name, ...args])

test.before(async () => {
  home = await mkdtemp(join(tmpdir(), 'cantrip-fuzz-cli-'))
  previousHome = process.env['CANTRIP_HOME']
  process.env['CANTRIP_HOME'] = home
})

test.after(async () => {
  if (previousHome === undefined) delete process.env['CANTRIP_HOME']
  else process.env['CANTRIP_HOME'] = previousHome
  await rm(home, { recursive: true, force: true })
  reportFigures('fuzz-cli', figures)
})

test('any command line: parsed, or one usage error or CantripError line, before anything is sent', async () => {
  const tally = await fuzz(commandLine, count, async argv => {
    try {
      await program().parseAsync(argv, { from: 'user' })
      return accepted
    } catch (error) {
      if (error instanceof Parsed) return rejected('parsed-only')
      if (error instanceof CommanderError) return rejected(error.code === 'commander.helpDisplayed' || error.code === 'commander.help' ? 'help' : 'usage')
      if (error instanceof NoController) return rejected('needs-controller')
      return declaredRejection(error, [CantripError], { expectedGot: false })
    }
  })
  Object.assign(figures, tallyFigures('cli', tally))
  assert.is(tally.inputs, count)
  assert.is(tally.crashes + tally.hangs, 0)
  assert.ok((tally.rejected['usage'] ?? 0) > 0 && (tally.rejected['needs-controller'] ?? 0) > 0, JSON.stringify(tally))
})

test.run()
