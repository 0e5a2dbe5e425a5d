/**
 * An agent's systemd unit, by its exact text: Juju's layout (juju/juju
 * service/systemd/conf.go: After syslog, network and user sessions; Environment;
 * ExecStart; the restart policy; WantedBy multi-user.target), restarting on failure, the
 * agent's launch record as ExecStart with systemd's quoting; and the one line that says
 * why there are no units on a host whose PID 1 is not systemd.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { AgentLaunch } from '../agent/agent-launch.ts'
import { quoteArgument, systemdPresence, systemdUnit, unitFileName } from '../agent/systemd-unit.ts'

const launch: AgentLaunch = {
  name: 'cantripd-local-c1',
  description: 'cantrip controller c1 of "local"',
  command: '/usr/bin/node',
  args: ['/opt/cantrip/dist/cantripd.mjs', '--role', 'controller', '--data-dir', '/var/lib/cantrip/local/c1', '--listen', '/ip4/127.0.0.1/tcp/41234'],
  cwd: '/opt/cantrip',
  logFile: '/var/lib/cantrip/local/c1/cantripd.log',
  env: { CANTRIP_LOG_LEVEL: 'debug' }
}

test('the unit of a controller, as root', () => {
  assert.is(unitFileName(launch), 'cantripd-local-c1.service')
  assert.is(systemdUnit(launch, 'system'), [
    '[Unit]',
    'Description=cantrip controller c1 of "local"',
    'After=syslog.target',
    'After=network.target',
    'After=systemd-user-sessions.service',
    '',
    '[Service]',
    'Environment=CANTRIP_LOG_LEVEL=debug',
    'WorkingDirectory=/opt/cantrip',
    'ExecStart=/usr/bin/node /opt/cantrip/dist/cantripd.mjs --role controller --data-dir /var/lib/cantrip/local/c1 --listen /ip4/127.0.0.1/tcp/41234',
    'StandardOutput=append:/var/lib/cantrip/local/c1/cantripd.log',
    'StandardError=append:/var/lib/cantrip/local/c1/cantripd.log',
    'Restart=on-failure',
    'RestartSec=2',
    'TimeoutSec=300',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    ''
  ].join('\n'))
})

test('a user\'s unit starts with the user\'s manager', () => {
  assert.match(systemdUnit(launch, 'user'), /\n\[Install\]\nWantedBy=default\.target\n$/)
})

test('ExecStart words are quoted as systemd reads them', () => {
  assert.is(quoteArgument('/ip4/127.0.0.1/tcp/1'), '/ip4/127.0.0.1/tcp/1')
  assert.is(quoteArgument('a b'), '"a b"')
  assert.is(quoteArgument(''), '""')
  assert.is(quoteArgument('say "hi"\\'), '"say \\"hi\\"\\\\"')
  // % is a specifier and $ a variable to systemd: both doubled.
  assert.is(quoteArgument('100%'), '100%%')
  assert.is(quoteArgument('$HOME'), '$$HOME')
  assert.is(systemdUnit({ ...launch, env: { CANTRIP_X: 'a b' } }, 'system').split('\n')[7], 'Environment="CANTRIP_X=a b"')
})

test('without systemd as PID 1, one line says why', () => {
  const presence = systemdPresence()
  if (presence.running) return
  assert.match(presence.why, /^systemd is not running on this host \(PID 1 is "[^"]*"\)$/)
})

test.run()
