/**
 * `npm start` (examples/demo.ts) as a new user runs it, in a fresh $CANTRIP_HOME as deep
 * as the default ~/.local/share/cantrip: it exits 0 with every unit active in the printed
 * status, the requests through web answered and the next steps printed, leaving the
 * controller running; `cantrip destroy-controller demo --no-prompt` then leaves no
 * process (controller, machine agents, workloads — by the pids they recorded) and no
 * controller directory behind. A stale "demo" controller is refused with the command
 * that removes it.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantrip, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { ensureDist } from './support/dist.ts'
import { parse, stringify } from 'yaml'
import { processAlive } from './support/processes.ts'

const runMsMax = 240_000

interface Run { code: number | null, stdout: string, stderr: string }

async function runStart (home: string): Promise<Run> {
  ensureDist() // what `npm start` builds before it runs the demo
  // Free ports whatever the bundle's: another clone's npm test may run its own demo at the
  // same moment, and both would find 18400 free before either kv listens there.
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], { env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1', CANTRIP_DEMO_FREE_PORTS: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const kill = setTimeout(() => { child.kill('SIGKILL') }, runMsMax)
  const code = await new Promise<number | null>(resolve => { child.once('close', c => { resolve(c) }) })
  clearTimeout(kill)
  return { code, stdout, stderr }
}

function pidIn (file: string): number | undefined {
  const pid = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0])
  return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined
}

/** Every pid the controller recorded: its members, its machine agents, their units' workloads. */
function recordedPids (home: string, dir: string): Map<number, string> {
  const pids = new Map<number, string>()
  const file = parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as { controllers: Record<string, { controllers: Array<{ pid: number }> }> }
  for (const member of file.controllers['demo']!.controllers) pids.set(member.pid, 'controller')
  const machines = join(dir, 'machines')
  for (const machine of readdirSync(machines)) {
    const agent = pidIn(join(machines, machine, 'agent.pid'))
    if (agent !== undefined) pids.set(agent, `${machine} agent`)
    const units = join(machines, machine, 'agent', 'agents')
    for (const unit of existsSync(units) ? readdirSync(units) : []) {
      const state = join(units, unit, 'state')
      for (const f of existsSync(state) ? readdirSync(state).filter(n => n.endsWith('.pid')) : []) {
        const pid = pidIn(join(state, f))
        if (pid !== undefined) pids.set(pid, `${unit} ${f}`)
      }
    }
  }
  return pids
}

test('a stale "demo" controller is not reused: one line saying how to remove it, exit 1, nothing started', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-start-'))
  try {
    const dir = join(root, 'controllers', 'demo')
    mkdirSync(dir, { recursive: true })
    // pid 1 is never the controller: its command line does not name the directory.
    writeFileSync(join(root, 'controllers.yaml'), stringify({
      'current-controller': 'demo',
      controllers: { demo: { dir, controllers: [{ 'peer-id': '12D3KooWGrGUDjUe12QJW2gsaLCCj26GKFnnvXbncpHnNpdww38y', addresses: [], pid: 1, 'data-dir': join(dir, 'c0') }], provider: 'local', version: '0.1.0' } }
    }))
    const run = await runStart(root)
    assert.is(run.code, 1, run.stdout + run.stderr)
    const lines = run.stderr.trim().split('\n')
    assert.is(lines.length, 1, run.stderr)
    assert.match(lines[0]!, /^cantrip demo: expected controller "demo" in .* to answer, got: none of its controller processes runs \(pid 1\); remove it with "npm run cantrip -- destroy-controller demo --no-prompt"/)
    assert.not.match(run.stdout, '$ cantrip')
  } finally {
    removeHome(root)
  }
})

test('npm start deploys the example charms through the CLI and leaves them running; destroy-controller leaves nothing', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-start-'))
  const home = join(root, 'home', 'someone', '.local', 'share', 'cantrip')
  mkdirSync(home, { recursive: true })
  const dir = join(home, 'controllers', 'demo')
  try {
    const run = await runStart(home)
    assert.is(run.code, 0, `npm start failed:\n${run.stdout}\n${run.stderr}`)
    assert.match(run.stdout, '$ cantrip bootstrap demo')
    assert.match(run.stdout, 'Every unit is active and idle, and sees its relations')

    // The printed `cantrip status`: every unit row (principals and subordinates) active and idle.
    const status = run.stdout.split('$ cantrip status -c demo\n')[1]?.split('\n\n') ?? []
    const unitRows = (status.find(block => block.startsWith('Unit ')) ?? '').split('\n').slice(1)
    const names = unitRows.map(row => row.trim().split(/\s+/)[0]!.replace('*', '')).sort()
    assert.equal(names, ['cluster/0', 'cluster/1', 'cluster/2', 'kv/0', 'kv/1', 'logship/0', 'logship/1', 'web/0'])
    for (const row of unitRows) assert.match(row, /\sactive\s+idle\s/, row)
    assert.match(run.stdout, /Integration provider\s+Requirer/, 'status --relations printed')
    assert.match(run.stdout, /GET \/kv\/greeting\s+-> 200 "hello from cantrip/)
    assert.match(run.stdout, /PUT \/kv\/greeting \(no token\)\s+-> 403/)
    for (const step of ['npm run cantrip -- status --watch', 'npm run cantrip -- debug-log', 'npm run cantrip -- inspect', 'npm run cantrip -- destroy-controller demo --no-prompt']) {
      assert.ok(run.stdout.includes(step), `next steps name ${step}`)
    }

    const pids = recordedPids(home, dir)
    assert.ok([...pids.values()].filter(what => what.endsWith(' agent')).length === 3, 'three machine agents')
    for (const [pid, what] of pids) assert.ok(processAlive(pid), `${what} (pid ${pid}) is left running by npm start`)

    const destroyed = cantrip(home, ['destroy-controller', 'demo', '--no-prompt'])
    assert.is(destroyed.status, 0, destroyed.stderr)
    const left = [...pids].filter(([pid]) => processAlive(pid)).map(([pid, what]) => `${what} (pid ${pid})`)
    assert.equal(left, [], 'no process left')
    assert.not.ok(existsSync(dir), 'the controller directory is gone')
    assert.equal(Object.keys((parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as { controllers: object }).controllers), [])
  } finally {
    // Left only by a failure: its agents' and units' logs are kept with the home.
    destroyLeftoverController(home, join(dir, 'machines'), 'demo')
    removeHome(root)
  }
})

test.run()
