/**
 * Scenario files: the full format of the issue-9 contract parses to the Scenario the
 * runner takes (ms, camelCase, defaults filled, a real charm's endpoints read from its
 * metadata.yaml); every class of mistake is one line naming the file, the path, what
 * was expected and what arrived; and writing a scenario back gives a file that parses
 * to the same Scenario.
 */
import { resolve } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parseScenario } from '../sim/scenario/parse-scenario.ts'
import { scenarioToYaml } from '../sim/scenario/write-scenario.ts'

const test = suite('sim scenario parse')
const file = 'examples/sim/full.yaml'

/** The contract's example (kv's db endpoint speaks http here, so web:backend can relate to it). */
const full = `
name: leader-crash-during-deploy
description: The controller leader is killed while units are still installing.
seed: 1
controllers: 3
provider:
  nodes: 32
  latency: { allocate: 200ms, deploy: 3s, release: 500ms }
  failure-rates: { allocate: 0, deploy: 0.1, release: 0 }
network: { latency: [1ms, 10ms] }
charms:
  kv:
    provides: { db: http }
    peers: { cluster: kv-peer }
    hooks:
      '*': { duration: [50ms, 400ms] }
      start: { status: active }
      db-relation-joined: { relation-set: { host: '{unit}', port: 8080 } }
  web:
    path: ../charms/web
    hooks:
      install: { fail-times: 2 }
      config-changed: { status: active, message: serving }
applications:
  kv: { charm: kv, units: 3, config: { port: 8080 } }
  web: { charm: web, units: 2 }
relations:
  - [web:backend, kv:db]
workload:
  - { at: 20s, do: add-unit, application: kv, units: 2 }
  - { at: 25s, do: config, application: kv, config: { port: 8081 } }
  - { at: 30s, do: remove-unit, unit: kv/1 }
  - { at: 1s, do: writes, rate: 20, until: 30s }
faults:
  - { at: 5s, kind: crash, target: leader }
  - { at: 9s, kind: restart, target: controller/0 }
  - { at: 12s, kind: partition, shape: majority-minority, minority: 1, for: 5s }
  - { at: 14s, kind: loss, probability: 0.2, for: 3s }
  - { at: 15s, kind: disk-full, target: controller/1, for: 4s }
  - { at: 16s, kind: hook-fail, unit: web/0, hook: install, times: 2 }
  - { at: 17s, kind: delay, min: 10ms, max: 1.5s }
  - { at: 18s, kind: partition, shape: split, groups: [[controller/0, machine/1], [controller/1, controller/2]] }
  - { at: 19s, kind: hook-hang, unit: kv, hook: db-relation-joined, for: 2s }
random-faults: { profile: mixed, events: 12, from: 2s, until: 40s }
faults-until: 45s
liveness: { budget: 120s }
bugs: [raft-commit-previous-term]
`

test('the full example parses to ms and camelCase, with the real charm\'s endpoints', () => {
  const s = parseScenario(full, file)
  assert.is(s.name, 'leader-crash-during-deploy')
  assert.equal(s.provider, { nodes: 32, latencyMs: { allocate: 200, deploy: 3000, release: 500 }, failureRates: { allocate: 0, deploy: 0.1, release: 0 } })
  assert.equal(s.network.latencyMs, [1, 10])
  assert.equal(s.charms['kv']!.hooks['*'], { durationMs: [50, 400] })
  assert.equal(s.charms['kv']!.hooks['db-relation-joined'], { relationSet: { host: '{unit}', port: '8080' } })
  assert.equal(s.charms['web']!.hooks['config-changed'], { status: { status: 'active', message: 'serving' } })
  assert.equal(s.charms['web']!.hooks['install'], { failTimes: 2 })
  assert.is(s.charms['web']!.path, resolve('examples/charms/web'))
  assert.equal(s.charms['web']!.requires, { backend: 'http' })
  assert.is(s.charms['web']!.subordinate, false)
  assert.equal(s.applications, [
    { name: 'kv', charm: 'kv', units: 3, config: { port: 8080 } },
    { name: 'web', charm: 'web', units: 2, config: {} }
  ])
  assert.equal(s.relations, [['web:backend', 'kv:db']])
  assert.equal(s.workload[3], { at: 1000, do: 'writes', ratePerS: 20, untilMs: 30000 })
  assert.equal(s.faults[0], { at: 5000, kind: 'crash', target: 'leader' })
  assert.equal(s.faults[2], { at: 12000, kind: 'partition', shape: 'majority-minority', minority: 1, forMs: 5000 })
  assert.equal(s.faults[5], { at: 16000, kind: 'hook-fail', unit: 'web/0', hook: 'install', times: 2 })
  assert.equal(s.faults[6], { at: 17000, kind: 'delay', minMs: 10, maxMs: 1500 })
  assert.equal(s.faults[7], { at: 18000, kind: 'partition', shape: 'split', groups: [['controller/0', 'machine/1'], ['controller/1', 'controller/2']] })
  assert.equal(s.randomFaults, { profile: 'mixed', events: 12, fromMs: 2000, untilMs: 40000 })
  assert.is(s.faultsUntilMs, 45000)
  assert.is(s.livenessBudgetMs, 120000)
  assert.equal(s.bugs, ['raft-commit-previous-term'])
})

test('defaults: seed, controllers, provider nodes and latencies, network, faults-until, liveness', () => {
  const s = parseScenario(`
name: small
charms: { kv: { provides: { db: kv } } }
applications: { kv: { units: 2 } }
workload: [{ at: 3s, do: add-unit, application: kv, units: 3 }]
faults: [{ at: 7s, kind: pause, target: machine/0 }]
`, 'small.yaml')
  assert.is(s.seed, 1)
  assert.is(s.controllers, 3)
  assert.is(s.description, '')
  assert.equal(s.provider, { nodes: 2 + 3 + 8, latencyMs: { allocate: 200, deploy: 3000, release: 500 }, failureRates: { allocate: 0, deploy: 0, release: 0 } })
  assert.equal(s.network, { latencyMs: [1, 10] })
  assert.is(s.faultsUntilMs, 9000, 'last fault at 7s + 2s')
  assert.is(s.livenessBudgetMs, 120000)
  assert.equal(s.applications[0], { name: 'kv', charm: 'kv', units: 2, config: {} })
  assert.equal(s.faults[0], { at: 7000, kind: 'pause', target: 'machine/0' }, 'no forMs key when for: is absent')
  assert.is(s.randomFaults, undefined)
  assert.is(s.raft, undefined)
  assert.equal(s.bugs, [])
})

test('a writes command past the last fault moves the default heal time', () => {
  const s = parseScenario('name: w\ncharms: {}\nworkload: [{ at: 1s, do: writes, rate: 5, until: 30s }]\n', 'w.yaml')
  assert.is(s.faultsUntilMs, 32000)
})

/** Each mistake and the one line it gives. */
const mistakes: Array<[string, string, string]> = [
  ['a duration that is not one', 'name: x\ncharms: {}\nfaults: [{ at: 1s, kind: heal }, { at: 2s, kind: heal }, { at: soon, kind: heal }]\n',
    'sim: scenario examples/sim/x.yaml: faults[2].at: expected a duration like 5s or 500ms, got "soon"'],
  ['an unknown top-level key', 'name: x\ncharms: {}\nfault: []\n',
    'sim: scenario examples/sim/x.yaml: fault: expected one of the keys name, description, seed, controllers, provider, raft, network, charms, applications, relations, workload, faults, random-faults, faults-until, liveness, bugs, got unknown key "fault"'],
  ['an unknown key in a fault', 'name: x\ncharms: {}\nfaults: [{ at: 1s, kind: crash, target: leader, for: 2s }]\n',
    'sim: scenario examples/sim/x.yaml: faults[0].for: expected one of the keys at, kind, target, got unknown key "for"'],
  ['a missing name', 'charms: {}\n',
    'sim: scenario examples/sim/x.yaml: name: expected a name of a-z, 0-9 and -, got nothing'],
  ['a bad name', 'name: Big Name\ncharms: {}\n',
    'sim: scenario examples/sim/x.yaml: name: expected a name of a-z, 0-9 and -, got "Big Name"'],
  ['an even number of controllers', 'name: x\ncontrollers: 2\ncharms: {}\n',
    'sim: scenario examples/sim/x.yaml: controllers: expected 1, 3 or 5, got 2'],
  ['an application of an unknown charm', 'name: x\ncharms: { kv: {} }\napplications: { web: { charm: web } }\n',
    'sim: scenario examples/sim/x.yaml: applications.web.charm: expected a charm declared under charms: (kv), got "web"'],
  ['a relation to an endpoint the charm lacks', 'name: x\ncharms: { kv: { provides: { db: kv } }, app: { requires: { db: kv } } }\napplications: { kv: {}, app: {} }\nrelations: [[app:db, kv:website]]\n',
    'sim: scenario examples/sim/x.yaml: relations[0][1]: expected an endpoint of charm kv (db), got "website"'],
  ['a relation across interfaces', 'name: x\ncharms: { kv: { provides: { db: kv } }, app: { requires: { db: sql } } }\napplications: { kv: {}, app: {} }\nrelations: [[app:db, kv:db]]\n',
    'sim: scenario examples/sim/x.yaml: relations[0]: expected endpoints of one interface, got sql and kv'],
  ['a malformed fault target', 'name: x\ncharms: {}\nfaults: [{ at: 1s, kind: crash, target: controller-0 }]\n',
    'sim: scenario examples/sim/x.yaml: faults[0].target: expected leader, follower, controller/N or machine/N, got "controller-0"'],
  ['a controller the scenario does not have', 'name: x\ncontrollers: 3\ncharms: {}\nfaults: [{ at: 1s, kind: disk-full, target: controller/3 }]\n',
    'sim: scenario examples/sim/x.yaml: faults[0].target: expected a controller from controller/0 to controller/2, got "controller/3"'],
  ['a hook fault on a unit of no application', 'name: x\ncharms: { kv: {} }\napplications: { kv: {} }\nfaults: [{ at: 1s, kind: hook-fail, unit: web/0, hook: install }]\n',
    'sim: scenario examples/sim/x.yaml: faults[0].unit: expected an application of the scenario (kv), got "web"'],
  ['a hook fault on a hook the charm has not', 'name: x\ncharms: { kv: {} }\napplications: { kv: {} }\nfaults: [{ at: 1s, kind: hook-fail, unit: kv/0, hook: db-relation-joined }]\n',
    'sim: scenario examples/sim/x.yaml: faults[0].hook: expected a hook of charm kv, got "db-relation-joined"'],
  ['an unknown fault kind', 'name: x\ncharms: {}\nfaults: [{ at: 1s, kind: meteor }]\n',
    'sim: scenario examples/sim/x.yaml: faults[0].kind: expected one of crash, restart, pause, resume, partition, heal, reset-connection, loss, duplicate, delay, reorder, clock-drift, disk-error, disk-full, provider-failure, hook-fail, hook-hang, got "meteor"'],
  ['a probability above 1', 'name: x\ncharms: {}\nfaults: [{ at: 1s, kind: loss, probability: 2 }]\n',
    'sim: scenario examples/sim/x.yaml: faults[0].probability: expected a probability from 0 to 1, got 2'],
  ['a fault after the heal', 'name: x\ncharms: {}\nfaults-until: 5s\nfaults: [{ at: 6s, kind: heal }]\n',
    'sim: scenario examples/sim/x.yaml: faults[0].at: expected a time no later than faults-until (5000ms), got 6000ms'],
  ['a remove-unit of an unknown application', 'name: x\ncharms: {}\nworkload: [{ at: 1s, do: remove-unit, unit: kv/0 }]\n',
    'sim: scenario examples/sim/x.yaml: workload[0].unit: expected an application of the scenario (none), got "kv"'],
  ['a hook of no kind', 'name: x\ncharms: { kv: { hooks: { instal: {} } } }\n',
    'sim: scenario examples/sim/x.yaml: charms.kv.hooks.instal: expected * or a hook of charm kv (install, start, config-changed, upgrade-charm, ...), got "instal"'],
  ['a bug that is not planted', 'name: x\ncharms: {}\nbugs: [off-by-one]\n',
    'sim: scenario examples/sim/x.yaml: bugs[0]: expected one of raft-commit-previous-term, got "off-by-one"'],
  ['not YAML', 'name: [x\n', 'sim: scenario examples/sim/x.yaml: expected valid YAML, got'],
  ['a charm path with no metadata', 'name: x\ncharms: { ghost: { path: ../no-such-charm } }\n',
    `sim: scenario ${resolve('examples/no-such-charm/metadata.yaml')}: expected a readable charm metadata.yaml, got ENOENT`]
]

for (const [what, text, message] of mistakes) {
  test(`refused with one line: ${what}`, () => {
    try {
      parseScenario(text, 'examples/sim/x.yaml')
    } catch (error) {
      const got = (error as Error).message
      assert.ok(got.startsWith(message), `${got}\n  wanted ${message}`)
      assert.not.ok(got.includes('\n'), 'one line')
      return
    }
    assert.unreachable(`accepted: ${what}`)
  })
}

test('writing a scenario back round-trips through the parser (full example and defaults)', () => {
  const more = `
name: more
raft: { tick: 10ms, election-ticks: 10, heartbeat-ticks: 1 }
charms:
  kv: { provides: { db: kv }, hooks: { install: { duration: 250ms, fail-probability: 0.5, leader-set: { k: v } } } }
  app: { requires: { db: kv }, subordinate: false }
applications: { kv: {} }
workload:
  - { at: 1s, do: deploy, application: app, charm: app, units: 2, config: { on: true } }
  - { at: 2s, do: integrate, endpoints: [app:db, kv:db] }
  - { at: 3s, do: remove-relation, endpoints: [app:db, kv:db] }
  - { at: 4s, do: remove-application, application: app }
faults:
  - { at: 1s, kind: reorder, probability: 0.3, extra-max: 40ms }
  - { at: 1s, kind: clock-drift, target: machine/0, rate: 0.01 }
  - { at: 1s, kind: disk-error, target: follower, writes: 3 }
  - { at: 1s, kind: provider-failure, step: deploy, rate: 0.5, for: 2s }
  - { at: 2s, kind: partition, shape: one-way, from: controller/0, to: leader }
  - { at: 2s, kind: partition, shape: bridge, bridge: controller/2 }
  - { at: 2s, kind: partition, shape: isolate, target: machine/3, for: 1s }
  - { at: 2s, kind: partition, shape: machines-from-controllers, machines: [machine/0] }
  - { at: 3s, kind: partition, shape: machines-from-controllers }
  - { at: 3s, kind: resume, target: machine/3 }
  - { at: 3s, kind: duplicate, probability: 0.05 }
  - { at: 4s, kind: heal }
`
  assert.is(parseScenario(more, file).faults.length, 12)
  for (const text of [full, more, 'name: d\ncharms: { kv: { provides: { db: kv }, hooks: { install: { duration: 250ms, fail-probability: 0.5 } } } }\napplications: { kv: {} }\n']) {
    const s = parseScenario(text, file)
    const written = scenarioToYaml(s)
    assert.equal(parseScenario(written, '/elsewhere/shrunk.yaml'), s, written)
  }
})

test('the real example charms parse through path:', () => {
  const s = parseScenario('name: real\ncharms:\n  kv: { path: ../charms/kv }\n  web: { path: ../charms/web }\n  logship: { path: ../charms/logship }\napplications: { kv: {}, web: {} }\nrelations: [[web:backend, kv:website]]\n', file)
  assert.equal(s.charms['kv']!.provides, { website: 'http' })
  assert.is(s.charms['logship']!.subordinate, true)
  assert.equal(s.relations, [['web:backend', 'kv:website']])
})

test.run()
