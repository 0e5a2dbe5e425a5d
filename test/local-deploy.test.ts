/**
 * `npm start` end to end: runs examples/local-deploy.ts as its own process and checks
 * what it prints — every unit active in the status table, the request through web to kv
 * answered — that it exits 0, and that nothing it started outlives it: no listener on
 * the ports it showed, no process naming its data directory, the directory removed.
 */
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'

const runMsMax = 150_000

interface Run { code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, timedOut: boolean }

async function runDeploy (args: string[] = []): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/local-deploy.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  let timedOut = false
  // Past the bound: SIGTERM lets it tear down; if it is still there 30 s later, SIGKILL.
  const term = setTimeout(() => { timedOut = true; child.kill('SIGTERM') }, runMsMax)
  const kill = setTimeout(() => { child.kill('SIGKILL') }, runMsMax + 30_000)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>(resolve => { child.once('exit', (c, s) => { resolve([c, s]) }) })
  clearTimeout(term)
  clearTimeout(kill)
  // Let the pipes drain.
  await new Promise(resolve => setTimeout(resolve, 50))
  return { code, signal, stdout, stderr, timedOut }
}

/** Pids whose command line names `dir` (the workloads name their config files under it). */
function processesNaming (dir: string): string[] {
  const found: string[] = []
  for (const pid of readdirSync('/proc').filter(name => /^\d+$/.test(name))) {
    let cmdline = ''
    try { cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') } catch { continue }
    if (cmdline.includes(dir)) found.push(`${pid}: ${cmdline.trim()}`)
  }
  return found
}

/** Last resort after a failed run: kill what the charms recorded and remove the directory. */
function cleanUp (dir: string | undefined): void {
  if (dir === undefined || !existsSync(dir)) return
  const agents = join(dir, 'agents')
  if (existsSync(agents)) {
    for (const unit of readdirSync(agents)) {
      const state = join(agents, unit, 'state')
      if (!existsSync(state)) continue
      for (const file of readdirSync(state).filter(name => name.endsWith('.pid'))) {
        const pid = Number(readFileSync(join(state, file), 'utf8').trim())
        if (Number.isSafeInteger(pid) && pid > 1) { try { process.kill(pid, 'SIGKILL') } catch { /* gone */ } }
      }
    }
  }
  for (const line of processesNaming(dir)) { try { process.kill(Number(line.split(':')[0]), 'SIGKILL') } catch { /* gone */ } }
  rmSync(dir, { recursive: true, force: true })
}

async function listening (port: number): Promise<boolean> {
  return await new Promise(resolve => {
    const socket = connect({ port, host: '127.0.0.1' })
    socket.setTimeout(2_000)
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('timeout', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { resolve(false) })
  })
}

test('npm start deploys the example charms for real, shows them active, serves through web and tears down', async () => {
  const started = performance.now()
  const run = await runDeploy()
  const out = run.stdout
  const dir = /^data dir +(\S+)/m.exec(out)?.[1]
  const context = `exit ${run.code ?? run.signal}${run.timedOut ? ' (timed out)' : ''}\n--- stdout\n${out}\n--- stderr\n${run.stderr}`
  try {
    assert.is(run.code, 0, context)
    assert.ok(dir !== undefined, 'it prints its data dir')

    // The status table: every unit active and idle (kv/1 only when 18000-18001 were free).
    const onlyOneKv = /^note: port .* deploying one kv unit/m.test(out)
    const expected = ['cluster/0', 'cluster/1', 'cluster/2', 'kv/0', ...(onlyOneKv ? [] : ['kv/1']), 'web/0', 'logship/0', ...(onlyOneKv ? [] : ['logship/1'])]
    assert.match(out, /^Model +Controller +Cloud\/Region +Version +Timestamp$/m)
    assert.match(out, /^App +Version +Status +Scale +Charm +Rev +Exposed +Message$/m)
    assert.match(out, /^Unit +Workload +Agent +Machine +Public address +Ports +Message$/m)
    assert.match(out, /^Machine +State +Address +Inst id +Message$/m)
    assert.match(out, /^0 +started +127\.0\.0\.1 +local-0$/m)
    for (const unit of expected) {
      const row = new RegExp(`^ *${unit.replace('/', '\\/')}\\*? +active +idle +0 +127\\.0\\.0\\.1 `, 'm')
      assert.match(out, row, `${unit} active in the status table\n${context}`)
    }
    assert.match(out, /^web\/0\*? +active .* \d+\/tcp +\d+ backends$/m)
    assert.match(out, /^kv\/0\*? +active .* \d+\/tcp +serving on \d+$/m)
    for (const app of ['cluster', 'kv', 'logship', 'web']) {
      assert.match(out, new RegExp(`^${app} .* active `, 'm'), `application ${app} active`)
      assert.match(out, new RegExp(`^ *${app}\\/\\d+\\* `, 'm'), `${app} has a leader marked *`)
    }

    // Through web to kv, with the leader's token; and refused without it.
    assert.match(out, /^ {2}GET \/backends +-> 200 \{"backends":\["127\.0\.0\.1:\d+"/m)
    assert.match(out, /^ {2}PUT \/kv\/greeting \(X-Token\) +-> 204 from kv at 127\.0\.0\.1:\d+$/m)
    assert.match(out, /^ {2}GET \/kv\/greeting +-> 200 "hello from cantrip [^"]+" from kv at 127\.0\.0\.1:\d+$/m)
    assert.match(out, /^ {2}PUT \/kv\/greeting \(no token\) +-> 403/m)

    // Torn down: stop hooks ended the workloads; nothing is left listening or running.
    assert.match(out, /^every unit ran its stop and remove hooks and left the model/m)
    assert.match(out, /^workloads ended: .*kv-server of kv\/0.*web-proxy of web\/0/m)
    assert.match(out, /^done in \d+\.\d s$/m)
    const ports = new Set([...out.matchAll(/\b(\d+)\/tcp\b/g)].map(m => Number(m[1])))
    const webPort = /^Through web\/0 \(http:\/\/127\.0\.0\.1:(\d+)\)/m.exec(out)?.[1]
    if (webPort !== undefined) ports.add(Number(webPort))
    assert.ok(ports.size >= (onlyOneKv ? 2 : 3), `ports shown: ${[...ports].join(', ')}`)
    for (const port of ports) assert.not.ok(await listening(port), `nothing listens on ${port} after the run`)
    assert.equal(processesNaming(dir), [], 'no process names the data dir')
    assert.not.ok(existsSync(dir), 'the temporary data dir is removed')
    assert.is(run.stderr.replace(/^npm warn.*\n/gm, ''), '', 'nothing on stderr')
    process.stdout.write(`  local-deploy ran in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
  } finally {
    cleanUp(dir)
  }
})

test.run()
