/**
 * `cantrip inspect` in a real browser (Debian's chromium, installed by
 * scripts/ensure-chromium.sh, driven headless by playwright-core) against a running local
 * deployment: `cantrip bootstrap --inspect`, kv deployed with two units (machines 0 and
 * 1), `cantrip inspect --no-open` finding every agent by discovery. The page must show
 * every agent and unit, a unit's change live after `cantrip config` (a new
 * config-changed in its hook timeline, the new config hash in its context), the earlier
 * state after stepping back in time, and the live one again; it loads nothing from
 * anywhere but the viewer. A screenshot is saved to a temp dir (its path printed; kept
 * with CANTRIP_KEEP_SCREENSHOTS=1).
 */
import '../runtime/polyfill.ts'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import type { ControllersFile } from '../agent/cli/cli-home.ts'
import { discoverInspectEndpoints } from '../agent/inspect/inspect-endpoints.ts'
import { freePortRun } from '../agent/free-port.ts'
import { cantrip, cantripOk, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { agentsShown, ensureChromium, hookRows, launchChromium, startViewer, treeRows, untilPage, type ViewerProcess } from './support/inspect-browser.ts'
import { processAlive } from './support/processes.ts'

/**
 * One chromium for the file, launched by the first test that needs it and closed after
 * the last: each test has a page of its own in a context of its own (browser.newPage),
 * closed at its end. A launch is a browser, its zygotes, GPU and network processes.
 */
let chromium: Promise<Browser> | undefined
async function newPage (): Promise<Page> {
  chromium ??= launchChromium()
  return await (await chromium).newPage({ viewport: { width: 1600, height: 1000 } })
}

test.after(async () => {
  await (await chromium?.catch(() => undefined))?.close()
})

test('cantrip inspect in chromium against bootstrap --inspect: every agent and unit, cantrip config live, time travel, a screenshot', async () => {
  ensureChromium()
  const home = mkdtempSync(join(tmpdir(), 'inspect-browser-home-'))
  const shots = mkdtempSync(join(tmpdir(), 'inspect-browser-'))
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  const pids: number[] = []
  let viewer: ViewerProcess | undefined
  let opened: Page | undefined
  try {
    cantripOk(home, 'bootstrap', '--inspect')
    const entry = (parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as ControllersFile).controllers['local']!
    pids.push(...entry.controllers.map(m => m.pid))
    cantripOk(home, 'deploy', resolve('examples/charms/kv'), '-n', '2', '--config', `port-base=${await freePortRun(2)}`)
    cantripOk(home, 'wait-for', 'application', 'kv', '--status', 'active', '--timeout', '4m')
    const endpoints = discoverInspectEndpoints(entry)
    const controllerAgent = `controller-${entry.controllers[0]!['peer-id'].slice(-8)}`
    assert.equal(endpoints.map(e => e.agent).sort(), [controllerAgent, 'machine-0', 'machine-1'].sort())

    viewer = await startViewer([], { CANTRIP_HOME: home })
    const page = opened = await newPage()
    const pageErrors: string[] = []
    page.on('pageerror', error => { pageErrors.push(error.message) })
    // No CDN: the page loads everything from the viewer itself.
    const requests: string[] = []
    page.on('request', request => { requests.push(request.url()) })
    await page.goto(viewer.url)

    // Every agent; each unit on its machine's agent with its relation; the controller's Raft role and provisioner.
    const rows = await untilPage('every agent\'s actors', async () => await treeRows(page), r =>
      ['unit-kv-0', 'unit-kv-1'].every(name => r.some(n => n.kind === 'unit' && n.name === name)) &&
      ['raft', 'provisioner', 'relation'].every(kind => r.some(n => n.kind === kind)))
    const agents = await untilPage('every agent in the tree', async () => await agentsShown(page), a => a.length === 3)
    assert.equal(agents.sort(), [controllerAgent, 'machine-0', 'machine-1'].sort())
    const kv0 = rows.find(n => n.name === 'unit-kv-0')!
    const kv1 = rows.find(n => n.name === 'unit-kv-1')!
    assert.equal([kv0.agent, kv1.agent].sort(), ['machine-0', 'machine-1'])
    assert.ok(rows.some(n => n.kind === 'raft' && n.agent === controllerAgent))

    // Select kv/1; its statechart is drawn with the uniter's idle state active.
    await page.click(`#tree [data-key="${kv1.key}"] > .row`)
    await untilPage('kv/1\'s statechart with idle active', async () => await page.$$eval('#chart [data-active="true"]', gs => gs.map(g => (g as HTMLElement).dataset.stateId ?? '')),
      active => active.includes('unit.running.uniter.idle'))
    // The agent was already running when the viewer connected: its hooks are those in the recent messages it replays.
    await untilPage('kv/1\'s hook timeline', async () => await page.textContent('#hooks') ?? '', text => text.includes('unit-kv-1'))
    const hooksBefore = await untilPage('kv/1 between hooks', async () => await hookRows(page), h => h.every(r => r.result !== 'running'))
    const configChangedBefore = hooksBefore.filter(r => r.hook === 'config-changed').length
    const contextBefore = await page.textContent('#context') ?? ''
    const lengthBefore = await page.evaluate(() => (window as unknown as { cantripInspect: { log: { length: number } } }).cantripInspect.log.length)

    // `cantrip config`: kv/1 runs config-changed, seen live.
    cantripOk(home, 'config', 'kv', 'log-level=debug')
    await untilPage('a new config-changed on kv/1, ok', async () => await hookRows(page),
      h => h.filter(r => r.hook === 'config-changed' && r.result === 'ok').length > configChangedBefore)
    const hash = (text: string): string | undefined => /"configHash": "([^"]*)"/.exec(text)?.[1]
    const contextAfter = await untilPage('kv/1\'s context with a new config hash', async () => await page.textContent('#context') ?? '', text => hash(text) !== hash(contextBefore))
    assert.ok(hash(contextAfter) !== undefined, contextAfter.slice(0, 500))
    const shot = join(shots, 'inspect-live.png')
    await page.screenshot({ path: shot })
    console.log(`inspect browser: screenshot ${shot}${process.env['CANTRIP_KEEP_SCREENSHOTS'] === undefined ? ' (removed at the end; CANTRIP_KEEP_SCREENSHOTS=1 keeps it)' : ''}`)

    // Time travel: the slider to the change's eve, then one step back with the button.
    await page.$eval('#slider', (slider, k) => {
      const input = slider as HTMLInputElement
      input.value = String(k)
      input.dispatchEvent(new Event('input'))
    }, lengthBefore)
    await page.click('[data-testid="step-back"]')
    await untilPage('paused one before the change', async () => await page.$eval('#position', p => ({ ...(p as HTMLElement).dataset })), p => p.live === 'false' && p.cursor === String(lengthBefore - 1))
    const pastHooks = await hookRows(page)
    assert.is(pastHooks.filter(r => r.hook === 'config-changed').length, configChangedBefore, JSON.stringify(pastHooks))
    assert.is(hash(await page.textContent('#context') ?? ''), hash(contextBefore))
    await page.screenshot({ path: join(shots, 'inspect-past.png') })

    // Back to live: the change is there again.
    await page.click('[data-testid="live"]')
    await untilPage('live again with the new hash', async () => await page.textContent('#context') ?? '', text => hash(text) === hash(contextAfter))
    assert.equal(pageErrors, [])
    const viewerHost = new URL(viewer.url).host
    assert.equal(requests.filter(url => new URL(url).host !== viewerHost), [], 'every request goes to the viewer')
    assert.ok(requests.some(url => url.endsWith('/elk.js')) && requests.some(url => url.endsWith('/app.js')))

    // The page's connections to the viewer end with it, as they did with the whole browser.
    await page.close()
    await viewer.stop()
    assert.ok(viewer.child.exitCode !== null || viewer.child.signalCode !== null, 'cantrip inspect ended on SIGTERM')
    const machinePids = readdirSync(machinesDir).map(d => Number(readFileSync(join(machinesDir, d, 'agent.pid'), 'utf8').split(/\s+/)[0]))
    cantripOk(home, 'destroy-controller', 'local', '--no-prompt')
    assert.ok(machinePids.every(pid => !processAlive(pid)), 'every machine agent stopped')
  } finally {
    await opened?.close()
    await viewer?.stop()
    destroyLeftoverController(home, machinesDir)
    for (const pid of pids) if (processAlive(pid)) process.kill(pid, 'SIGKILL')
    removeHome(home)
    if (process.env['CANTRIP_KEEP_SCREENSHOTS'] === undefined) rmSync(shots, { recursive: true, force: true })
  }
})

test('cantrip inspect --sim: a simulated run\'s units, their failing installs, stepping back to the first failure', async () => {
  ensureChromium()
  const dir = mkdtempSync(join(tmpdir(), 'inspect-browser-sim-'))
  let viewer: ViewerProcess | undefined
  let opened: Page | undefined
  try {
    const run = cantrip(dir, ['sim', 'examples/sim/install-fails-twice.yaml', '--report', dir, '--inspect-log', '--quiet'])
    assert.is(run.status, 0, run.stderr + run.stdout)
    viewer = await startViewer(['--sim', join(dir, 'install-fails-twice-1.json')], { CANTRIP_HOME: dir })
    const page = opened = await newPage()
    await page.goto(viewer.url)
    const rows = await untilPage('the three simulated units', async () => await treeRows(page), r => r.filter(n => n.kind === 'unit').length === 3)
    const flaky0 = rows.find(n => n.name === 'unit-flaky-0')!
    await page.click(`#tree [data-key="${flaky0.key}"] > .row`)
    const hooks = await untilPage('flaky/0\'s installs: error, error, ok', async () => await hookRows(page),
      h => JSON.stringify(h.filter(r => r.hook === 'install').map(r => r.result)) === '["error","error","ok"]')
    assert.is(hooks[0]!.hook, 'install')
    // Step back to just after the first install failed: one install in the timeline, an error, and the unit in hookError.
    const firstError = await page.evaluate(key => {
      const inspect = (window as unknown as { cantripInspect: { log: { messages: Array<{ type: string, agent: string, sessionId: string, snapshot?: { value?: unknown } }> } } }).cantripInspect
      return inspect.log.messages.findIndex(m => m.type === '@xstate.snapshot' && `${m.agent} ${m.sessionId}` === key && JSON.stringify(m.snapshot?.value).includes('hookError'))
    }, flaky0.key)
    assert.ok(firstError > 0)
    await page.$eval('#slider', (slider, k) => {
      const input = slider as HTMLInputElement
      input.value = String(k)
      input.dispatchEvent(new Event('input'))
    }, firstError)
    await untilPage('one failed install at the first failure', async () => await hookRows(page), h => JSON.stringify(h.filter(r => r.hook === 'install').map(r => r.result)) === '["error"]')
    const state = await page.$eval(`#tree [data-key="${flaky0.key}"]`, n => (n as HTMLElement).dataset.state ?? '')
    assert.match(state, /hookError/)
    await page.screenshot({ path: join(dir, 'inspect-sim.png') })
  } finally {
    await opened?.close()
    await viewer?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
