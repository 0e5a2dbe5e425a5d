/**
 * Machine agents kept by systemd where it runs the host, else by the watchdog: the
 * decision (agent/machine-agent-supervision.ts), a local machine's unit by its exact
 * text (Juju's jujud-machine-N layout, juju/juju service/systemd/conf.go: Restart on
 * failure, WantedBy multi-user.target so it starts after a reboot), and the local
 * provider's own code with the host's service manager simulated: units installed and
 * removed, restarts left to the manager (the watchdog stands aside), a restarted agent's
 * new pid followed. This sandbox has no systemd, so no unit is really installed here.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { localMachineSupervision, unitEnvironment } from '../agent/machine-agent-supervision.ts'
import { systemdUnit, type AgentService } from '../providers/agent-service-unit.ts'
import { LocalProvider, serviceName, type LocalAgentServices } from '../providers/local-provider.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import type { InstanceSpec } from '../providers/provider-contract.ts'
import { SimClock } from '../sim/sim-clock.ts'
import { SimFileSystem } from '../sim/sim-file-system.ts'
import { SimProcessRunner } from '../sim/sim-process-runner.ts'
import { flush, settle } from './support/sim-settle.ts'

test('the decision: units only when the controllers are units and systemd runs the host; else the watchdog, saying why', () => {
  const running = { running: true } as const
  const absent = { running: false, why: 'systemd is not running on this host (PID 1 is "bash")' } as const
  assert.equal(localMachineSupervision(true, running, 'system'), { kind: 'systemd', scope: 'system' })
  assert.equal(localMachineSupervision(true, running, 'user'), { kind: 'systemd', scope: 'user' })
  assert.equal(localMachineSupervision(true, absent, 'system'), { kind: 'watchdog', why: 'systemd is not running on this host (PID 1 is "bash")' })
  assert.equal(localMachineSupervision(false, running, 'system'), { kind: 'watchdog', why: 'the controllers are not systemd units (bootstrap --systemd makes them so)' })
})

test('a unit keeps the CANTRIP_* settings, PATH and HOME, nothing else of the controller\'s environment', () => {
  assert.equal(unitEnvironment({ CANTRIP_LOG_LEVEL: 'debug', PATH: '/usr/bin', HOME: '/root', SSH_AUTH_SOCK: '/tmp/agent', AWS_SECRET: 'x' }),
    { CANTRIP_LOG_LEVEL: 'debug', PATH: '/usr/bin', HOME: '/root' })
})

interface Installed { service: AgentService, pid: number | undefined }

/** The host's service manager, simulated: start runs the agent as a detached process of the simulated runner. */
function world () {
  const clock = new SimClock({ startMs: 1_000_000 })
  const files = new SimFileSystem()
  const processes = new SimProcessRunner(clock, () => { throw new Error('no plain processes here') }, { files, detachedScript: () => ({ durationMs: 0, hang: true }) })
  const units = new Map<string, Installed>()
  const calls: string[] = []
  const services: LocalAgentServices = {
    start: service => {
      calls.push(`start ${service.name}`)
      const child = processes.startDetached({ command: service.command, args: service.args, env: service.env, cwd: service.cwd, logFile: service.logFile })
      units.set(service.name, { service, pid: child.pid })
      return child.pid
    },
    mainPid: name => {
      const pid = units.get(name)?.pid
      return pid !== undefined && processes.identify(pid) !== undefined ? pid : undefined
    },
    remove: name => {
      calls.push(`remove ${name}`)
      const pid = units.get(name)?.pid
      if (pid !== undefined) processes.signalGroup(pid, 'SIGKILL')
      units.delete(name)
    }
  }
  const provider = new LocalProvider({
    home: '/srv/machines',
    logger: createMemoryLogger('local-provider', []),
    command: { file: '/usr/bin/node', args: (bootstrapFile, dataDir) => ['dist/cantripd-stub.mjs', '--bootstrap', bootstrapFile, '--data-dir', dataDir], env: { CANTRIP_LOG_LEVEL: 'debug' } },
    processes, files, clock, services,
    watchIntervalMs: 1_000, restartDelayMs: 1_000, startCheckMs: 500
  })
  return { clock, processes, units, calls, provider }
}

const spec: InstanceSpec = { machineId: '3', token: 'token-3', bootstrap: new TextEncoder().encode('ok'), constraints: {} }

test('a local machine as a unit: its exact text, started through the manager; restarts are the manager\'s; a stop removes it', async () => {
  const w = world()
  const name = serviceName('/srv/machines/machine-3', '3')
  assert.match(name, /^cantripd-machine-3-[0-9a-f]{8}$/)
  await settle(w.clock, w.provider.startInstance(spec), 50, 10_000)
  assert.equal(w.calls, [`start ${name}`])
  assert.is(systemdUnit(w.units.get(name)!.service, 'system'), [
    '[Unit]',
    'Description=cantrip machine 3 (/srv/machines/machine-3)',
    'After=syslog.target',
    'After=network.target',
    'After=systemd-user-sessions.service',
    '',
    '[Service]',
    'Environment=CANTRIP_LOG_LEVEL=debug',
    'WorkingDirectory=/srv/machines/machine-3',
    'ExecStart=/usr/bin/node dist/cantripd-stub.mjs --bootstrap /srv/machines/machine-3/bootstrap --data-dir /srv/machines/machine-3/agent',
    'StandardOutput=append:/srv/machines/machine-3/agent.log',
    'StandardError=append:/srv/machines/machine-3/agent.log',
    'Restart=on-failure',
    'RestartSec=2',
    'TimeoutSec=300',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    ''
  ].join('\n'))
  // The agent crashes: the watchdog does not restart it (two restarters would race) …
  w.provider.start()
  const first = w.units.get(name)!.pid!
  w.processes.crash(first, 'SIGSEGV')
  for (let i = 0; i < 60; i++) { w.clock.advance(100); await flush() }
  assert.is(w.provider.restartCount('3'), 0)
  assert.equal(w.calls, [`start ${name}`])
  assert.equal((await w.provider.allInstances()).map(i => i.status), ['failed'])
  // … systemd does (Restart=on-failure), under a new pid the provider follows.
  const again = w.processes.startDetached({ command: '/usr/bin/node', args: [], env: {}, cwd: '/', logFile: '/srv/machines/machine-3/agent.log' }).pid!
  w.units.get(name)!.pid = again
  assert.equal((await w.provider.allInstances()).map(i => [i.status, i.message]), [['running', `agent pid ${again}`]])
  await w.provider.stop()
  await settle(w.clock, w.provider.stopInstances(['local:machine-3']), 50, 10_000)
  assert.equal(w.calls, [`start ${name}`, `remove ${name}`])
  assert.equal(w.processes.detachedPids(), [])
  assert.equal(await w.provider.allInstances(), [])
})

test.run()
