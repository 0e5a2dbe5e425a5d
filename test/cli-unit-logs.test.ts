/**
 * A removed unit's last log lines, in real processes: `cantrip bootstrap` (one
 * controller, the local provider), a charm whose stop and remove hooks log a marker with
 * `juju-log` (and print one on stdout), `remove-unit`, and as soon as the unit has left
 * the model:
 *
 * - `debug-log --replay --no-tail --include marker/0` already has both markers (read once,
 *   not polled: the machine agent waits for a controller to keep its final batch before it
 *   marks the unit dead, so the lines cannot be late);
 * - the unit's log file on its machine, `<machine>/agent/log/unit-marker-0.log`, has them
 *   too, in Juju's file line format, and the machine agent's own `machine-<n>.log` exists;
 * - SIGTERM to that machine's agent: once it has exited, its `terminating on SIGTERM` and,
 *   last of all, its `stopped` line (logged just before the mesh closes) are in
 *   `debug-log --replay` (read once: the agent waits for a controller to keep its last
 *   batch before it closes the mesh) and in its `machine-<n>.log`.
 *
 * Juju followed: worker/uniter's removal path (the stop hook, then remove, then the unit
 * is marked dead) and worker/logsender (the agent's records go to the controller's
 * logsink), cmd/jujud/agent/machine.go (`/var/log/juju/<agent tag>.log`) and loggo's
 * formatter.go for the file's lines.
 *
 * Every process started is stopped by pid (destroy-controller stops the agents); the
 * temporary directory is removed.
 */
import '../runtime/polyfill.ts'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantripOk as ok, destroyLeftoverController } from './support/cli-process.ts'
import { waitFor } from './support/cantripd-cluster.ts'
import { processAlive } from './support/processes.ts'
import { StatusReader } from './support/status-reader.ts'

function writeMarkerCharm (dir: string): void {
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), 'name: marker\nsummary: marker\ndescription: logs a marker from its stop and remove hooks\n')
  const hooks: Record<string, string> = {
    install: 'juju-log "install-marker"',
    start: 'status-set active started',
    stop: 'juju-log "stop-marker"\necho "stop-stdout-marker"',
    remove: 'juju-log "remove-marker"\necho "remove-stdout-marker"'
  }
  for (const [name, body] of Object.entries(hooks)) {
    writeFileSync(join(dir, 'hooks', name), `#!/bin/bash\nset -eu\n${body}\n`)
    chmodSync(join(dir, 'hooks', name), 0o755)
  }
}

/** Every file called `name` under `dir`, at any depth. */
function findFiles (dir: string, name: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter(e => e.isFile() && e.name === name)
    .map(e => join(e.parentPath, e.name))
}

test('remove-unit: the stop and remove hooks\' lines are in debug-log --replay and in the unit\'s log file', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-unit-logs-'))
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  const charm = join(home, 'charm')
  writeMarkerCharm(charm)
  let reader: StatusReader | undefined
  try {
    ok(home, 'bootstrap')
    // Hook output is logged at DEBUG, which Juju's default logging-config (<root>=INFO) leaves out.
    ok(home, 'model-config', 'logging-config=<root>=INFO;unit=DEBUG')
    ok(home, 'deploy', charm)
    ok(home, 'wait-for', 'application', 'marker', '--status', 'active', '--timeout', '4m')
    // Waited on in this process (a `cantrip status` per look cost ~0.5 CPU-s each).
    reader = await StatusReader.open(home)
    ok(home, 'remove-unit', 'marker/0')
    await reader.until('marker/0 to leave the model', doc => doc.applications['marker']?.units?.['marker/0'] === undefined)
    await reader.close()
    reader = undefined

    // Once: the final batch was kept before the unit was marked dead.
    const replay = ok(home, 'debug-log', '--replay', '--no-tail', '--include', 'marker/0')
    assert.match(replay, /^unit-marker-0: \d\d:\d\d:\d\d INFO unit\.marker\/0\.juju-log stop-marker$/m)
    assert.match(replay, /^unit-marker-0: \d\d:\d\d:\d\d INFO unit\.marker\/0\.juju-log remove-marker$/m)
    assert.match(replay, /^unit-marker-0: \d\d:\d\d:\d\d DEBUG unit\.marker\/0\.remove remove-stdout-marker$/m)
    const lines = replay.trim().split('\n')
    assert.ok(lines.findIndex(l => l.endsWith(' stop-marker')) < lines.findIndex(l => l.endsWith(' remove-marker')), replay)

    // The unit's own file on its machine, Juju's file format (UTC to the second).
    const unitFiles = findFiles(machinesDir, 'unit-marker-0.log')
    assert.is(unitFiles.length, 1, `one unit-marker-0.log under ${machinesDir}`)
    const logDir = join(unitFiles[0]!, '..')
    assert.ok(logDir.endsWith(join('agent', 'log')), logDir)
    const text = readFileSync(unitFiles[0]!, 'utf8')
    for (const marker of ['install-marker', 'stop-marker', 'remove-marker']) {
      assert.match(text, new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d INFO unit\\.marker/0\\.juju-log ${marker}$`, 'm'))
    }
    assert.match(text, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d DEBUG unit\.marker\/0\.stop stop-stdout-marker$/m)
    const machineLog = readdirSync(logDir).find(name => /^machine-\d+\.log$/.test(name))
    assert.ok(machineLog !== undefined, readdirSync(logDir).join(' '))

    // SIGTERM: the agent's last words are kept by a controller before it exits.
    const entity = machineLog.replace(/\.log$/, '')
    const pid = Number(readFileSync(join(logDir, '..', '..', 'agent.pid'), 'utf8').split(' ')[0])
    assert.ok(processAlive(pid), `the agent of ${entity} runs (pid ${pid})`)
    process.kill(pid, 'SIGTERM')
    await waitFor(`${entity}'s agent to exit`, () => !processAlive(pid))
    const last = ok(home, 'debug-log', '--replay', '--no-tail', '--include', entity)
    const lastLines = last.trim().split('\n')
    const terminating = lastLines.findIndex(line => new RegExp(`^${entity}: \\d\\d:\\d\\d:\\d\\d INFO juju\\.agent terminating on SIGTERM$`).test(line))
    // The watchdog may have restarted the agent since: its new lines may follow.
    const stopped = lastLines.findIndex(line => new RegExp(`^${entity}: \\d\\d:\\d\\d:\\d\\d INFO juju\\.agent stopped$`).test(line))
    assert.ok(terminating >= 0 && stopped > terminating, last)
    assert.match(readFileSync(join(logDir, machineLog), 'utf8'), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d INFO juju\.agent stopped$/m)
  } finally {
    await reader?.close()
    destroyLeftoverController(home, machinesDir)
    rmSync(home, { recursive: true, force: true })
  }
})

test.run()
