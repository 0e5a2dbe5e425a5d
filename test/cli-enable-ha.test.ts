/**
 * `cantrip enable-ha` in real processes: a one-controller group with a machine grows to
 * three voters (the new members started with `cantripd --join` by a second release: this
 * tree copied and stamped with another version); show-controller lists
 * three voters, one leader and every commit lag 0; `version --all` and `show-controller`
 * warn about the skewed controllers; `members` shows the gossip membership with the
 * machine's agent; after kill -9 of the original leader the group still commits
 * (add-machine) and reads (status), and a survivor reveals a user secret c0 sealed before
 * the others joined (the secrets key was handed to them). Bad -n values are refused before anything starts.
 * destroy-controller then leaves no process behind.
 */
import '../runtime/polyfill.ts'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantrip, removeHome } from './support/cli-process.ts'
import { parse } from 'yaml'
import { GroupReader } from './support/group-reader.ts'
import { processAlive } from './support/processes.ts'
import { stampedTree } from './support/stamped-tree.ts'

const skewed = '9.9.9-test'
const haToken = 'sealed-by-c0-7d1e'
const packageVersion = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version

interface Shown { raft: { leader: string, voters: string[] }, members: Record<string, { 'peer-id': string, pid: number, role: string, 'commit-lag': number | null, version: string | null }> }

function show (home: string): Shown {
  const run = cantrip(home, ['show-controller', '--format', 'json'])
  assert.is(run.status, 0, run.stderr)
  return (JSON.parse(run.stdout) as Record<string, Shown>)['local']!
}

/**
 * Polls `check` until it holds, first after 250 ms and then less often, up to every 2 s:
 * a check that starts a CLI process costs ~0.5 CPU-seconds, so a long wait must not poll
 * fast (the long waits read the group in this process: GroupReader). Fails after `timeoutMs`.
 */
async function eventually<T> (what: string, timeoutMs: number, check: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const until = Date.now() + timeoutMs
  let pauseMs = 250
  let value = await check()
  while (value === undefined) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, pauseMs))
    pauseMs = Math.min(2_000, pauseMs * 1.5)
    value = await check()
  }
  return value
}

/** `check`, or undefined while the group does not answer (a wait's look, not a verdict). */
async function answered<T> (check: () => Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await check()
  } catch {
    return undefined
  }
}

function recordedPids (home: string): number[] {
  const file = join(home, 'controllers.yaml')
  if (!existsSync(file)) return []
  const value = parse(readFileSync(file, 'utf8')) as { controllers: Record<string, { controllers: Array<{ pid: number }> }> }
  return Object.values(value.controllers).flatMap(c => c.controllers.map(m => m.pid))
}

function machineAgentPids (home: string): number[] {
  const machines = join(home, 'controllers', 'local', 'machines')
  const pids: number[] = []
  for (const id of ['0', '1']) {
    const file = join(machines, `machine-${id}`, 'agent.pid')
    if (existsSync(file)) pids.push(Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0]))
  }
  return pids.filter(pid => Number.isSafeInteger(pid) && pid > 1)
}

/** A charm whose start hook sets the unit active, written under `home`; its directory. */
function writeActiveCharm (home: string, name: string): string {
  const dir = join(home, name)
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), `name: ${name}\nsummary: s\ndescription: d\n`)
  writeFileSync(join(dir, 'hooks', 'start'), '#!/bin/bash\nstatus-set active up\n', { mode: 0o755 })
  return dir
}

/**
 * A charm whose start hook goes active only once `resource-get` hands it the file the
 * operator supplied: a unit on a machine added after the uploading controller died shows
 * whether a survivor holds the resource (agent/controller/model-backfills.ts).
 */
function writeResourceCharm (home: string, name: string, content: string): { dir: string, resource: string } {
  const dir = join(home, name)
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), `name: ${name}\nsummary: s\ndescription: d\nresources:\n  data:\n    type: file\n    filename: data.txt\n`)
  writeFileSync(join(dir, 'hooks', 'start'), `#!/bin/bash\nset -e\npath=$(resource-get data)\n[ "$(cat "$path")" = "${content}" ]\nstatus-set active up\n`, { mode: 0o755 })
  const resource = join(home, `${name}-data.txt`)
  writeFileSync(resource, content)
  return { dir, resource }
}

test('enable-ha -n 3 grows a running group; it survives kill -9 of the old leader; skew is warned about', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-ha-'))
  const skewedTree = stampedTree(skewed)
  const reader = new GroupReader(home)
  let pids: number[] = []
  try {
    assert.match(cantrip(home, ['enable-ha']).stderr, /^ERROR cantrip: expected a controller/m, 'no controller: refused')
    const boot = cantrip(home, ['bootstrap'])
    assert.is(boot.status, 0, boot.stderr)
    pids = recordedPids(home)
    for (const n of ['2', '9']) {
      const refused = cantrip(home, ['enable-ha', '-n', n])
      assert.is(refused.status, 1)
      assert.equal(refused.stderr.trim().split('\n'), [`ERROR cantrip enable-ha: expected -n as an odd number from 1 to 7, got "${n}"`])
    }
    // --to takes ssh placements only, and only for a group other hosts can reach (this one is on loopback).
    const placements: Array<[string, string]> = [
      ['h2.example', 'expected --to as a comma-separated list of ssh:user@host[:port] or machine ids, got "h2.example"'],
      ['ssh:root@10.0.0.9,', 'expected --to as a comma-separated list of ssh:user@host[:port] or machine ids, got "ssh:root@10.0.0.9,"'],
      ['ssh:root@10.0.0.9', 'expected a controller other hosts can reach for --to (bootstrap --listen ADDRESS), got "controllers advertising 127.0.0.1"']
    ]
    for (const [to, line] of placements) {
      const refused = cantrip(home, ['enable-ha', '-n', '3', '--to', to])
      assert.equal([refused.status, refused.stderr.trim().split('\n')], [1, [`ERROR cantrip enable-ha: ${line}`]], to)
    }
    // As Juju's: the size the group has already is nothing to do (state/enableha.go: ErrNoOperations).
    const same = cantrip(home, ['enable-ha', '-n', '1'])
    assert.equal([same.status, same.stdout], [0, 'maintaining controllers: c0\n'])
    assert.is(recordedPids(home).length, 1, 'nothing was added by a refused enable-ha')
    const machine = cantrip(home, ['add-machine'])
    assert.is(machine.status, 0, machine.stderr)
    assert.match(machine.stdout, /created machine 0/)
    // Sealed by c0 with the only key there is yet; c1 and c2 must be handed it when they join.
    const secret = cantrip(home, ['add-secret', 'ha-token', `token=${haToken}`])
    assert.is(secret.status, 0, secret.stderr)

    // A charm deployed while c0 is the only controller: only c0 holds its archive until the
    // joined controllers copy it (agent/controller/charm-backfill.ts), as Juju's new
    // controllers take the blob store with the database.
    // Its resource file, likewise, only c0 holds until they copy it.
    const early = writeResourceCharm(home, 'early', 'early-resource')
    const earlyDeployed = cantrip(home, ['deploy', early.dir, '--resource', `data=${early.resource}`, '--to', '0'])
    assert.is(earlyDeployed.status, 0, earlyDeployed.stderr)

    const started = Date.now()
    // The two new controllers run from a second release of cantrip (the same tree stamped
    // with another version), started by that release's own client.
    const ha = cantrip(home, ['enable-ha', '-n', '3'], {}, skewedTree.root)
    assert.is(ha.status, 0, ha.stderr)
    assert.is(ha.stdout, 'maintaining controllers: c0\nadding controllers: c1, c2\n', 'Juju\'s enable-ha lines (cmd/juju/commands/enableha.go)')
    assert.match(ha.stderr, /adding c1 .* as a voter/, 'progress is shown')
    console.log(`  enable-ha 1 → 3 took ${((Date.now() - started) / 1000).toFixed(1)} s`)
    pids = recordedPids(home)
    assert.is(pids.length, 3, 'controllers.yaml lists the three members')
    assert.ok(pids.every(processAlive))

    await eventually('three voters, one leader, no commit lag (read in-process)', 120_000, async () => await answered(async () => {
      const { group } = await reader.group()
      const voters = group.leader?.voters ?? []
      return voters.length === 3 && group.members.filter(m => m.status?.role === 'leader').length === 1 &&
        group.members.every(m => group.leader?.progress[m.peer]?.lag === 0) ? true : undefined
    }))
    const shown = await eventually('three voters, one leader, no commit lag', 120_000, () => {
      const s = show(home)
      const members = Object.values(s.members)
      return s.raft.voters.length === 3 && members.filter(m => m.role === 'leader').length === 1 && members.every(m => m['commit-lag'] === 0) ? s : undefined
    })
    assert.equal(Object.values(shown.members).map(m => m.version), [packageVersion, skewed, skewed])
    const oldLeader = Object.values(shown.members).find(m => m.role === 'leader')!
    assert.match(cantrip(home, ['controllers']).stdout, /^local\*\s+default\s+admin\s+superuser\s+localhost\/localhost\s+1\s+3\s+3\s+/m)

    const client = cantrip(home, ['version'])
    assert.equal([client.status, client.stdout.trim(), client.stderr], [0, packageVersion, ''])
    // The machine agent reports its version in its heartbeats; wait until a controller has heard it.
    await eventually('machine-0 in the membership', 90_000, async () => await answered(async () => {
      const members = await reader.members()
      return members.some(m => m.entity === 'machine-0' && m.state === 'alive' && m.version === packageVersion) && members.filter(m => m.entity === 'controller').length === 3 ? true : undefined
    }))
    const all = cantrip(home, ['version', '--all'])
    assert.is(all.status, 0, all.stderr)
    const warnings = all.stderr.trim().split('\n')
    assert.is(warnings.length, 2, all.stderr)
    assert.match(warnings[0]!, new RegExp(`^WARNING version skew: controller c1 \\(\\w+\\) runs ${skewed}, this client ${packageVersion}$`))
    assert.match(warnings[1]!, /^WARNING version skew: controller c2 /)
    assert.match(all.stdout, new RegExp(`^machine-0\\s+\\w+\\s+${packageVersion.replaceAll('.', '\\.')}$`, 'm'))
    const table = cantrip(home, ['members'])
    assert.match(table.stdout, /^Peer\s+Entity\s+Status\s+Incarnation\s+Last heard\s+Heard by\s+Version$/m)
    assert.match(table.stdout, /\s+machine-0\s+alive\s+\d+\s+[\d.]+s ago\s+\w+\s+/)

    // machine-0 was started knowing only c0: it learns the added controllers from the group.
    const agentLog = join(home, 'controllers', 'local', 'machines', 'machine-0', 'agent.log')
    await eventually('machine-0 to learn c1 and c2', 120_000, () => existsSync(agentLog) && readFileSync(agentLog, 'utf8').split('learned controller').length - 1 >= 2 ? true : undefined)

    // A charm uploaded now is on a majority before deploy returns (replicated-charm-store.ts).
    const tiny = writeActiveCharm(home, 'tiny')
    const deployed = cantrip(home, ['deploy', tiny, '--to', '0'])
    assert.is(deployed.status, 0, deployed.stderr)

    // Power cut of the original leader: the two added members carry on.
    process.kill(oldLeader.pid, 'SIGKILL')
    const killedAt = Date.now()
    await eventually('the old leader to die', 60_000, () => processAlive(oldLeader.pid) ? undefined : true)
    const after = cantrip(home, ['add-machine'])
    assert.is(after.status, 0, after.stderr)
    assert.match(after.stdout, /created machine 1/)
    const status = cantrip(home, ['status', '--format', 'json'])
    assert.is(status.status, 0, status.stderr)
    assert.equal(Object.keys((JSON.parse(status.stdout) as { machines: Record<string, unknown> }).machines).sort(), ['0', '1'])
    // Machine 1's agent fetches the charm from the survivors: the archive outlived its controller.
    const added = cantrip(home, ['add-unit', 'tiny', '--to', '1'])
    assert.is(added.status, 0, added.stderr)
    const active = cantrip(home, ['wait-for', 'unit', 'tiny/1', '--status', 'active', '--timeout', '4m'])
    assert.is(active.status, 0, active.stderr)
    // So does the charm deployed before enable-ha, which only the killed controller had then,
    // and its start hook's resource-get finds the resource file c0 alone had then.
    const addedEarly = cantrip(home, ['add-unit', 'early', '--to', '1'])
    assert.is(addedEarly.status, 0, addedEarly.stderr)
    const earlyActive = cantrip(home, ['wait-for', 'unit', 'early/1', '--status', 'active', '--timeout', '4m'])
    assert.is(earlyActive.status, 0, earlyActive.stderr)
    // The joined controllers open what c0 sealed: the key was handed over (agent/secret-key-store.ts).
    const revealed = await eventually('a survivor to reveal the secret c0 sealed', 60_000, () => {
      const run = cantrip(home, ['show-secret', 'ha-token', '--reveal'])
      return run.status === 0 ? Object.values(parse(run.stdout) as Record<string, { content: Record<string, string> }>)[0]?.content : undefined
    })
    assert.equal(revealed, { token: haToken })
    const survivors = show(home)
    assert.is.not(survivors.raft.leader, oldLeader['peer-id'], 'a new leader was elected')
    assert.is(Object.values(survivors.members).filter(m => m.role === 'unreachable').length, 1)
    // Past the presence timeouts (suspect 5 s + failed 5 s), machine-0 is still heard: it reached the others.
    await new Promise(resolve => setTimeout(resolve, Math.max(0, killedAt + 12_000 - Date.now())))
    const heard = cantrip(home, ['members', '--format', 'json'])
    assert.is(heard.status, 0, heard.stderr)
    const rows = (JSON.parse(heard.stdout) as { members: Array<{ entity: string, id: string, state: string }> }).members
    assert.is(rows.find(m => m.entity === 'machine-0')?.state, 'alive', heard.stdout)
    assert.is(rows.find(m => m.id === oldLeader['peer-id'])?.state, 'failed', 'the killed controller is failed')

    await reader.close()
    const agents = machineAgentPids(home)
    const destroyed = cantrip(home, ['destroy-controller', 'local', '--no-prompt'])
    assert.is(destroyed.status, 0, destroyed.stderr)
    assert.ok([...pids, ...agents].every(pid => !processAlive(pid)), 'every controller and machine agent stopped')
    assert.not.ok(existsSync(join(home, 'controllers', 'local')))
  } finally {
    await reader.close()
    for (const pid of [...pids, ...recordedPids(home), ...machineAgentPids(home)]) {
      if (processAlive(pid)) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
    }
    removeHome(home)
    skewedTree.remove()
  }
})

test.run()
