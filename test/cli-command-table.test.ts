/**
 * The CLI's command table (agent/cli/commands/index.ts): a run loads only the file that
 * registers its command, so the table must list exactly the names (and aliases) each
 * file registers, and a run must pick the right file from argv, or all of them when it
 * cannot tell (help, completion, an unknown name), so commander answers as with all.
 */
import '../runtime/polyfill.ts'
import { Command } from 'commander'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createContext } from '../agent/cli/cli-context.ts'
import { commandModules, commandName, modulesFor } from '../agent/cli/commands/index.ts'

const table = suite('cli command table')

table('each file registers exactly the names the table lists for it', async () => {
  const context = createContext({ noColor: true })
  for (const module of commandModules) {
    const program = new Command('cantrip')
    ;(await module.load())(program, context)
    const registered = program.commands.flatMap(c => [c.name(), ...c.aliases()]).sort()
    assert.equal(registered, [...module.names].sort(), module.names[0])
  }
  const all = commandModules.flatMap(m => m.names)
  assert.is(new Set(all).size, all.length, 'no name listed twice')
})

table('the command name is the first word after the program\'s own options', () => {
  assert.is(commandName(['status', '--format', 'json']), 'status')
  assert.is(commandName(['-m', 'prod', 'status']), 'status')
  assert.is(commandName(['--model', 'c:prod', '--no-color', 'config', 'kv']), 'config')
  assert.is(commandName(['--model=prod', 'run', 'kv/0', 'get']), 'run')
  assert.is(commandName(['-mprod', 'units']), 'units')
  assert.is(commandName([]), undefined)
  assert.is(commandName(['--help']), undefined)
  assert.is(commandName(['--format', 'json', 'status']), undefined)
})

table('one file for a known command; every file for help, completion or an unknown name', () => {
  const names = (argv: string[]): string[] => modulesFor(argv, commandModules).flatMap(m => m.names)
  assert.equal(names(['wait-for', 'application', 'kv']), ['wait-for'])
  assert.equal(names(['relate', 'a', 'b']), ['integrate', 'relate', 'remove-relation'])
  for (const argv of [[], ['--help'], ['help', 'status'], ['stauts'], ['completion', 'bash'], ['__complete', 'sta']]) {
    assert.is(modulesFor(argv, commandModules).length, commandModules.length, argv.join(' '))
  }
})

table.run()
