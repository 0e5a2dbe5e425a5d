/**
 * Several "hosts" on this one machine, for trying and testing cantrip across hosts: N
 * Linux network namespaces, each with an address of its own on one bridge, and an sshd
 * (Debian's openssh-server, installed when missing) listening in each. The bridge has no
 * address in this machine's own namespace, no route out and no NAT: the hosts reach each
 * other and nothing else, and nothing they send leaves the machine.
 *
 *   node --import tsx scripts/netns-hosts.ts up [--hosts 3] [--network 10.231.7.0/24] [--dir DIR]
 *   node --import tsx scripts/netns-hosts.ts down [--dir DIR]
 *
 * `up` prints the hosts (name, namespace, address) and the ssh key that reaches root on
 * each; run a command on a host with `ip netns exec <namespace> …`. `down` kills every
 * process it started (by pid), deletes the namespaces and the bridge and removes DIR.
 *
 * Namespaces share this machine's file system, so each host's sshd gives its sessions a
 * home of its own (`<dir>/<host>/home`, sshd's SetEnv): what the manual provider installs
 * under `~/.cantrip` on one host is apart from every other's, as on real hosts.
 *
 * Root only (namespaces, veth pairs, sshd). Tests use the same functions (`createHosts`).
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

export interface NetnsHost {
  /** `h1`, `h2`, … */
  readonly name: string
  readonly namespace: string
  readonly address: string
  /** The home directory of root's ssh sessions on this host. */
  readonly home: string
  /** This host's end of its link, on the bridge side (cut it to isolate the host). */
  readonly veth: string
}

export interface NetnsHosts {
  readonly dir: string
  readonly bridge: string
  readonly hosts: readonly NetnsHost[]
  /** The private key that logs in as root on every host. */
  readonly keyFile: string
  /** sshd's pids, one per host. */
  readonly pids: readonly number[]
}

const stateFileName = 'hosts.json'
const hostsMax = 20

/** Why this machine cannot run the hosts, or undefined when it can. */
export function netnsUnavailable (): string | undefined {
  if (process.getuid?.() !== 0) return `needs root for network namespaces (running as uid ${process.getuid?.() ?? 'unknown'})`
  try {
    run('ip', ['netns', 'list'])
  } catch (error) {
    return `"ip netns" does not work here: ${firstLine(error)}`
  }
  return undefined
}

/** Debian's openssh-server, installed once when sshd is missing (scripts/ensure-sshd.sh, which starts no service). */
export function ensureSshd (): string {
  const sshd = '/usr/sbin/sshd'
  if (!existsSync(sshd)) run('bash', [join(dirname(fileURLToPath(import.meta.url)), 'ensure-sshd.sh')])
  if (!existsSync(sshd)) throw new Error(`netns hosts: expected ${sshd} after installing openssh-server, got none`)
  // sshd's privilege separation directory.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 })
  return sshd
}

/** Makes `count` hosts under `dir` in `network` (a /24: host i is .(10 + i)). */
export function createHosts (options: { count: number, dir: string, network?: string, prefix?: string }): NetnsHosts {
  const count = options.count
  if (!Number.isSafeInteger(count) || count < 1 || count > hostsMax) throw new Error(`netns hosts: expected --hosts from 1 to ${hostsMax}, got ${count}`)
  const network = options.network ?? '10.231.7.0/24'
  const match = /^(\d{1,3}\.\d{1,3}\.\d{1,3})\.0\/24$/.exec(network)
  if (match === null) throw new Error(`netns hosts: expected --network as A.B.C.0/24, got ${network}`)
  const unavailable = netnsUnavailable()
  if (unavailable !== undefined) throw new Error(`netns hosts: ${unavailable}`)
  const sshd = ensureSshd()
  const dir = resolve(options.dir)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  // Names unique to this run (its pid), so two runs on one machine never meet.
  const prefix = options.prefix ?? `cn${process.pid.toString(36)}`
  const bridge = `${prefix}br`.slice(0, 15)
  const state: NetnsHosts = { dir, bridge, hosts: [], keyFile: join(dir, 'id_ed25519'), pids: [] }
  const hosts: NetnsHost[] = []
  const pids: number[] = []
  const save = (): void => { writeFileSync(join(dir, stateFileName), JSON.stringify({ ...state, hosts, pids }, null, 2) + '\n') }
  save()
  try {
    run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'cantrip-netns-hosts', '-f', state.keyFile])
    writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${state.keyFile}.pub`), { mode: 0o600 })
    run('ip', ['link', 'add', bridge, 'type', 'bridge'])
    run('ip', ['link', 'set', bridge, 'up'])
    save()
    for (let i = 1; i <= count; i++) {
      const host: NetnsHost = {
        name: `h${i}`,
        namespace: `${prefix}-h${i}`,
        address: `${match[1]}.${10 + i}`,
        home: join(dir, `h${i}`, 'home'),
        veth: `${prefix}v${i}`.slice(0, 15)
      }
      hosts.push(host)
      save()
      plumb(host, bridge)
      pids.push(startSshd(sshd, host, dir))
      save()
    }
  } catch (error) {
    destroyHosts(dir)
    throw error
  }
  return { ...state, hosts, pids }
}

function plumb (host: NetnsHost, bridge: string): void {
  run('ip', ['netns', 'add', host.namespace])
  run('ip', ['link', 'add', host.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.namespace])
  run('ip', ['link', 'set', host.veth, 'master', bridge, 'up'])
  run('ip', ['-n', host.namespace, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0'])
  run('ip', ['-n', host.namespace, 'link', 'set', 'eth0', 'up'])
  run('ip', ['-n', host.namespace, 'link', 'set', 'lo', 'up'])
}

/** sshd in the host's namespace, in the foreground of its own process group, its pid recorded. */
function startSshd (sshd: string, host: NetnsHost, dir: string): number {
  const hostDir = join(dir, host.name)
  mkdirSync(host.home, { recursive: true, mode: 0o700 })
  const hostKey = join(hostDir, 'ssh_host_ed25519_key')
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey])
  const config = join(hostDir, 'sshd_config')
  writeFileSync(config, [
    `ListenAddress ${host.address}`,
    'Port 22',
    `HostKey ${hostKey}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    'PermitRootLogin prohibit-password',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    // The key and config live in a test directory whose modes sshd would otherwise refuse.
    'StrictModes no',
    `PidFile ${join(hostDir, 'sshd.pid')}`,
    // Each host's sessions have a home of their own (the namespaces share one file system).
    `SetEnv HOME=${host.home}`,
    'MaxStartups 100:30:200',
    'MaxSessions 50',
    ''
  ].join('\n'))
  const child = spawn('ip', ['netns', 'exec', host.namespace, sshd, '-D', '-e', '-f', config], {
    detached: true,
    stdio: ['ignore', 'ignore', 'ignore']
  })
  child.unref()
  if (child.pid === undefined) throw new Error(`netns hosts: cannot start sshd on ${host.name}`)
  waitListening(host)
  return child.pid
}

/** Until sshd answers on port 22 of the host (bounded: 10 s). */
function waitListening (host: NetnsHost): void {
  const until = Date.now() + 10_000
  while (Date.now() < until) {
    const out = run('ip', ['netns', 'exec', host.namespace, 'ss', '-Hltn', `sport = :22`])
    if (out.includes(`${host.address}:22`)) return
    execFileSync('sleep', ['0.1'])
  }
  throw new Error(`netns hosts: sshd on ${host.name} (${host.address}) did not listen within 10 s`)
}

/** Cuts a host's link to the bridge (the host keeps running, reaching nobody). */
export function cutLink (host: NetnsHost): void {
  run('ip', ['link', 'set', host.veth, 'down'])
}

export function healLink (host: NetnsHost): void {
  run('ip', ['link', 'set', host.veth, 'up'])
}

/**
 * Every process whose network namespace is the host's (`ip netns pids`): what a host
 * runs, to kill -9 all of it as a power cut would.
 */
export function hostPids (host: NetnsHost): number[] {
  return run('ip', ['netns', 'pids', host.namespace]).split('\n').map(Number).filter(pid => Number.isSafeInteger(pid) && pid > 1)
}

/** Kills every process in `dir`'s hosts (sshd by its pid, then whatever runs in each namespace), deletes the namespaces and the bridge, removes `dir`. */
export function destroyHosts (dir: string): void {
  const file = join(dir, stateFileName)
  if (!existsSync(file)) return
  const state = JSON.parse(readFileSync(file, 'utf8')) as NetnsHosts
  for (const pid of state.pids) kill(pid)
  for (const host of state.hosts) {
    try {
      for (const pid of hostPids(host)) kill(pid)
    } catch { /* no namespace */ }
    try { run('ip', ['netns', 'del', host.namespace]) } catch { /* gone */ }
  }
  try { run('ip', ['link', 'del', state.bridge]) } catch { /* gone */ }
  rmSync(dir, { recursive: true, force: true })
}

function kill (pid: number): void {
  try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
}

function run (file: string, args: readonly string[]): string {
  return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 })
}

function firstLine (error: unknown): string {
  const stderr = (error as { stderr?: string | Buffer }).stderr
  const text = stderr !== undefined && String(stderr).trim() !== '' ? String(stderr) : error instanceof Error ? error.message : String(error)
  return text.trim().split('\n')[0] ?? ''
}

function main (): void {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { hosts: { type: 'string' }, network: { type: 'string' }, dir: { type: 'string' } }
  })
  const dir = values.dir ?? join(process.cwd(), '.netns-hosts')
  const [command] = positionals
  if (command === 'up') {
    const hosts = createHosts({ count: Number(values.hosts ?? '3'), dir, ...(values.network === undefined ? {} : { network: values.network }) })
    for (const host of hosts.hosts) process.stdout.write(`${host.name} ${host.namespace} ${host.address}\n`)
    process.stdout.write(`ssh key: ${hosts.keyFile} (root@ADDRESS); run on a host: ip netns exec NAMESPACE COMMAND; remove all: ${process.argv[1]} down --dir ${dir}\n`)
  } else if (command === 'down') {
    destroyHosts(dir)
  } else {
    process.stderr.write('usage: netns-hosts.ts up [--hosts N] [--network A.B.C.0/24] [--dir DIR] | down [--dir DIR]\n')
    process.exit(2)
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) main()
