/**
 * open-port, close-port, opened-ports, unit-get, network-get, storage-get, storage-list
 * and juju-reboot (juju-semantics §5.3). Port changes and reboot requests are buffered
 * until the hook succeeds (§4.3).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { NetworkInfo } from '../agent/hook-tools/hook-context.ts'
import { parsePortRange } from '../agent/hook-tools/commands/ports.ts'
import { FakeHookContext, runFake } from './support/fake-hook-context.ts'

const ok = (stdout: string): { code: number, stdout: string, stderr: string } => ({ code: 0, stdout, stderr: '' })
const fails = (code: 1 | 2, message: string): { code: number, stdout: string, stderr: string } => ({ code, stdout: '', stderr: `ERROR ${message}\n` })

const ports = suite('open-port and close-port')

ports('port forms: N, N/proto, from-to/proto, icmp, any case', () => {
  assert.equal(parsePortRange('80'), { protocol: 'tcp', from: 80, to: 80 })
  assert.equal(parsePortRange('80/tcp'), { protocol: 'tcp', from: 80, to: 80 })
  assert.equal(parsePortRange('53/UDP'), { protocol: 'udp', from: 53, to: 53 })
  assert.equal(parsePortRange('1000-2000/udp'), { protocol: 'udp', from: 1000, to: 2000 })
  assert.equal(parsePortRange('8000-8080'), { protocol: 'tcp', from: 8000, to: 8080 })
  assert.equal(parsePortRange('icmp'), { protocol: 'icmp' })
  assert.equal(parsePortRange('ICMP'), { protocol: 'icmp' })
  assert.equal(parsePortRange('0'), { protocol: 'tcp', from: 0, to: 0 })
})

ports('open-port buffers the change for all endpoints until the hook succeeds', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'open-port', ['80']), ok(''))
  assert.equal(await runFake(context, 'open-port', ['1000-2000/udp']), ok(''))
  assert.equal(await runFake(context, 'open-port', ['icmp']), ok(''))
  assert.equal(context.buffered, [
    { kind: 'open-port', port: { protocol: 'tcp', from: 80, to: 80 }, endpoints: ['*'] },
    { kind: 'open-port', port: { protocol: 'udp', from: 1000, to: 2000 }, endpoints: ['*'] },
    { kind: 'open-port', port: { protocol: 'icmp' }, endpoints: ['*'] }
  ])
  assert.equal(context.immediate, [])
  // Juju 3 shows the hook its own pending opens (runner/context/ports.go,
  // mergeWithPendingChanges; ops' test_hookcmds test_ports_open_close_cycle against Juju).
  assert.equal(await runFake(context, 'opened-ports'), ok('icmp\n80/tcp\n1000-2000/udp\n'))
  context.flush()
  assert.equal(await runFake(context, 'opened-ports'), ok('icmp\n80/tcp\n1000-2000/udp\n'))
})

ports('--endpoints limits the change to the listed endpoints', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'open-port', ['443/tcp', '--endpoints', 'website, admin']), ok(''))
  assert.equal(await runFake(context, 'close-port', ['--endpoints=admin', '443']), ok(''))
  assert.equal(context.buffered, [
    { kind: 'open-port', port: { protocol: 'tcp', from: 443, to: 443 }, endpoints: ['website', 'admin'] },
    { kind: 'close-port', port: { protocol: 'tcp', from: 443, to: 443 }, endpoints: ['admin'] }
  ])
  context.flush()
  assert.equal(await runFake(context, 'opened-ports', ['--endpoints']), ok('443/tcp (website)\n'))
})

ports('close-port buffers a close; a failed hook discards it', async () => {
  const context = new FakeHookContext({ ports: [{ protocol: 'tcp', from: 80, to: 80, endpoints: ['*'] }] })
  assert.equal(await runFake(context, 'close-port', ['80/TCP']), ok(''))
  assert.equal(context.buffered, [{ kind: 'close-port', port: { protocol: 'tcp', from: 80, to: 80 }, endpoints: ['*'] }])
  assert.equal(await runFake(context, 'opened-ports'), ok(''), 'the pending close is seen by its own hook')
  context.discard()
  assert.equal(await runFake(context, 'opened-ports'), ok('80/tcp\n'))
  await runFake(context, 'close-port', ['80'])
  context.flush()
  assert.equal(await runFake(context, 'opened-ports'), ok(''))
})

ports('--format is accepted with Juju\'s deprecation warning', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'open-port', ['--format', 'foo', '80']), { code: 0, stdout: '', stderr: '--format flag deprecated for command "open-port"' })
  assert.equal(await runFake(context, 'close-port', ['--format', 'foo', '80/TCP']), { code: 0, stdout: '', stderr: '--format flag deprecated for command "close-port"' })
})

ports('bad port forms are exit 2 and change nothing', async () => {
  const context = new FakeHookContext()
  const cases: Array<[string[], string]> = [
    [[], 'no port or range specified'],
    [['http'], 'invalid port "http": strconv.Atoi: parsing "http": invalid syntax'],
    [['80/sctp'], 'invalid protocol "sctp", expected "tcp", "udp", or "icmp"'],
    [['80/icmp'], 'protocol "icmp" doesn\'t support any ports; got "80"'],
    [['2000-1000/udp'], 'invalid port range 2000-1000/udp'],
    [['1-2-3'], 'invalid port range "1-2-3"'],
    [['a-80'], 'invalid port "a": strconv.Atoi: parsing "a": invalid syntax'],
    [['80-'], 'invalid port "": strconv.Atoi: parsing "": invalid syntax'],
    [['70000'], 'port range bounds must be between 0 and 65535, got 70000-70000'],
    [['80', '81'], 'unrecognized args: ["81"]'],
    [['--endpoints'], 'flag needs an argument: --endpoints']
  ]
  for (const [args, message] of cases) {
    assert.equal(await runFake(context, 'open-port', args), fails(2, message), args.join(' '))
    assert.equal(await runFake(context, 'close-port', args), fails(2, message), args.join(' '))
  }
  assert.equal(context.buffered, [])
})

// ---------------------------------------------------------------------------------

const opened = suite('opened-ports')

const withPorts = (): FakeHookContext => new FakeHookContext({
  ports: [
    { protocol: 'udp', from: 1000, to: 2000, endpoints: ['*'] },
    { protocol: 'tcp', from: 8080, to: 8080, endpoints: ['website', 'admin'] },
    { protocol: 'tcp', from: 80, to: 80, endpoints: ['*'] },
    { protocol: 'tcp', from: 8080, to: 8080, endpoints: ['metrics'] },
    { protocol: 'icmp', endpoints: ['*'] }
  ]
})

opened('lists each range once, sorted by protocol then port', async () => {
  assert.equal(await runFake(withPorts(), 'opened-ports'), ok('icmp\n80/tcp\n8080/tcp\n1000-2000/udp\n'))
  assert.equal(await runFake(withPorts(), 'opened-ports', ['--format', 'json']), ok('["icmp","80/tcp","8080/tcp","1000-2000/udp"]\n'))
  assert.equal(await runFake(withPorts(), 'opened-ports', ['--format', 'yaml']), ok('- icmp\n- 80/tcp\n- 8080/tcp\n- 1000-2000/udp\n'))
})

opened('--endpoints shows (*) or the sorted endpoints', async () => {
  assert.equal(await runFake(withPorts(), 'opened-ports', ['--endpoints']),
    ok('icmp (*)\n80/tcp (*)\n8080/tcp (admin, metrics, website)\n1000-2000/udp (*)\n'))
})

// Juju's opened-ports.go writes an empty []string: nothing in smart format, [] in json and yaml.
opened('nothing open: no output (smart), [] (json, yaml)', async () => {
  assert.equal(await runFake(new FakeHookContext(), 'opened-ports'), ok(''))
  assert.equal(await runFake(new FakeHookContext(), 'opened-ports', ['--format', 'yaml']), ok('[]\n'))
  assert.equal(await runFake(new FakeHookContext(), 'opened-ports', ['--format', 'json']), ok('[]\n'))
})

opened('arguments are exit 2', async () => {
  assert.equal(await runFake(withPorts(), 'opened-ports', ['80']), fails(2, 'unrecognized args: ["80"]'))
})

// ---------------------------------------------------------------------------------

const unitGet = suite('unit-get')

unitGet('prints the private or public address in every format', async () => {
  const context = new FakeHookContext({ addresses: { 'private-address': '10.1.2.3', 'public-address': 'blog.example.com' } })
  assert.equal(await runFake(context, 'unit-get', ['private-address']), ok('10.1.2.3\n'))
  assert.equal(await runFake(context, 'unit-get', ['public-address']), ok('blog.example.com\n'))
  assert.equal(await runFake(context, 'unit-get', ['public-address', '--format', 'yaml']), ok('blog.example.com\n'))
  assert.equal(await runFake(context, 'unit-get', ['--format=json', 'private-address']), ok('"10.1.2.3"\n'))
})

unitGet('anything else is exit 2', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'unit-get'), fails(2, 'no setting specified'))
  assert.equal(await runFake(context, 'unit-get', ['address']), fails(2, 'unknown setting "address"'))
  assert.equal(await runFake(context, 'unit-get', ['public-address', 'x']), fails(2, 'unrecognized args: ["x"]'))
})

// ---------------------------------------------------------------------------------

const networkGet = suite('network-get')

const dbNetwork: NetworkInfo = {
  bindAddresses: [{
    macAddress: '00:16:3e:aa:bb:cc',
    interfaceName: 'eth0',
    addresses: [{ hostname: '', value: '10.0.0.5', cidr: '10.0.0.0/24' }, { hostname: 'web.local', value: '10.0.0.6', cidr: '10.0.0.0/24' }]
  }],
  egressSubnets: ['10.0.0.5/32', '192.0.2.0/24'],
  ingressAddresses: ['192.0.2.10', '10.0.0.5']
}

const networked = (relation = false): FakeHookContext => new FakeHookContext({
  network: { db: dbNetwork, bare: { bindAddresses: [{ macAddress: '', interfaceName: 'lo', addresses: [] }], egressSubnets: [], ingressAddresses: [] }, none: { bindAddresses: [], egressSubnets: [], ingressAddresses: [] } },
  relations: [{ id: 4, endpoint: 'db', remoteApplication: 'mysql' }],
  ...(relation ? { relation: { id: 4, endpoint: 'db', remoteUnit: 'mysql/0', remoteApplication: 'mysql' } } : {})
})

networkGet('the whole structure: YAML in Juju\'s struct order with the legacy keys', async () => {
  const expected = [
    'bind-addresses:',
    '- mac-address: 00:16:3e:aa:bb:cc',
    '  interface-name: eth0',
    '  addresses:',
    '  - hostname: ""',
    '    value: 10.0.0.5',
    '    cidr: 10.0.0.0/24',
    '    address: 10.0.0.5',
    '  - hostname: web.local',
    '    value: 10.0.0.6',
    '    cidr: 10.0.0.0/24',
    '    address: 10.0.0.6',
    '  macaddress: 00:16:3e:aa:bb:cc',
    '  interfacename: eth0',
    'egress-subnets:',
    '- 10.0.0.5/32',
    '- 192.0.2.0/24',
    'ingress-addresses:',
    '- 192.0.2.10',
    '- 10.0.0.5',
    ''
  ].join('\n')
  assert.equal(await runFake(networked(), 'network-get', ['db']), ok(expected))
  assert.equal(await runFake(networked(), 'network-get', ['db', '--format', 'yaml']), ok(expected))
})

networkGet('the whole structure in json, without the legacy keys', async () => {
  assert.equal(await runFake(networked(), 'network-get', ['--format', 'json', 'db']), ok(
    '{"bind-addresses":[{"mac-address":"00:16:3e:aa:bb:cc","interface-name":"eth0","addresses":[' +
    '{"hostname":"","value":"10.0.0.5","cidr":"10.0.0.0/24"},{"hostname":"web.local","value":"10.0.0.6","cidr":"10.0.0.0/24"}]}],' +
    '"egress-subnets":["10.0.0.5/32","192.0.2.0/24"],"ingress-addresses":["192.0.2.10","10.0.0.5"]}\n'))
})

networkGet('one selector prints just its value', async () => {
  assert.equal(await runFake(networked(), 'network-get', ['db', '--ingress-address']), ok('192.0.2.10\n'))
  assert.equal(await runFake(networked(), 'network-get', ['db', '--bind-address']), ok('10.0.0.5\n'))
  assert.equal(await runFake(networked(), 'network-get', ['db', '--egress-subnets']), ok('10.0.0.5/32\n192.0.2.0/24\n'))
  assert.equal(await runFake(networked(), 'network-get', ['db', '--egress-subnets', '--format', 'json']), ok('["10.0.0.5/32","192.0.2.0/24"]\n'))
  assert.equal(await runFake(networked(), 'network-get', ['db', '--primary-address']), ok('10.0.0.5\n'))
})

networkGet('several selectors print a map of them', async () => {
  assert.equal(await runFake(networked(), 'network-get', ['db', '--ingress-address', '--bind-address', '--egress-subnets']),
    ok('bind-address: 10.0.0.5\negress-subnets:\n- 10.0.0.5/32\n- 192.0.2.0/24\ningress-address: 192.0.2.10\n'))
  assert.equal(await runFake(networked(), 'network-get', ['db', '--ingress-address', '--bind-address', '--format', 'json']),
    ok('{"bind-address":"10.0.0.5","ingress-address":"192.0.2.10"}\n'))
})

networkGet('-r or the hook\'s relation is passed to the context', async () => {
  const explicit = networked()
  await runFake(explicit, 'network-get', ['db', '-r', 'db:4'])
  const implicit = networked(true)
  await runFake(implicit, 'network-get', ['db'])
  const none = networked()
  await runFake(none, 'network-get', ['db'])
  assert.ok(explicit.calls.includes('networkInfo db 4'))
  assert.ok(implicit.calls.includes('networkInfo db 4'))
  assert.ok(none.calls.includes('networkInfo db -'))
})

networkGet('runtime errors are exit 1', async () => {
  assert.equal(await runFake(networked(), 'network-get', ['none']), fails(1, 'no network config found for binding "none"'))
  assert.equal(await runFake(networked(), 'network-get', ['unknown']), fails(1, 'no network config found for binding "unknown"'))
  assert.equal(await runFake(networked(), 'network-get', ['bare', '--bind-address']), fails(1, 'no addresses attached to space for binding "bare"'))
  assert.equal(await runFake(networked(), 'network-get', ['db', '--primary-address', '--bind-address']), fails(1, '--primary-address must be the only flag specified'))
})

networkGet('usage errors are exit 2', async () => {
  assert.equal(await runFake(networked(), 'network-get'), fails(2, 'no arguments specified'))
  assert.equal(await runFake(networked(), 'network-get', ['']), fails(2, 'no binding name specified'))
  assert.equal(await runFake(networked(), 'network-get', ['db', 'extra']), fails(2, 'unrecognized args: ["extra"]'))
  assert.equal(await runFake(networked(), 'network-get', ['db', '-r', 'db:9']), fails(2, 'invalid value "db:9" for flag -r: relation not found'))
  assert.equal(await runFake(networked(), 'network-get', ['db', '--ingress']), fails(2, 'flag provided but not defined: --ingress'))
})

// ---------------------------------------------------------------------------------

const storage = suite('storage-get, storage-list and storage-add')

const withStorage = (storageId?: string): FakeHookContext => new FakeHookContext({
  ...(storageId === undefined ? {} : { storageId, name: 'data-storage-attached' }),
  storage: {
    'data/0': { kind: 'filesystem', location: '/srv/data' },
    'data/1': { kind: 'filesystem', location: '/srv/data1' },
    'cache/0': { kind: 'block', location: '/dev/vdb' }
  }
})

storage('storage-get in a storage hook defaults to the hook\'s storage', async () => {
  const context = withStorage('data/0')
  assert.equal(await runFake(context, 'storage-get'), ok('kind: filesystem\nlocation: /srv/data\n'))
  assert.equal(await runFake(context, 'storage-get', ['location']), ok('/srv/data\n'))
  assert.equal(await runFake(context, 'storage-get', ['kind', '--format', 'json']), ok('"filesystem"\n'))
  assert.equal(await runFake(context, 'storage-get', ['--format', 'json']), ok('{"kind":"filesystem","location":"/srv/data"}\n'))
  assert.equal(await runFake(context, 'storage-get', ['--format', 'yaml']), ok('kind: filesystem\nlocation: /srv/data\n'))
})

storage('storage-get -s names any attached instance', async () => {
  assert.equal(await runFake(withStorage('data/0'), 'storage-get', ['-s', 'cache/0', 'kind']), ok('block\n'))
  assert.equal(await runFake(withStorage(), 'storage-get', ['-s=data/1', 'location']), ok('/srv/data1\n'))
})

storage('storage-get usage errors are exit 2', async () => {
  assert.equal(await runFake(withStorage(), 'storage-get'), fails(2, 'no storage instance specified'))
  assert.equal(await runFake(withStorage(), 'storage-get', ['-s', 'Data']), fails(2, 'invalid value "Data" for flag -s: invalid storage ID "Data"'))
  assert.equal(await runFake(withStorage(), 'storage-get', ['-s', 'logs/0']), fails(2, 'invalid value "logs/0" for flag -s: storage "logs/0" not found'))
  assert.equal(await runFake(withStorage('data/0'), 'storage-get', ['kind', 'location']), fails(2, 'unrecognized args: ["location"]'))
})

storage('storage-get with an unknown attribute is exit 1', async () => {
  assert.equal(await runFake(withStorage('data/0'), 'storage-get', ['size']), fails(1, 'invalid storage attribute "size"'))
})

storage('storage-list lists attached ids, optionally of one storage name', async () => {
  assert.equal(await runFake(withStorage(), 'storage-list'), ok('cache/0\ndata/0\ndata/1\n'))
  assert.equal(await runFake(withStorage(), 'storage-list', ['data']), ok('data/0\ndata/1\n'))
  assert.equal(await runFake(withStorage(), 'storage-list', ['data', '--format', 'json']), ok('["data/0","data/1"]\n'))
  assert.equal(await runFake(withStorage(), 'storage-list', ['--format', 'yaml', 'cache']), ok('- cache/0\n'))
  assert.equal(await runFake(withStorage(), 'storage-list', ['logs']), ok(''))
  assert.equal(await runFake(withStorage(), 'storage-list', ['logs', '--format', 'json']), ok('[]\n'))
  assert.equal(await runFake(withStorage(), 'storage-list', ['data', 'cache']), fails(2, 'unrecognized args: ["cache"]'))
})

// Juju's internal/worker/uniter/runner/jujuc/storage-add.go: NAME[=COUNT] only, at least one.
storage('storage-add asks for NAME[=COUNT] instances and prints nothing', async () => {
  const context = withStorage('data/0')
  assert.equal(await runFake(context, 'storage-add', ['data=2', 'cache']), ok(''))
  assert.equal(context.storageAdds, { data: 2, cache: 1 })
})

storage('storage-add usage errors are exit 2', async () => {
  assert.equal(await runFake(withStorage(), 'storage-add'), fails(2, 'storage add requires a storage directive'))
  assert.equal(await runFake(withStorage(), 'storage-add', ['data=1G']), fails(2, 'only count can be specified for "data"'))
  assert.equal(await runFake(withStorage(), 'storage-add', ['data=rootfs,2']), fails(2, 'only count can be specified for "data"'))
  assert.equal(await runFake(withStorage(), 'storage-add', ['data=0']), fails(2, 'cannot parse constraints for storage "data": cannot parse count: count must be greater than zero, got "0"'))
  assert.equal(await runFake(withStorage(), 'storage-add', ['data', 'data=2']), fails(2, 'storage "data" specified more than once'))
  assert.equal(await runFake(withStorage(), 'storage-add', ['=2']), fails(2, 'expected "name=constraints" or "name", got "=2"'))
})

// ---------------------------------------------------------------------------------

const reboot = suite('juju-reboot')

reboot('requests a reboot after the hook, buffered', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'juju-reboot'), ok(''))
  assert.is(context.reboot, 'after-hook')
  assert.equal(context.buffered, [{ kind: 'reboot', now: false }])
})

reboot('--now asks for an immediate reboot', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'juju-reboot', ['--now']), ok(''))
  assert.is(context.reboot, 'now')
})

reboot('refused in actions and juju exec commands (exit 1)', async () => {
  const action = new FakeHookContext({ action: { name: 'backup', id: '7', params: {} } })
  assert.equal(await runFake(action, 'juju-reboot'), fails(1, 'juju-reboot is not supported when running an action.'))
  const exec = new FakeHookContext({ kind: 'command', name: 'juju-exec' })
  assert.equal(await runFake(exec, 'juju-reboot', ['--now']), fails(1, 'juju-reboot is not supported when running an action.'))
  assert.is(action.reboot, 'none')
  assert.is(exec.reboot, 'none')
})

reboot('arguments are exit 2', async () => {
  assert.equal(await runFake(new FakeHookContext(), 'juju-reboot', ['now']), fails(2, 'unrecognized args: ["now"]'))
})

ports.run()
opened.run()
unitGet.run()
networkGet.run()
storage.run()
reboot.run()
