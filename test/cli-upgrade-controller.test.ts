/**
 * `upgrade-controller` end to end, as a user runs it (issue 26): three controllers
 * bootstrapped by this tree, a model with a unit, then the client of a second release
 * (the same tree stamped one patch higher, test/support/stamped-tree.ts) runs
 * `upgrade-controller`. Each member is restarted into the new bundle through the agent
 * launcher, one at a time: while it runs, the test commits a write after another and
 * looks at the group, and every write commits and never more than one member is down.
 * Afterwards show-controller and version --all show every member on the new version with
 * commit lag 0, the machine agent keeps its own version (the model is upgraded by
 * upgrade-model, as in Juju), the unit stays active, and a second run has nothing to do.
 *
 * On the same cluster: the refusals (a version the store lacks, a downgrade), a version
 * whose agent never comes up (that member is switched back and restarted, the upgrade
 * stops with one line and every member keeps its version), and
 * `add-model --agent-version` accepting a version the controller store holds below its
 * own and refusing one above it or one it lacks, each in one line.
 *
 * Juju sources followed: cmd/juju/commands/upgradecontroller.go (upgrade-controller
 * upgrades the controller model's agents; --agent-version, --dry-run, "no upgrades
 * available"), cmd/juju/commands/upgrademodel.go ("started upgrade to …", "cannot change
 * version from X to lower version Y"), apiserver/facades/client/modelmanager/modelmanager.go
 * (a new model's agent-version may not be above the server's and needs agent binaries).
 */
import '../runtime/polyfill.ts'
import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantripVersion } from '../agent/version.ts'
import { Connection } from '../agent/cli/connection.ts'
import { readControllers, type ControllerEntry } from '../agent/cli/cli-home.ts'
import { groupStatus } from '../agent/cli/group-status.ts'
import { identifyProcess } from '../agent/detached-processes.ts'
import { cantrip, cantripOk as ok, destroyLeftoverController, type CliRun, removeHome } from './support/cli-process.ts'
import { distProgram } from './support/dist.ts'
import { StatusReader } from './support/status-reader.ts'
import { stampedTree } from './support/stamped-tree.ts'

const lower = cantripVersion
const higher = lower.replace(/(\d+)$/, patch => String(Number(patch) + 1))
/** Looks at the leader's progress, half a second apart, before the members must be caught up. */
const lagLooksMax = 120
/** A release whose agent exits as soon as it starts. */
const brokenVersion = lower.replace(/(\d+)$/, patch => String(Number(patch) + 2))
/** A version below every release here, which no store holds. */
const ancient = '0.0.1'

/** A charm with one hook: its unit goes active. */
function writeTinyCharm (dir: string): void {
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), 'name: tiny\nsummary: one unit\ndescription: goes active\n')
  writeFileSync(join(dir, 'hooks', 'start'), '#!/bin/bash\nstatus-set active ready\n')
  chmodSync(join(dir, 'hooks', 'start'), 0o755)
}

/** The CLI of `tree` as a child the test does not block on (the writes and looks go on meanwhile). */
async function cantripAsync (home: string, args: readonly string[], tree: string): Promise<CliRun> {
  const child = spawn(process.execPath, [distProgram('cantrip', tree), ...args], { env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1' }, cwd: tree, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const status = await new Promise<number>(resolve => child.once('close', code => { resolve(code ?? -1) }))
  return { status, stdout, stderr }
}

/** Controller "local" as the CLI home `home` records it. */
function localEntry (home: string): ControllerEntry {
  const saved = process.env['CANTRIP_HOME']
  process.env['CANTRIP_HOME'] = home
  try {
    return readControllers().controllers['local']!
  } finally {
    if (saved === undefined) delete process.env['CANTRIP_HOME']
    else process.env['CANTRIP_HOME'] = saved
  }
}

/**
 * How many of the members with these data directories have no live process named by its
 * directory as an argument: findProcessesByArgument's test for each, from one pass over
 * /proc for all of them. A pass reads every process's command line (~2.3 CPU-ms with 112
 * processes); a pass per member after every write cost ~7 CPU-ms a look.
 */
function membersDown (dataDirs: readonly string[]): number {
  const up = new Set<string>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let cmdline: string
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
    } catch {
      continue
    }
    for (const dir of dataDirs) {
      if (!up.has(dir) && cmdline.includes(`\0${dir}\0`) && identifyProcess(Number(entry)) !== undefined) up.add(dir)
    }
  }
  return dataDirs.length - up.size
}

interface ShownMember { version?: string, role: string, 'commit-lag': number | null }

test('upgrade-controller restarts each member into the new version in turn; writes commit throughout', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-upgrade-controller-'))
  const tree = stampedTree(higher)
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  let reader: StatusReader | undefined
  let writer: Connection | undefined
  try {
    ok(home, 'bootstrap', '--ha', '3')
    writeTinyCharm(join(home, 'tiny'))
    ok(home, 'deploy', join(home, 'tiny'))
    ok(home, 'wait-for', 'application', 'tiny', '--timeout', '4m')
    reader = await StatusReader.open(home)
    const before = await reader.status()
    assert.is(before.applications['tiny']?.units?.['tiny/0']?.['workload-status'].current, 'active')

    // Refused before anything changes, one line each.
    assert.equal(cantrip(home, ['upgrade-controller', '--agent-version', '9.9.9'], {}, tree.root), {
      status: 1, stdout: '',
      stderr: `ERROR controller ${lower}: cannot upgrade controller "local" to agent 9.9.9: no agent binaries for 9.9.9 linux/x64 in the controller store (have ${lower}); copy one there with "cantrip sync-agent-binary --agent-version 9.9.9 --source <installation>"\n`
    })
    assert.equal(cantrip(home, ['upgrade-controller', '--agent-version', ancient]), { status: 1, stdout: '', stderr: `ERROR controller ${lower}: cannot upgrade controller "local" to agent ${ancient}: cannot change version from ${lower} to lower version ${ancient}\n` })
    assert.equal(cantrip(home, ['upgrade-controller', '--agent-version', 'x.y']), { status: 1, stdout: '', stderr: 'ERROR cantrip upgrade-controller: expected --agent-version as a version like "0.2.0", got "x.y"\n' })
    assert.equal(cantrip(home, ['upgrade-controller']), { status: 0, stdout: 'no upgrades available\n', stderr: '' })
    const dry = cantrip(home, ['upgrade-controller', '--dry-run'], {}, tree.root)
    assert.match(dry.stdout, new RegExp(`^upgrade to ${higher.replaceAll('.', '\\.')} available \\(controller "local" runs ${lower.replaceAll('.', '\\.')}; would restart c\\d, c\\d, c\\d in turn\\)\n$`))

    // The writes and the looks at the group while the members restart.
    const entry = localEntry(home)
    writer = await Connection.open(entry)
    writer.useModel('default')
    // Down: no process runs from the member's data directory (by its argument, not by how fast it answers on a loaded machine).
    const downNow = (): number => membersDown(entry.controllers.map(m => m['data-dir']))
    let upgrading = true
    let committed = 0
    let mostDown = 0
    const failures: string[] = []
    const writes = (async () => {
      for (let i = 0; upgrading; i++) {
        try {
          const result = await writer!.submit({ type: 'set-model-config', config: { 'logging-config': `<root>=INFO;unit=${i % 2 === 0 ? 'INFO' : 'DEBUG'}` } })
          if (result.ok) committed++
          else failures.push(result.error)
        } catch (error) {
          failures.push(error instanceof Error ? error.message : String(error))
        }
        mostDown = Math.max(mostDown, downNow())
        await new Promise(resolve => setTimeout(resolve, 100))
      }
    })()
    const run = await cantripAsync(home, ['upgrade-controller'], tree.root)
    upgrading = false
    await writes
    assert.is(run.status, 0, run.stderr)
    assert.match(run.stdout, new RegExp(`^started upgrade to ${higher.replaceAll('.', '\\.')}\nupgraded c\\d, c\\d, c\\d to ${higher.replaceAll('.', '\\.')}\n$`))
    assert.equal(failures, [], 'every write committed during the upgrade')
    assert.ok(committed >= 3, `writes went on during the upgrade (${committed} committed)`)
    assert.ok(mostDown <= 1, `at most one member down at a time (saw ${mostDown})`)

    // Every member on the new version, caught up (the lag is read as the leader has it: a
    // commit a moment old may not be acknowledged yet, so it is waited for), its new pid recorded.
    for (let look = 0; ; look++) {
      const leader = (await groupStatus(writer, localEntry(home))).leader
      if (leader !== undefined && Object.values(leader.progress).every(p => p.lag === 0)) break
      assert.ok(look < lagLooksMax, `every member at commit lag 0 within ${lagLooksMax} looks; last ${JSON.stringify(leader?.progress)}`)
      await new Promise(resolve => setTimeout(resolve, 500))
    }
    const shown = JSON.parse(ok(home, 'show-controller', '--format', 'json')) as { local: { details: { 'controller-version': string }, members: Record<string, ShownMember & { pid: number }> } }
    assert.is(shown.local.details['controller-version'], higher)
    for (const [name, member] of Object.entries(shown.local.members)) {
      assert.is(member.version, higher, `${name} runs ${higher}`)
      assert.ok(member['commit-lag'] !== null, `${name} is a voter the leader tracks`)
    }
    assert.equal(Object.values(shown.local.members).map(m => m.pid).sort(), localEntry(home).controllers.map(m => m.pid).sort())
    const versions = JSON.parse(cantrip(home, ['version', '--all', '--format', 'json'], {}, tree.root).stdout) as { client: string, controllers: Array<{ version: string }>, agents: Array<{ entity: string, version: string }> }
    assert.equal(versions.controllers.map(c => c.version), [higher, higher, higher])
    assert.equal(versions.agents.map(a => [a.entity, a.version]), [['machine-0', lower]], 'the model keeps its agent-version until upgrade-model')
    const after = await reader.until('tiny/0 to stay active', d => d.applications['tiny']?.units?.['tiny/0']?.['workload-status'].current === 'active')
    assert.is(after.model.version, lower)
    assert.equal(cantrip(home, ['upgrade-controller'], {}, tree.root), { status: 0, stdout: 'no upgrades available\n', stderr: '' })

    // A version whose agent does not come up (its cantripd exits at once): the first member
    // restarted into it is switched back and started again, the upgrade stops with one line,
    // and every member runs the version it had.
    const broken = stampedTree(brokenVersion)
    try {
      writeFileSync(join(broken.root, 'dist', 'cantripd.mjs'), 'process.exit(3)\n')
      ok(home, '-m', 'default', 'sync-agent-binary', '--agent-version', brokenVersion, '--source', broken.root)
    } finally {
      broken.remove()
    }
    const failed = cantrip(home, ['upgrade-controller', '--agent-version', brokenVersion], {}, tree.root)
    assert.is(failed.status, 1)
    assert.is(failed.stdout, `started upgrade to ${brokenVersion}\n`)
    assert.match(failed.stderr, new RegExp(`^ERROR cantrip upgrade-controller: controller c\\d did not come back on agent ${brokenVersion.replaceAll('.', '\\.')} within 120 s \\(its process \\d+ exited\\); it is back on ${higher.replaceAll('.', '\\.')}, members not yet upgraded keep their version; see \\S+/c\\d/cantripd\\.log\n$`, 'm'))
    const rolledBack = JSON.parse(ok(home, 'show-controller', '--format', 'json')) as { local: { members: Record<string, ShownMember> } }
    assert.equal(Object.values(rolledBack.local.members).map(m => m.version), [higher, higher, higher])

    // add-model --agent-version: below the controllers' and held in their store, accepted; above, or not held, refused.
    assert.equal(cantrip(home, ['add-model', 'older', '--agent-version', lower], {}, tree.root).status, 0)
    assert.is((JSON.parse(ok(home, '-m', 'older', 'status', '--format', 'json')) as { model: { version: string } }).model.version, lower)
    assert.equal(cantrip(home, ['add-model', 'newer', '--agent-version', '9.9.9'], {}, tree.root), { status: 1, stdout: '', stderr: `ERROR controller ${higher}: cannot add model "newer" at agent 9.9.9: agent-version cannot be greater than the server's ${higher}\n` })
    assert.equal(cantrip(home, ['add-model', 'ancient', '--agent-version', ancient], {}, tree.root), { status: 1, stdout: '', stderr: `ERROR controller ${higher}: cannot add model "ancient" at agent ${ancient}: no agent binaries for ${ancient} linux/x64 in the controller store (have ${lower}, ${higher}, ${brokenVersion})\n` })
  } finally {
    await writer?.close().catch(() => {})
    await reader?.close()
    destroyLeftoverController(home, machinesDir)
    tree.remove()
    removeHome(home)
  }
})

test.run()
