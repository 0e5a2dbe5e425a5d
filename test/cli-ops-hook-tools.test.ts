/**
 * The Juju 3.5 hook tools the ops framework calls, from a real charm on real processes
 * (`cantrip bootstrap`, the local provider; one controller for the file): a bash charm
 * deployed with `--resource` records, in its config-changed and upgrade-charm hooks, what
 * goal-state, relation-model-get, opened-ports --endpoints (after an open-port in the same
 * hook), resource-get and credential-get print and exit with.
 *
 * - credential-get is refused without trust (`cannot access cloud credentials: permission
 *   denied`, exit 1) and answers after `cantrip trust` (whose change runs config-changed);
 * - `attach-resource` fires upgrade-charm, where resource-get gives the new content;
 * - relation-model-get names the model's uuid (JUJU_MODEL_UUID), as ops' test asserts.
 *
 * Juju sources: the jujuc commands goal-state.go, credential-get.go, relation-model-get.go,
 * resource-get.go, opened-ports.go; runner/context/ports.go; canonical/operator
 * test/integration/test_hookcmds.py (test_goal_state_reports_units, test_credential_get,
 * test_relation_model_get, test_resource_get, test_ports_endpoint_scoped).
 *
 * Every process started is stopped by pid (destroy-controller stops the agents); the
 * temporary directory is removed.
 */
import '../runtime/polyfill.ts'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantrip, cantripOk as ok, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { waitFor } from './support/wait-for.ts'

const probeHook = (log: string): string => `#!/bin/bash
set -u
out=${JSON.stringify(log)}
{
  echo "== $JUJU_HOOK_NAME"
  echo "goal $(goal-state --format=json 2>&1)"
  echo "model $(relation-model-get -r "$(relation-ids peer)" --format=json 2>&1) env $JUJU_MODEL_UUID"
  open-port --endpoints peer 7766/tcp
  echo "ports $(opened-ports --endpoints --format=json)"
  path=$(resource-get test-file); echo "resource $path $(cat "$path")"
  cred=$(credential-get --format=json 2>&1); echo "cred $? $cred"
  resource-get nope >/dev/null 2>&1; echo "missing $?"
} >> "$out"
`

function writeCharm (dir: string, log: string): void {
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), [
    'name: probe', 'summary: records what the Juju 3.5 hook tools print', 'description: test charm',
    'peers:', '  peer:', '    interface: probe-peer',
    'resources:', '  test-file:', '    type: file', '    filename: test-file.txt', '    description: a small file', ''
  ].join('\n'))
  const hook = (name: string, body: string): void => {
    writeFileSync(join(dir, 'hooks', name), body)
    chmodSync(join(dir, 'hooks', name), 0o755)
  }
  hook('start', '#!/bin/bash\nstatus-set active ready\n')
  hook('config-changed', probeHook(log))
  hook('upgrade-charm', probeHook(log))
}

/** The records of each run of the probe, in order: `{hook, goal, model, ...}` by first word. */
function runs (log: string): Array<Record<string, string>> {
  if (!existsSync(log)) return []
  const out: Array<Record<string, string>> = []
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    if (line.startsWith('== ')) { out.push({ hook: line.slice(3) }); continue }
    const space = line.indexOf(' ')
    if (space > 0 && out.length > 0) out[out.length - 1]![line.slice(0, space)] = line.slice(space + 1)
  }
  return out.filter(run => run['missing'] !== undefined)
}

test('goal-state, relation-model-get, opened-ports, resource-get, credential-get from a deployed charm', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-ops-tools-'))
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  const log = join(home, 'probe.log')
  const charm = join(home, 'probe')
  writeCharm(charm, log)
  const first = join(home, 'first.txt')
  writeFileSync(first, 'hello from the integration test resource')
  try {
    // Bad resource arguments are refused with one line before anything is sent.
    assert.match(cantrip(home, ['deploy', charm, '--resource', 'test-file']).stderr, /^ERROR cantrip deploy: expected --resource NAME=PATH, got "test-file"$/m)
    ok(home, 'bootstrap')
    assert.match(cantrip(home, ['deploy', charm, '--resource', `other=${first}`]).stderr, /^ERROR cantrip deploy: expected a resource charm "probe" declares \(test-file\), got "other"$/m)
    ok(home, 'deploy', charm, '--resource', `test-file=${first}`)
    await waitFor('config-changed probed', () => runs(log).length >= 1, () => existsSync(log) ? readFileSync(log, 'utf8') : 'no log')

    const run = runs(log)[0]!
    assert.is(run['hook'], 'config-changed')
    assert.match(run["goal"]!, /^{/, run["goal"])
    const goal = JSON.parse(run["goal"]!) as { units: Record<string, { status: string, since: string }>, relations: Record<string, unknown> }
    assert.equal(Object.keys(goal.units), ['probe/0'])
    assert.match(goal.units['probe/0']!.since, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/)
    assert.equal(goal.relations, {}, 'peer relations are not listed')
    const [modelJson, , envUuid] = run['model']!.split(' ')
    assert.equal(JSON.parse(modelJson!), { uuid: envUuid })
    assert.is(run['ports'], '["7766/tcp (peer)"]', 'a port opened earlier in the same hook is listed, with its endpoint')
    assert.match(run['resource']!, /\/resources\/test-file\/test-file\.txt hello from the integration test resource$/)
    assert.is(run['cred'], '1 ERROR cannot access cloud credentials: permission denied')
    assert.is(run['missing'], '1')

    // Trust: config-changed runs again, and credential-get answers.
    // Another hook may run between the first and the trust (a busy machine orders them as it
    // may), so wait for the config-changed that sees the trust rather than for the second run.
    const before = runs(log).length
    ok(home, 'trust', 'probe')
    const trustedAnswer = '0 {"type":"local","name":"local","region":"localhost","credential":{"auth-type":"empty"},"is-controller-cloud":true}'
    await waitFor('a config-changed after trust that reads the credential', () => runs(log).slice(before).some(r => r['hook'] === 'config-changed' && r['cred'] === trustedAnswer), () => readFileSync(log, 'utf8'))
    const trusted = runs(log).slice(before).find(r => r['hook'] === 'config-changed' && r['cred'] === trustedAnswer)!
    assert.is(trusted['cred'], trustedAnswer)
    assert.is(trusted['ports'], '["7766/tcp (peer)"]')

    // attach-resource: upgrade-charm runs and resource-get gives the new file.
    const second = join(home, 'second.txt')
    writeFileSync(second, 'second revision')
    assert.match(cantrip(home, ['attach-resource', 'probe', `nope=${second}`]).stderr, /expected a resource charm "probe" declares \(test-file\), got "nope"/)
    ok(home, 'attach-resource', 'probe', `test-file=${second}`)
    await waitFor('upgrade-charm after attach-resource', () => runs(log).some(r => r['hook'] === 'upgrade-charm'), () => readFileSync(log, 'utf8'))
    const upgraded = runs(log).find(r => r['hook'] === 'upgrade-charm')!
    assert.match(upgraded['resource']!, /\/resources\/test-file\/test-file\.txt second revision$/)
  } finally {
    destroyLeftoverController(home, machinesDir)
    removeHome(home)
  }
})

test.run()
