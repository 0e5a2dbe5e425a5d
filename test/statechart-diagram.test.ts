import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { and, createMachine, fromPromise, not, or, setup, stateIn } from 'xstate'
import {
  defaultOutDir,
  defaultReadme,
  exportStatecharts,
  loadRegistry,
  readStatechartsBlock,
  readmeBlockBegin,
  readmeBlockEnd,
  replaceStatechartsBlock,
  statechartDiagrams,
  statechartsReadmeBlock
} from '../agent/export-statecharts.ts'
import { checkMermaid, toMermaid, type Statechart } from '../runtime/statechart-diagram.ts'

const repoRoot = fileURLToPath(new URL('..', import.meta.url))

// Sample machines covering what the generator draws; the real ones are checked at the end.

const makeNested = () => setup({}).createMachine({
  id: 'nested',
  initial: 'loading',
  states: {
    loading: { on: { 'load.completed': 'active' } },
    active: {
      initial: 'idle',
      on: { 'unit.remove': 'dying' },
      states: {
        idle: { on: { 'work.queued': 'busy', 'remote.changed': { target: '#nested.loading' } } },
        busy: {
          initial: 'preparing',
          states: {
            preparing: { on: { 'step.done': 'executing' } },
            executing: { on: { 'step.done': '#nested.active.idle' } }
          }
        }
      }
    },
    dying: {}
  }
})
const nested = makeNested()

const parallel = setup({}).createMachine({
  id: 'parallel',
  initial: 'running',
  states: {
    running: {
      type: 'parallel',
      on: { stop: 'stopped', 'status.set': { actions: () => {} }, restart: '.work.idle' },
      states: {
        work: { initial: 'idle', states: { idle: { on: { go: 'busy' } }, busy: { on: { done: 'idle' } } } },
        timers: { initial: 'off', states: { off: { on: { arm: 'armed' } }, armed: { on: { fire: 'off' } } } }
      }
    },
    stopped: {}
  }
})

const guarded = setup({
  guards: {
    isLeader: () => true,
    hasQuorum: () => true,
    atLeast: (_args, _params: { n: number }) => true
  }
}).createMachine({
  id: 'guarded',
  initial: 'a',
  states: {
    a: {
      on: {
        go: [
          { target: 'b', guard: 'isLeader' },
          { target: 'c', guard: { type: 'atLeast', params: { n: 3 } } },
          { target: 'd', guard: ({ event }) => event.type === 'go' },
          { target: 'd', guard: not('isLeader') },
          { target: 'd', guard: and(['isLeader', or(['hasQuorum', stateIn('#guarded.b')])]) },
          { target: 'd' }
        ]
      }
    },
    b: {},
    c: {},
    d: {}
  }
})

const timed = setup({ delays: { retryDelay: () => 5000 } }).createMachine({
  id: 'timed',
  initial: 'waiting',
  states: {
    waiting: { after: { 1000: 'checking', retryDelay: { target: 'retrying' } } },
    checking: { always: [{ target: 'done', guard: () => true }, { target: 'waiting' }] },
    retrying: {},
    done: { type: 'final' }
  }
})

const invoking = setup({
  actors: {
    persist: fromPromise(async () => 1),
    runHook: fromPromise(async () => 1)
  }
}).createMachine({
  id: 'invoking',
  initial: 'saving',
  states: {
    saving: { invoke: { src: 'persist', onDone: 'running', onError: 'failed' } },
    running: {
      invoke: { id: 'hook', src: 'runHook', onDone: [{ target: 'finished', guard: () => true }, { target: 'failed' }] }
    },
    inline: { invoke: { src: 'persist', onError: 'failed' }, always: 'finished' },
    failed: { type: 'final' },
    finished: { type: 'final' }
  }
})

// Inline actor logic: the invoke's own id names it.
const inlineInvoke = createMachine({
  id: 'inlineInvoke',
  initial: 'probing',
  states: {
    probing: { invoke: { id: 'probe', src: fromPromise(async () => 1), onError: 'failed' } },
    failed: {}
  }
})

const completing = setup({}).createMachine({
  id: 'completing',
  initial: 'install',
  states: {
    install: {
      initial: 'fetch',
      onDone: 'started',
      states: { fetch: { on: { fetched: 'ready' } }, ready: { type: 'final' } }
    },
    started: {}
  }
})

const rootHandlers = setup({}).createMachine({
  id: 'rootHandlers',
  initial: 'up',
  on: { 'agent.stop': '.stopped', 'status.get': { actions: () => {} } },
  states: {
    up: {
      initial: 'idle',
      on: { reset: '.idle', poke: { actions: () => {} }, forbidden: {} },
      states: { idle: { on: { tick: { actions: () => {} } } }, busy: {} }
    },
    stopped: {}
  }
})

const awkwardNames = setup({}).createMachine({
  id: 'awkward',
  initial: 'a.b',
  states: {
    'a.b': { on: { 'relation:joined': 'a/b', 'x;y': 'a-b' } },
    'a/b': {},
    'a-b': {},
    install_start: {},
    'with "quotes"': {},
    default: {}
  }
})

const parallelRoot = setup({}).createMachine({
  id: 'agent',
  type: 'parallel',
  on: { 'agent.stop': { actions: () => {} } },
  states: {
    main: { initial: 'on', states: { on: { on: { off: 'off' } }, off: {} } },
    watch: {}
  }
})

const withHistory = setup({}).createMachine({
  id: 'withHistory',
  initial: 'work',
  states: {
    work: {
      initial: 'a',
      on: { pause: 'paused' },
      states: { a: { on: { next: 'b' } }, b: {}, hist: { type: 'history', history: 'deep', target: 'b' } }
    },
    paused: { on: { resume: 'work.hist' } }
  }
})

const samples = { nested, parallel, guarded, timed, invoking, inlineInvoke, completing, rootHandlers, awkwardNames, parallelRoot, withHistory }

function lines (text: string): string[] {
  return text.split('\n').map(line => line.trim())
}

function assertHasLines (text: string, expected: string[]): void {
  const have = lines(text)
  for (const line of expected) {
    assert.ok(have.includes(line), `expected the line ${JSON.stringify(line)} in:\n${text}`)
  }
}

test('toMermaid draws nested compound states as blocks with their initial state', () => {
  const text = toMermaid(nested)
  assert.is(text.split('\n')[0], 'stateDiagram-v2')
  assertHasLines(text, [
    '[*] --> s_loading',
    'state "active" as s_active',
    'state s_active {',
    '[*] --> s_active__idle',
    'state "busy" as s_active__busy',
    'state s_active__busy {',
    '[*] --> s_active__busy__preparing',
    's_active__busy__preparing --> s_active__busy__executing : step.done',
    's_loading --> s_active : load.completed',
    's_active --> s_dying : unit.remove'
  ])
  // Transitions that leave their block are written at the top level, after all blocks.
  const topLevel = text.split('\n').filter(line => /^ {2}\S/.test(line))
  assert.ok(topLevel.includes('  s_active__idle --> s_loading : remote.changed'), text)
  assert.ok(topLevel.includes('  s_active__busy__executing --> s_active__idle : step.done'), text)
})

test('toMermaid separates the regions of a parallel state with --', () => {
  const text = toMermaid(parallel)
  const body = lines(text)
  const open = body.indexOf('state s_running {')
  const divider = body.indexOf('--')
  assert.ok(open >= 0 && divider > open, text)
  assert.ok(body.indexOf('state s_running__work {') < divider, text)
  assert.ok(body.indexOf('state s_running__timers {') > divider, text)
  assert.is(body.filter(line => line === '--').length, 1)
  assertHasLines(text, [
    '[*] --> s_running__work__idle',
    's_running__work__idle --> s_running__work__busy : go',
    's_running__timers__armed --> s_running__timers__off : fire',
    's_running --> s_stopped : stop',
    // No line inside a parallel state is outside its regions, so its pseudo-state is beside it.
    'state "any state in running" as x_any__running',
    'x_any__running --> x_any__running : status.set',
    'x_any__running --> s_running__work__idle : restart'
  ])
  assert.ok(body.indexOf('state "any state in running" as x_any__running') > body.lastIndexOf('}'), text)
  assert.not.ok(body.some(line => line.startsWith('[*] --> s_running__work ') || line === '[*] --> s_running__work'), 'regions have no initial arrow')
})

test('toMermaid labels guarded transitions with the guard name', () => {
  assertHasLines(toMermaid(guarded), [
    's_a --> s_b : go [isLeader]',
    's_a --> s_c : go [atLeast]',
    's_a --> s_d : go [guard]',
    's_a --> s_d : go [not isLeader]',
    's_a --> s_d : go [isLeader and (hasQuorum or in guarded.b)]',
    's_a --> s_d : go'
  ])
})

test('toMermaid labels delayed and eventless transitions', () => {
  const text = toMermaid(timed)
  assertHasLines(text, [
    's_waiting --> s_checking : after 1000ms',
    's_waiting --> s_retrying : after retryDelay',
    's_checking --> s_done : always [guard]',
    's_checking --> s_waiting : always',
    's_done --> [*]'
  ])
})

test('toMermaid labels invoke completion and failure with the actor', () => {
  assertHasLines(toMermaid(invoking), [
    's_saving --> s_running : done(persist)',
    's_saving --> s_failed : error(persist)',
    's_running --> s_finished : done(runHook) [guard]',
    's_running --> s_failed : done(runHook)',
    's_inline --> s_failed : error(persist)',
    's_inline --> s_finished : always',
    's_failed --> [*]',
    's_finished --> [*]'
  ])
  assertHasLines(toMermaid(inlineInvoke), ['s_probing --> s_failed : error(probe)'])
})

test('toMermaid draws final states and the onDone of a compound state', () => {
  assertHasLines(toMermaid(completing), [
    'state s_install {',
    's_install__fetch --> s_install__ready : fetched',
    's_install__ready --> [*]',
    's_install --> s_started : done'
  ])
})

test('toMermaid draws transitions a state declares into itself from an "any state" pseudo-state', () => {
  const text = toMermaid(rootHandlers)
  assertHasLines(text, [
    'state "any state" as x_any',
    'x_any --> s_stopped : agent.stop',
    'x_any --> x_any : status.get',
    'state "any state" as x_any__up',
    'x_any__up --> s_up__idle : reset',
    'x_any__up --> x_any__up : poke',
    's_up__idle --> s_up__idle : tick'
  ])
  assert.not.ok(text.includes('forbidden'), 'a transition with no target and no actions is not drawn')
  assert.not.ok(/s_up --> s_up\b/.test(text), 'no self-loop on a composite state')
})

test('toMermaid wraps a parallel machine in a block named after it', () => {
  const text = toMermaid(parallelRoot)
  assertHasLines(text, [
    'state "agent" as x_machine',
    '[*] --> x_machine',
    'state x_machine {',
    '--',
    'state "watch" as s_watch',
    'x_any --> x_any : agent.stop'
  ])
})

test('toMermaid keeps labels readable and ids to [A-Za-z0-9_]', () => {
  const text = toMermaid(awkwardNames)
  assertHasLines(text, [
    'state "a.b" as s_a_b',
    'state "a/b" as s_a_b_2',
    'state "a-b" as s_a_b_3',
    'state "install_start" as s_install_start_',
    'state "with _quotes_" as s_with__quotes_',
    'state "default" as s_default',
    's_a_b --> s_a_b_2 : relation_joined',
    's_a_b --> s_a_b_3 : x_y'
  ])
})

test('toMermaid draws history states with their default target', () => {
  assertHasLines(toMermaid(withHistory), [
    'state "H*" as s_work__hist',
    's_work__hist --> s_work__b',
    's_paused --> s_work__hist : resume'
  ])
})

test('toMermaid sets the layout direction when asked', () => {
  const text = toMermaid(nested, { direction: 'LR' })
  assert.equal(text.split('\n').slice(0, 2), ['stateDiagram-v2', '  direction LR'])
  assert.equal(checkMermaid(text), [])
})

test('toMermaid output is deterministic', () => {
  for (const [name, machine] of Object.entries(samples)) {
    const first = toMermaid(machine)
    assert.is(toMermaid(machine), first, `${name}: same machine, same text`)
  }
  assert.is(toMermaid(makeNested()), toMermaid(nested), 'an equal definition gives the same text')
})

test('every sample diagram passes checkMermaid', () => {
  for (const [name, machine] of Object.entries(samples)) {
    assert.equal(checkMermaid(toMermaid(machine)), [], name)
  }
})

test('checkMermaid finds what would break Mermaid', () => {
  const problems = (text: string): string => checkMermaid(text).join('\n')
  assert.match(problems('stateDiagram-v2\n  state "a" as s_a\n  state s_a {\n'), 'unclosed')
  assert.match(problems('stateDiagram-v2\n  }'), 'without a matching')
  assert.match(problems('stateDiagram-v2\n  state "a" as s.a'), 'outside [A-Za-z0-9_]')
  assert.match(problems('stateDiagram-v2\n  state "a" as s_a\n  s_a --> s_a : done: persist'), 'character Mermaid reads as syntax')
  assert.match(problems('stateDiagram-v2\n  state "a" as s_a\n  s_a --> s_b'), 'undeclared state "s_b"')
  assert.match(problems('stateDiagram-v2\n  --'), 'only allowed inside')
  assert.match(problems('stateDiagram-v2\n  state "a" as s_a \n'), 'trailing whitespace')
  assert.match(problems('graph TD'), 'expected "stateDiagram-v2"')
})

test('replaceStatechartsBlock keeps the rest of the README', () => {
  const block = `${readmeBlockBegin}\nnew\n${readmeBlockEnd}`
  const readme = `# cantrip\n\nintro\n\n${readmeBlockBegin}\nold\n${readmeBlockEnd}\n\n## Later\n`
  assert.is(replaceStatechartsBlock(readme, block), `# cantrip\n\nintro\n\n${block}\n\n## Later\n`)
  assert.is(readStatechartsBlock(replaceStatechartsBlock(readme, block)), block)
  assert.is(replaceStatechartsBlock('# cantrip\n\nintro\n', block), `# cantrip\n\nintro\n\n${block}\n`)
  assert.is(replaceStatechartsBlock(undefined, block), `# cantrip\n\n${block}\n`)
  assert.is(readStatechartsBlock('# cantrip\n'), undefined)
  assert.throws(() => replaceStatechartsBlock(`${readmeBlockBegin}\n`, block), /once/)
  assert.throws(() => replaceStatechartsBlock(`${readmeBlockEnd}\n${readmeBlockBegin}\n`, block), /once/)
  assert.throws(() => replaceStatechartsBlock(`${block}\n${block}\n`, block), /once/)
})

test('statechartsReadmeBlock has a heading and a mermaid block per statechart and says how to regenerate', () => {
  const diagrams = statechartDiagrams([{ name: 'nested', title: 'Nested', machine: nested }, { name: 'timed', title: 'Timed', machine: timed }])
  const block = statechartsReadmeBlock(diagrams, { diagramsDir: 'docs/statecharts', registry: 'actors/statecharts.ts' })
  assert.ok(block.startsWith(readmeBlockBegin + '\n') && block.endsWith('\n' + readmeBlockEnd), block)
  assert.match(block, 'npm run diagrams')
  assert.match(block, `### Nested\n\nSource: [\`docs/statecharts/nested.mmd\`](docs/statecharts/nested.mmd) · laid out: [\`docs/statecharts/nested.svg\`](docs/statecharts/nested.svg)\n\n\`\`\`mermaid\n${toMermaid(nested)}\n\`\`\``)
  assert.match(block, '### Timed')
})

test('statechartDiagrams refuses names that are not file names, and duplicates', () => {
  assert.throws(() => statechartDiagrams([{ name: 'Unit/0', title: 'x', machine: nested }]), /lower-case/)
  assert.throws(() => statechartDiagrams([{ name: 'a', title: 'x', machine: nested }, { name: 'a', title: 'y', machine: timed }]), /twice/)
})

async function runCli (argv: string[], cwd: string, statecharts?: Statechart[]): Promise<{ code: number, stdout: string[], stderr: string[] }> {
  const stdout: string[] = []
  const stderr: string[] = []
  const code = await exportStatecharts(argv, {
    cwd,
    stdout: line => stdout.push(line),
    stderr: line => stderr.push(line),
    ...(statecharts === undefined ? {} : { loadStatecharts: async () => statecharts })
  })
  return { code, stdout, stderr }
}

test('export-statecharts rejects unknown flags and formats with one line and exit 2', async () => {
  const unknown = await runCli(['--frobnicate'], repoRoot, [])
  assert.is(unknown.code, 2)
  assert.is(unknown.stderr.length, 1)
  assert.match(unknown.stderr[0] ?? '', 'unknown option "--frobnicate"')
  const other = await runCli(['--format', 'png'], repoRoot, [])
  assert.is(other.code, 2)
  assert.equal(other.stderr, ['export-statecharts: expected --format mermaid, svg or mermaid,svg, got "png"'])
  assert.is((await runCli(['--format', 'svg,gif'], repoRoot, [])).code, 2)
  const positional = await runCli(['extra'], repoRoot, [])
  assert.is(positional.code, 2)
})

test('export-statecharts writes the diagrams and README, and --check spots any drift', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cantrip-statecharts-'))
  try {
    const charts: Statechart[] = [{ name: 'nested', title: 'Nested', machine: nested }, { name: 'timed', title: 'Timed', machine: timed }]
    await writeFile(path.join(dir, 'README.md'), '# cantrip\n\nSomeone else\'s text.\n')
    assert.is((await runCli(['--check'], dir, charts)).code, 1, 'nothing generated yet')
    const written = await runCli(['--format', 'mermaid', '--out', 'docs/statecharts'], dir, charts)
    assert.is(written.code, 0, written.stderr.join('\n'))
    assert.is(await readFile(path.join(dir, 'docs/statecharts/nested.mmd'), 'utf8'), toMermaid(nested) + '\n')
    const readme = await readFile(path.join(dir, 'README.md'), 'utf8')
    assert.ok(readme.startsWith('# cantrip\n\nSomeone else\'s text.\n\n' + readmeBlockBegin), readme)
    const check = await runCli(['--check'], dir, charts)
    assert.is(check.code, 0, check.stderr.join('\n'))
    assert.is((await runCli([], dir, charts)).stdout.at(-1), 'export-statecharts: 2 statechart diagrams, 0 files changed')

    await writeFile(path.join(dir, 'README.md'), readme.replace('### Timed', '### Timed by hand'))
    const drifted = await runCli(['--check'], dir, charts)
    assert.is(drifted.code, 1)
    assert.match(drifted.stderr.join('\n'), /out of date: README\.md; run "npm run diagrams"/)

    const fewer = await runCli(['--check'], dir, charts.slice(0, 1))
    assert.match(fewer.stderr.join('\n'), 'docs/statecharts/timed.mmd (no such statechart)')
    assert.is((await runCli([], dir, charts.slice(0, 1))).code, 0)
    assert.is((await runCli(['--check'], dir, charts.slice(0, 1))).code, 0, 'the stale diagram was removed')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

// Not skipped when the registry cannot be loaded: a README whose diagrams cannot be
// checked against the machines is as wrong as one that does not match them.
test('README statechart diagrams match the machine definitions (run "npm run diagrams" to fix)', async () => {
  const statecharts = await loadRegistry()
  assert.ok(statecharts.length > 0, 'actors/statecharts.ts registers no statecharts')
  const diagrams = statechartDiagrams(statecharts)
  const readme = await readFile(path.join(repoRoot, defaultReadme), 'utf8')
  const expected = statechartsReadmeBlock(diagrams, { diagramsDir: defaultOutDir, registry: 'actors/statecharts.ts' })
  assert.fixture(readStatechartsBlock(readme) ?? '(README.md has no statecharts section)', expected)
  for (const diagram of diagrams) {
    const file = path.join(repoRoot, defaultOutDir, `${diagram.name}.mmd`)
    assert.fixture(await readFile(file, 'utf8').catch(() => `(${file} is missing)`), diagram.mermaid + '\n')
  }
  const check = await runCli(['--check', '--format', 'mermaid,svg'], repoRoot)
  assert.is(check.code, 0, check.stderr.join('\n'))
})

test.run()
