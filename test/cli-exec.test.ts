/**
 * What a user sees of `exec` and operations on real processes (one local controller for
 * the file): two units of one charm on machine 0, demo/1's start hook failing with
 * automatic retries off, so it sits in hook error. Juju's behaviour followed:
 * cmd/juju/action/exec.go (targets, plain output under `unit:` headers, --format),
 * common.go (the "following task failed" list and exit 1, timeouts),
 * listoperations.go/showoperation.go/showtask.go, and the uniter running juju-exec in a
 * hook context under the machine lock also while a hook is in error
 * (worker/uniter/resolver.go lets actions and commands through in the error state).
 */
import '../runtime/polyfill.ts'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { cantrip, cantripOk, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { distProgram } from './support/dist.ts'
import { hostBase } from '../agent/tools/host-base.ts'

const home = mkdtempSync(join(tmpdir(), 'cantrip-exec-'))
const machinesDir = join(home, 'controllers', 'local', 'machines')
const spans = join(home, 'spans')
const ok = (...args: string[]): string => cantripOk(home, ...args)

function writeDemoCharm (dir: string): void {
  const files: Record<string, string> = {
    'metadata.yaml': 'name: demo\nsummary: s\ndescription: d\n',
    'config.yaml': 'options:\n  greeting: {type: string, default: hello}\n',
    'actions.yaml': 'put:\n  description: store\n  params:\n    key: {type: string}\n  required: [key]\n',
    'hooks/install': '#!/bin/bash\ntrue\n',
    'hooks/start': '#!/bin/bash\nif [ "$JUJU_UNIT_NAME" = demo/1 ]; then echo "start refused" >&2; exit 1; fi\nstatus-set active ready\n',
    'actions/put': '#!/bin/bash\naction-set stored="$(action-get key)"\n'
  }
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), content, { mode: 0o755 })
  }
}

const exec = suite('exec and operations')

exec.before(() => {
  writeDemoCharm(join(home, 'demo'))
  ok('bootstrap')
  ok('model-config', 'automatically-retry-hooks=false')
  ok('deploy', join(home, 'demo'))
  ok('add-unit', 'demo', '--to', '0')
  ok('wait-for', 'unit', 'demo/0', '--status', 'active', '--timeout', '4m')
  ok('wait-for', 'unit', 'demo/1', '--status', 'error', '--timeout', '4m')
})

exec.after(() => {
  destroyLeftoverController(home, machinesDir)
  removeHome(home)
})

exec('across an application: each unit\'s output in its hook context, the unit in hook error too; its non-zero return fails the command', () => {
  // Each run records its span: the two units share machine 0, so the machine lock keeps them apart.
  const script = `echo "$JUJU_UNIT_NAME $(config-get greeting)"; s=$(date +%s%N); sleep 0.3; echo "$s $(date +%s%N)" >> ${spans}; if [ "$JUJU_UNIT_NAME" = demo/1 ]; then echo oops >&2; exit 3; fi`
  const run = cantrip(home, ['exec', '--application', 'demo', '--', script])
  assert.is(run.status, 1, run.stderr)
  assert.is(run.stdout, 'demo/0:\ndemo/0 hello\n\ndemo/1:\ndemo/1 hello\noops\n\n')
  assert.match(run.stderr, /^ERROR the following task failed:\n - id "\d+" with return code 3\n\nuse 'cantrip show-task' to inspect the failure\n$/)
  const [a, b] = readFileSync(spans, 'utf8').trim().split('\n').map(line => line.split(' ').map(BigInt))
  assert.ok(a![1]! <= b![0]! || b![1]! <= a![0]!, `overlapping runs: ${String(a)} ${String(b)}`)
  // The unit in error stays in error: a command does not resolve its hook.
  const status = JSON.parse(ok('status', '--format', 'json')) as { applications: { demo: { units: Record<string, { 'workload-status': { current: string } }> } } }
  assert.is(status.applications.demo.units['demo/1']!['workload-status'].current, 'error')
})

exec('one unit: its output alone, exit 0; --format yaml keys results by unit with id, status, timing as times', () => {
  assert.is(ok('exec', '--unit', 'demo/0', 'echo', '$JUJU_UNIT_NAME'), 'demo/0\n')
  const status = JSON.parse(ok('status', '--format', 'json')) as { applications: { demo: { units: Record<string, { leader?: boolean }> } } }
  const leader = Object.entries(status.applications.demo.units).find(([, u]) => u.leader === true)![0]
  const doc = parse(ok('exec', '--unit', 'demo/leader', '--format', 'yaml', '--', 'is-leader')) as Record<string, Record<string, unknown>>
  assert.equal(Object.keys(doc), [leader])
  const task = doc[leader]!
  assert.equal([task['status'], task['unit'], task['results']], ['completed', leader, { 'return-code': 0, stdout: 'True\n' }])
  const timing = task['timing'] as Record<string, string>
  assert.match(timing['enqueued']!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$/)
  assert.match(timing['completed']!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$/)
})

exec('operations, show-operation and show-task show what ran; run with a missing required parameter queues nothing', () => {
  const before = JSON.parse(ok('operations', '--format', 'json')) as Record<string, { summary: string, status: string, tasks: Record<string, { host: string, status: string }> }>
  const execs = Object.values(before).filter(op => op.summary.startsWith('exec '))
  assert.ok(execs.length >= 3, JSON.stringify(before))
  const table = ok('operations', '--actions', 'juju-exec')
  assert.match(table, /^ *Id {2}Status +Started +Finished +Task IDs +Summary\n/)
  // Started and Finished both shown (Juju 3.6 listoperations.go), once the units began and ended the tasks.
  assert.match(table, /\n *\d+ {2}completed {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d {2}\d+,\d+ +exec echo "\$JUJU_UNIT_NAME/)
  const [firstId, first] = Object.entries(before)[0]!
  assert.equal(Object.values(first.tasks).map(t => t.host), ['demo/0', 'demo/1'])
  const shown = parse(ok('show-operation', firstId)) as { status: string, action: { name: string } }
  assert.equal([shown.status, shown.action.name], ['completed', 'juju-exec'])
  const failedTask = Object.entries(first.tasks).find(([, t]) => t.host === 'demo/1')![0]
  // show-task prints with run's plain formatter (showtask.go, common.go printPlainOutput): no
  // results of its own, so an empty line, then the task's stdout and stderr.
  assert.is(ok('show-task', failedTask), '\ndemo/1 hello\noops\n')

  const refused = cantrip(home, ['run', 'demo/0', 'put', '--wait', '1m'])
  assert.is(refused.status, 1)
  assert.is(refused.stderr, 'ERROR controller 0.1.0: cannot run action "put": validation failed: (root) : "key" property is missing and required, given {}\n')
  assert.equal(Object.keys(JSON.parse(ok('operations', '--format', 'json')) as object), Object.keys(before), 'nothing was queued')
  // The task's whole document, keyed by unit, with the runner's return-code: --format yaml (cmd/juju/action/common.go).
  const put = parse(ok('run', 'demo/0', 'put', 'key=k1', '--wait', '2m', '--format', 'yaml')) as Record<string, { status: string, results: unknown }>
  assert.equal(Object.keys(put), ['demo/0'])
  assert.equal([put['demo/0']!.status, put['demo/0']!.results], ['completed', { stored: 'k1', 'return-code': 0 }])
  const none = cantrip(home, ['operations', '--units', 'demo/1', '--actions', 'put'])
  assert.equal([none.status, none.stdout, none.stderr], [0, '', 'no matching operations\n'])
})

exec('run and exec --background return at once with Juju\'s lines; waiting, run says what it runs; every task records when it started', () => {
  // cmd/juju/action/common.go processOperationResults: "Scheduled operation" and the show-* hints, or "Running operation" and "Waiting for task".
  const bg = cantrip(home, ['run', 'demo/0', 'put', 'key=bg', '--background'])
  assert.equal([bg.status, bg.stdout], [0, ''], bg.stderr)
  const [, opId, taskId] = /^Scheduled operation (\d+) with task (\d+)\n/.exec(bg.stderr) ?? []
  assert.is(bg.stderr, `Scheduled operation ${opId} with task ${taskId}\nCheck operation status with 'cantrip show-operation ${opId}'\nCheck task status with 'cantrip show-task ${taskId}'\n`)
  const bgExec = cantrip(home, ['exec', '--application', 'demo', '--background', '--', 'true'])
  assert.is(bgExec.status, 0, bgExec.stderr)
  const [, execOp] = /^Scheduled operation (\d+) with 2 tasks\n/.exec(bgExec.stderr) ?? []
  assert.is(bgExec.stderr, `Scheduled operation ${execOp} with 2 tasks\nCheck operation status with 'cantrip show-operation ${execOp}'\nCheck task status with 'cantrip show-task <id>'\n`)
  assert.equal(Object.keys(parse(bgExec.stdout) as object), ['demo/0', 'demo/1'])
  const both = cantrip(home, ['run', 'demo/0', 'put', 'key=x', '--background', '--wait', '1m'])
  assert.equal([both.status, both.stderr], [1, 'ERROR cantrip run: expected --background or --wait, not both, got "--wait 1m"\n'])

  // Each unit runs its queue in order, so once these finish, the background ones have.
  const fg = cantrip(home, ['run', 'demo/0', 'put', 'key=fg', '--wait', '2m'])
  assert.is(fg.status, 0, fg.stderr)
  // By default, only what the charm set, then Juju's blank line (common.go printPlainOutput; run_test.go).
  assert.is(fg.stdout, 'stored: fg\n\n')
  assert.match(fg.stderr, /^Running operation (\d+) with 1 task\n {2}- task (\d+) on unit-demo-0\n\nWaiting for task \2\.\.\.\n$/)
  assert.is(cantrip(home, ['exec', '--application', 'demo', '--', 'true']).status, 0)
  const ops = JSON.parse(ok('operations', '--format', 'json')) as Record<string, { status: string, timing?: { started?: string } }>
  for (const id of [opId!, execOp!]) {
    assert.is(ops[id]!.status, 'completed', id)
    assert.match(ops[id]!.timing?.started ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$/)
  }
  assert.match(ok('operations'), new RegExp(`\\n *${opId} {2}completed {2}\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d {2}\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d {2}${taskId} +put run on unit-demo-0\\n`))
  const task = parse(ok('show-task', taskId!, '--format', 'yaml')) as { status: string, results: Record<string, unknown>, timing: Record<string, string> }
  assert.equal([task.status, task.results['stored'], Object.keys(task.timing)], ['completed', 'bg', ['completed', 'enqueued', 'started']])
})

exec('machines and show-machine (cmd/juju/machine/list.go, show.go): the Machine section, and the machine\'s status document', () => {
  assert.match(ok('machines'), /^Machine +State +Address +Inst id +Base +AZ +Message\n0 +started +127\.0\.0\.1 +local:machine-0 /)
  const shown = parse(ok('show-machine', '0')) as { model: { name: string }, machines: Record<string, { 'juju-status': { current: string } }> }
  assert.equal([shown.model.name, Object.keys(shown.machines), shown.machines['0']!['juju-status'].current], ['default', ['0'], 'started'])
  const missing = cantrip(home, ['show-machine', '7'])
  assert.equal([missing.status, missing.stderr], [1, 'ERROR cantrip show-machine: expected machines of the model (0), got "7"\n'])
})

exec('status --format yaml and json (juju-semantics §8, Juju 3.6 formatted.go): the same keys; machine 0\'s base is its host\'s os-release', async () => {
  const expected = hostBase()
  type Doc = { model: Record<string, unknown>, machines: Record<string, { base?: { name: string, channel: string } } & Record<string, unknown>>, applications: Record<string, { units: Record<string, Record<string, unknown>> } & Record<string, unknown>> }
  // The agent reports its base with its version after its first view of the model: wait for that commit, bounded.
  let json: Doc | undefined
  for (let i = 0; i < 120 && (json === undefined || (expected !== undefined && json.machines['0']!.base === undefined)); i++) {
    if (json !== undefined) await new Promise(resolve => setTimeout(resolve, 500))
    json = JSON.parse(ok('status', '--format', 'json')) as Doc
  }
  const yaml = parse(ok('status', '--format', 'yaml')) as Doc
  assert.equal(Object.keys(json!), ['model', 'machines', 'applications', 'controller'])
  assert.equal(Object.keys(yaml), Object.keys(json!))
  assert.equal(Object.keys(json!.model), ['name', 'type', 'controller', 'cloud', 'region', 'version', 'model-status', 'sla'])
  assert.equal(Object.keys(yaml.machines['0']!), Object.keys(json!.machines['0']!))
  for (const key of ['juju-status', 'dns-name', 'ip-addresses', 'instance-id', 'machine-status']) assert.ok(key in json!.machines['0']!, key)
  const unitKeys = Object.keys(json!.applications['demo']!.units['demo/0']!)
  for (const key of ['workload-status', 'juju-status', 'machine', 'public-address']) assert.ok(unitKeys.includes(key), key)
  assert.equal(Object.keys(yaml.applications['demo']!.units['demo/0']!), unitKeys)
  if (expected === undefined) return
  const at = expected.indexOf('@')
  assert.equal(json!.machines['0']!.base, { name: expected.slice(0, at), channel: expected.slice(at + 1) })
  assert.equal(yaml.machines['0']!.base, json!.machines['0']!.base)
  // Reported with the base: the host's name, Juju 3's machine `hostname`.
  assert.is(json!.machines['0']!['hostname'], hostname())
  assert.match(ok('status'), new RegExp(`\\n0 +started +127\\.0\\.0\\.1 +local:machine-0 +${expected.replaceAll('.', '\\.')}\\b`))
})

exec('ssh on the local provider: the unit\'s agent directory on its machine, the command\'s exit status passed through (cmd/juju/ssh)', () => {
  const run = cantrip(home, ['ssh', 'demo/0', '--', 'echo "$PWD $JUJU_UNIT_NAME $JUJU_MACHINE_ID"; exit 4'])
  assert.equal([run.status, run.stderr], [4, ''])
  assert.is(run.stdout, `${join(machinesDir, 'machine-0', 'agent', 'agents', 'unit-demo-0')} demo/0 0\n`)
  assert.is(ok('ssh', '0', '--', 'basename "$PWD"'), 'machine-0\n')
})

exec('colour: status words coloured on a terminal (a pty from util-linux script), plain under NO_COLOR, --no-color and a pipe', () => {
  const { NO_COLOR: _n, CI: _c, ...env } = process.env
  const onTerminal = (args: string[], extra: Record<string, string> = {}): string => {
    const line = [process.execPath, distProgram('cantrip'), ...args].map(a => `'${a}'`).join(' ')
    const run = spawnSync('script', ['-qec', line, '/dev/null'], { env: { ...env, CANTRIP_HOME: home, TERM: 'xterm', ...extra }, encoding: 'utf8' })
    assert.is(run.status, 0, run.stderr)
    return run.stdout
  }
  assert.match(onTerminal(['status']), /\x1b\[32mactive\x1b\[39m/)
  assert.not.match(onTerminal(['status', '--no-color']), /\x1b\[/)
  assert.not.match(onTerminal(['status'], { NO_COLOR: '1' }), /\x1b\[/)
  assert.not.match(onTerminal(['status'], { CI: 'true' }), /\x1b\[/)
  assert.not.match(ok('status'), /\x1b\[/, 'a pipe')
})

exec('debug-log at Juju\'s default logging-config (<root>=INFO): no DEBUG record was shipped, and every time is a time', () => {
  const lines = ok('debug-log', '--replay', '--no-tail').trimEnd().split('\n')
  // What an operator needs is there: demo/1's hook output on stderr (WARNING) and its failure.
  assert.ok(lines.some(line => /^unit-demo-1: \S+ ERROR juju\.worker\.uniter hook "start" failed: exit status 1$/.test(line)), lines.join('\n'))
  assert.ok(lines.some(line => /^unit-demo-1: \S+ WARNING unit\.demo\/1\.start start refused$/.test(line)), lines.join('\n'))
  const json = ok('debug-log', '--replay', '--no-tail', '--format', 'json', '--include', 'demo/1', '--level', 'ERROR').trim().split('\n').map(line => JSON.parse(line) as Record<string, string>)
  assert.equal(Object.keys(json[0]!), ['entity', 'timestamp', 'level', 'module', 'message'])
  assert.equal([json[0]!['entity'], json[0]!['level'], json[0]!['module']], ['unit-demo-1', 'ERROR', 'juju.worker.uniter'])
  assert.match(json[0]!['timestamp']!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  for (const line of lines) {
    if (/^\s/.test(line)) continue
    assert.match(line, /^\S+: \d\d:\d\d:\d\d (INFO|WARNING|ERROR|CRITICAL) \S+/, line)
    assert.not.match(line, /\b\d{12,}\b/, `a raw epoch in: ${line}`)
  }
})

exec('completion bash, sourced in bash: command names, then the current model\'s application and unit names', () => {
  const complete = (...words: string[]): string[] => {
    const script = [
      'cantrip() { "$CANTRIP_NODE" "$CANTRIP_DIST" "$@"; }',
      'source <(cantrip completion bash)',
      `COMP_WORDS=(${words.map(w => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}`,
      '_cantrip_complete',
      'printf "%s\\n" "${COMPREPLY[@]}"'
    ].join('\n')
    const run = spawnSync('bash', ['-c', script], { env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1', CANTRIP_NODE: process.execPath, CANTRIP_DIST: distProgram('cantrip') }, encoding: 'utf8' })
    assert.is(run.status, 0, run.stderr)
    return run.stdout.split('\n').filter(line => line !== '')
  }
  assert.equal(complete('cantrip', 'sta').sort(), ['start-agent', 'status'])
  assert.ok(complete('cantrip', 'ex').includes('exec'))
  assert.ok(!complete('cantrip', '').includes('__complete'), 'the helper stays hidden')
  assert.equal(complete('cantrip', 'config', 'de').sort(), ['demo', 'demo/0', 'demo/1'])
  assert.equal(complete('cantrip', 'remove-unit', 'demo/').sort(), ['demo/0', 'demo/1'])
})

/** The machine agent's pid (local provider: `machines/machine-N/agent.pid`). */
function agentPid (machine: string): number {
  const file = join(machinesDir, `machine-${machine}`, 'agent.pid')
  assert.ok(existsSync(file), file)
  return Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0])
}

const unitsOf = (): string[] => Object.keys((JSON.parse(ok('status', '--format', 'json')) as { applications: { demo?: { units?: Record<string, unknown> } } }).applications.demo?.units ?? {})

exec('remove-unit --force: a unit whose agent is gone leaves the model at once (cmd/juju/application/removeunit.go)', () => {
  // SIGSTOP: the agent is gone for the controllers, and the provider's watchdog, which
  // restarts a dead agent, sees its process and leaves it alone.
  const pid = agentPid('0')
  process.kill(pid, 'SIGSTOP')
  try {
    assert.is(ok('remove-unit', 'demo/1'), 'will remove unit demo/1\n')
    assert.equal(unitsOf(), ['demo/0', 'demo/1'], 'dying: nobody runs its stop and remove hooks')
    assert.is(ok('remove-unit', '--force', 'demo/1'), 'will remove unit demo/1\n')
    assert.equal(unitsOf(), ['demo/0'])
  } finally {
    process.kill(pid, 'SIGCONT')
  }
})

exec.run()
