/**
 * `cantripd --advertise HOST`: every TCP listen address is announced at HOST with its own
 * port (an agent bound to 0.0.0.0 or behind NAT hands out an address others can dial,
 * never 0.0.0.0 or its loopback), and a bad host is one line.
 */
import { multiaddr } from '@multiformats/multiaddr'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { advertiseAs, hostProtocol } from '../agent/mesh/advertised-addresses.ts'

test('each listen port at the advertised host, once', () => {
  const listening = ['/ip4/0.0.0.0/tcp/17070', '/ip4/127.0.0.1/tcp/17070', '/ip4/10.1.1.1/tcp/17070', '/ip6/::1/tcp/41001', '/ip4/127.0.0.1/udp/9'].map(a => multiaddr(a))
  assert.equal(advertiseAs('10.0.0.5')(listening).map(String), ['/ip4/10.0.0.5/tcp/17070', '/ip4/10.0.0.5/tcp/41001'])
  assert.equal(advertiseAs('fd00::7')([multiaddr('/ip4/0.0.0.0/tcp/1')]).map(String), ['/ip6/fd00::7/tcp/1'])
  assert.equal(advertiseAs('ctl.example.net')([multiaddr('/ip4/0.0.0.0/tcp/2')]).map(String), ['/dns/ctl.example.net/tcp/2'])
})

test('a host that is neither an address nor a name: one line', () => {
  assert.is(hostProtocol('cantripd', '10.0.0.5'), 'ip4')
  assert.throws(() => hostProtocol('cantripd', '10.0.0.500'), (e: Error) => e.message === 'cantripd: expected an IPv4 or IPv6 address or a host name, got "10.0.0.500"')
  assert.throws(() => hostProtocol('cantripd', 'bad host'), (e: Error) => e.message === 'cantripd: expected an IPv4 or IPv6 address or a host name, got "bad host"')
})

test.run()
