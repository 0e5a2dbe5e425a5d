/**
 * `cantrip inspect` in a real browser (Debian's chromium, installed by
 * scripts/ensure-chromium.sh, driven headless by playwright-core) against a running
 * deployment whose agents stream their actors (`cantripd --inspect 0`): a controller that
 * is also machine 0 and a machine agent for machine 1, kv/0 and kv/1 deployed on them.
 * The page must show every agent and unit, a unit's change live after its application's
 * config changes (a new config-changed hook in its timeline, the new config hash in its
 * context), the earlier state after stepping back in time, and the live one again; a
 * screenshot is saved to a temp dir (its path printed).
 */
import '../runtime/polyfill.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Browser } from 'playwright-core'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { SummaryReply } from '../actors/controller/controller-api.ts'
import { CantripdCluster, freePortRun, waitFor, type Agent } from './support/cantripd-cluster.ts'
import { agentsShown, ensureChromium, hookRows, launchChromium, startViewer, treeRows, untilPage, type ViewerProcess } from './support/inspect-browser.ts'

/** The URL an agent printed on its `inspect` line. */
async function inspectUrl (agent: Agent): Promise<string> {
  await waitFor('the inspect line', () => /"event":"inspect"/.test(agent.output), () => agent.output.slice(-2000))
  return (JSON.parse(agent.output.split('\n').find(l => l.includes('"event":"inspect"'))!) as { url: string }).url
}

test('cantrip inspect in chromium: every agent and unit, a live config change, time travel, a screenshot', async () => {
  ensureChromium()
  const cluster = new CantripdCluster()
  cluster.extraArgs = ['--inspect', '0']
  const home = mkdtempSync(join(tmpdir(), 'inspect-browser-home-'))
  const shots = mkdtempSync(join(tmpdir(), 'inspect-browser-'))
  let viewer: ViewerProcess | undefined
  let browser: Browser | undefined
  try {
    await cluster.prepare(1, 1, { both: 1 })
    const controller = cluster.controllers[0]!
    const machine1 = cluster.machines[0]!
    cluster.start(controller)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    const charm = await cluster.addCharm(controller, resolve('examples/charms/kv'), 'local:kv-0')
    assert.ok(charm.added?.ok, JSON.stringify(charm.added))
    for (let i = 0; i < 2; i++) assert.ok((await cluster.submit({ type: 'add-machine' }))?.ok)
    assert.ok((await cluster.submit({ type: 'deploy', application: 'kv', charm: 'local:kv-0', config: { 'port-base': await freePortRun(2) }, constraints: {}, numUnits: 2, placement: ['0', '1'] }))?.ok)
    cluster.start(machine1)
    const urls = [await inspectUrl(controller), await inspectUrl(machine1)]

    let last: SummaryReply | undefined
    const describe = (): string => JSON.stringify(last) + '\n' + [controller, machine1].map(a => a.output.slice(-1500)).join('\n---\n')
    await waitFor('both units active and idle', async () => {
      last = await cluster.summary(controller)
      return last?.ok === true && ['kv/0', 'kv/1'].every(u => last!.ok && last!.units[u]?.workload === 'active' && last!.units[u]?.agent === 'idle')
    }, describe)

    // The CLI as a user runs it; no controller in this CANTRIP_HOME, so only the --agent endpoints.
    viewer = await startViewer(urls.flatMap(url => ['--agent', url]), { CANTRIP_HOME: home })
    browser = await launchChromium()
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } })
    const pageErrors: string[] = []
    page.on('pageerror', error => { pageErrors.push(error.message) })
    // No CDN: the page loads everything from the viewer itself.
    const requests: string[] = []
    page.on('request', request => { requests.push(request.url()) })
    await page.goto(viewer.url)

    // Every agent, every unit (each under its own agent), and the controller's Raft role.
    const rows = await untilPage('both agents, both units, the raft role', async () => await treeRows(page),
      r => r.some(n => n.kind === 'unit' && n.name === 'unit-kv-0') && r.some(n => n.kind === 'unit' && n.name === 'unit-kv-1') && r.some(n => n.kind === 'raft'))
    const agents = await agentsShown(page)
    assert.equal(agents.sort(), ['machine-0', 'machine-1'], `agents: ${agents.join(', ')}`)
    const kv0 = rows.find(n => n.name === 'unit-kv-0')!
    const kv1 = rows.find(n => n.name === 'unit-kv-1')!
    assert.is(kv0.agent, 'machine-0')
    assert.is(kv1.agent, 'machine-1')
    assert.ok(rows.some(n => n.kind === 'relation'), `a relation actor: ${JSON.stringify(rows.map(n => `${n.kind}:${n.name}`))}`)

    // Select kv/1; its statechart is drawn with the uniter's idle state active.
    await page.click(`#tree [data-key="${kv1.key}"] > .row`)
    await untilPage('kv/1\'s statechart with idle active', async () => await page.$$eval('#chart [data-active="true"]', gs => gs.map(g => (g as HTMLElement).dataset.stateId ?? '')),
      active => active.includes('unit.running.uniter.idle'))
    const hooksBefore = await untilPage('kv/1\'s hooks since install', async () => await hookRows(page), h => h.some(r => r.hook === 'start' && r.result === 'ok'))
    const configChangedBefore = hooksBefore.filter(r => r.hook === 'config-changed').length
    const contextBefore = await page.textContent('#context') ?? ''
    const lengthBefore = await page.evaluate(() => (window as unknown as { cantripInspect: { log: { length: number } } }).cantripInspect.log.length)

    // `cantrip config kv log-level=debug` (the command it sends): kv/1 runs config-changed, live.
    assert.ok((await cluster.submit({ type: 'set-config', application: 'kv', config: { 'log-level': 'debug' } }))?.ok)
    await untilPage('a new config-changed on kv/1, ok', async () => await hookRows(page),
      h => h.filter(r => r.hook === 'config-changed' && r.result === 'ok').length > configChangedBefore)
    const contextAfter = await untilPage('kv/1\'s context with the new config hash', async () => await page.textContent('#context') ?? '', text => text !== contextBefore)
    const hash = (text: string): string | undefined => /"configHash": "([^"]*)"/.exec(text)?.[1]
    assert.ok(hash(contextAfter) !== undefined && hash(contextAfter) !== hash(contextBefore), `config hash ${hash(contextBefore)} → ${hash(contextAfter)}`)
    const shot = join(shots, 'inspect-live.png')
    await page.screenshot({ path: shot })
    console.log(`inspect browser: screenshot ${shot}${process.env['CANTRIP_KEEP_SCREENSHOTS'] === undefined ? ' (removed at the end; CANTRIP_KEEP_SCREENSHOTS=1 keeps it)' : ''}`)

    // Time travel: the slider to the last message before the change, then one step back with the button.
    await page.$eval('#slider', (slider, k) => {
      const input = slider as HTMLInputElement
      input.value = String(k)
      input.dispatchEvent(new Event('input'))
    }, lengthBefore)
    await page.click('[data-testid="step-back"]')
    const position = await untilPage('paused one before the change', async () => await page.$eval('#position', p => ({ ...(p as HTMLElement).dataset })), p => p.live === 'false' && p.cursor === String(lengthBefore - 1))
    assert.is(position.cursor, String(lengthBefore - 1))
    const pastHooks = await hookRows(page)
    assert.is(pastHooks.filter(r => r.hook === 'config-changed').length, configChangedBefore, JSON.stringify(pastHooks))
    assert.is(hash(await page.textContent('#context') ?? ''), hash(contextBefore))
    await page.screenshot({ path: join(shots, 'inspect-past.png') })

    // Back to live: the change is there again.
    await page.click('[data-testid="live"]')
    await untilPage('live again with the new hash', async () => await page.textContent('#context') ?? '', text => hash(text) === hash(contextAfter))
    assert.equal(pageErrors, [])
    const viewerOrigin = new URL(viewer.url).host
    assert.equal(requests.filter(url => new URL(url).host !== viewerOrigin), [], 'every request goes to the viewer')
    assert.ok(requests.some(url => url.endsWith('/elk.js')) && requests.some(url => url.endsWith('/app.js')))
  } finally {
    await browser?.close()
    await viewer?.stop()
    await cluster.close()
    rmSync(home, { recursive: true, force: true })
    // The screenshots are kept (their paths printed) unless the run asked for a clean tree.
    if (process.env['CANTRIP_KEEP_SCREENSHOTS'] === undefined) rmSync(shots, { recursive: true, force: true })
  }
})

test.run()
