/**
 * Fuzzing hook-tool arguments (issue 12, item 8): every tool of the catalogue gets random
 * argument lists built from its own flags, key=value pairs, relation ids, unit names and
 * arbitrary strings, against an in-memory hook context. A tool either runs or stops with
 * a HookToolError (usage: code 2, refusal: code 1) whose message is one line; --help and
 * a request for stdin are the other declared outcomes. Arguments start with no "/" and hold
 * no "..", so an `-o` or `--file` can only name a file inside the test's own temporary directory.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { HookToolError } from '../../agent/hook-tools/hook-context.ts'
import { HelpRequested, parseArgs } from '../../agent/hook-tools/commands/args.ts'
import { NeedsStdin, ToolCall } from '../../agent/hook-tools/commands/hook-tool.ts'
import { hookTools } from '../../agent/hook-tools/commands/index.ts'
import { FakeHookContext } from '../support/fake-hook-context.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { accepted, declaredRejection, fuzz, rejected, tallyFigures } from './support/fuzz-harness.ts'

const count = chaosCount(100_000, 2_000)
const test = suite('fuzz: hook-tool arguments')
const figures: Record<string, number | string> = {}
let cwd = ''

test.before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'cantrip-fuzz-hook-tools-'))
})

test.after(async () => {
  await rm(cwd, { recursive: true, force: true })
  reportFigures('fuzz-hook-tools', figures)
})

function context (leader: boolean): FakeHookContext {
  return new FakeHookContext({
    leader,
    relation: { id: 3, endpoint: 'db', remoteUnit: 'mysql/0', remoteApplication: 'mysql' },
    relations: [{ id: 3, endpoint: 'db', remoteApplication: 'mysql', units: ['mysql/0'], bags: { 'mysql/0': { host: 'db.local' } } }],
    config: { port: 80, name: 'web', debug: false },
    action: { name: 'backup', id: '7', params: { target: 'a', depth: { deeper: 1 } } },
    storage: { 'data/0': { kind: 'filesystem', location: '/srv/data' } },
    charmState: { k: 'v' }
  } as ConstructorParameters<typeof FakeHookContext>[0])
}

const toolNames = [...hookTools.keys()]
const flagWords = [...new Set(toolNames.flatMap(name => Object.values(hookTools.get(name)!.flags(context(true))).flatMap(def => def.names.map(n => n.length === 1 ? `-${n}` : `--${n}`))))]
const word = fc.oneof(
  fc.constantFrom(...flagWords, '-', '--', '---', '-rx', '--relation=3', '--format=json', '--format=yaml', '--format=bogus', '-o', 'out.txt', '--file', '-', 'settings.yaml'),
  fc.constantFrom('3', '-3', '99', 'db:3', 'db:x', 'mysql/0', 'mysql/-1', 'web/0', 'data/0', 'data', 'k', 'port', 'a.b', '80/tcp', '8000-8010/udp', 'icmp', '0/tcp', '70000/tcp', 'INFO', 'maintenance', 'blocked'),
  fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 12 })).map(([key, value]) => `${key}=${value}`),
  fc.string({ maxLength: 16 }),
  fc.string({ maxLength: 6, unit: 'binary' })
).map(insideCwd)
/** No absolute paths and no "..": an -o or --file argument stays inside the temporary directory. */
function insideCwd (text: string): string {
  let safe = text.replace(/^\/+/, '')
  while (safe.includes('..')) safe = safe.replaceAll('..', '.')
  return safe
}
const input = fc.record({ tool: fc.constantFrom(...toolNames), args: fc.array(word, { maxLength: 6 }), leader: fc.boolean(), stdin: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }) })

test('every tool: runs, or one HookToolError line, --help or a request for stdin', async () => {
  const tally = await fuzz(input, count, async ({ tool, args, leader, stdin }) => {
    const command = hookTools.get(tool)!
    const hookContext = context(leader)
    const call = new ToolCall(hookContext, { cwd, ...(stdin === undefined ? {} : { stdin: new TextEncoder().encode(stdin) }) })
    try {
      await command.run(call, await parseArgs(command.flags(hookContext), args))
      return accepted
    } catch (error) {
      if (error instanceof HelpRequested) return rejected('help')
      if (error instanceof NeedsStdin) return rejected('needs-stdin')
      declaredRejection(error, [HookToolError], { expectedGot: false })
      return rejected(`HookToolError-${(error as HookToolError).code}`)
    }
  })
  Object.assign(figures, tallyFigures('hook-tools', tally))
  assert.is(tally.inputs, count)
  assert.is(tally.crashes + tally.hangs, 0)
  assert.ok(tally.accepted > 0 && (tally.rejected['HookToolError-2'] ?? 0) > 0, JSON.stringify(tally))
})

test('reproducer: -o into a directory that does not exist is a HookToolError (exit 1), not a bare Error', async () => {
  // Found by the full fuzz: format.ts threw a plain Error for the -o file while --file's reader threw HookToolError.
  const hookContext = context(false)
  const command = hookTools.get('config-get')!
  const call = new ToolCall(hookContext, { cwd })
  const error = await command.run(call, await parseArgs(command.flags(hookContext), ['-o', 'missing-dir/out'])).then(() => undefined, (e: unknown) => e)
  assert.instance(error, HookToolError)
  assert.is((error as HookToolError).code, 1)
  assert.is((error as HookToolError).message, `open ${join(cwd, 'missing-dir', 'out')}: no such file or directory`)
})

test.run()
