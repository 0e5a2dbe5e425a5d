/**
 * The hook tool transport end to end: the C client, run through tool-name symlinks from
 * bash the way a hook runs it, against a real `ToolServer` on a unix socket; plus the
 * server's defences against peers that break the protocol, its per-context lock, the
 * bounds of runtime/limits.ts, and the client build.
 */
import { spawn } from 'node:child_process'
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createConnection, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { ensureToolClient, hookToolNames, installToolLinks, toolClientCacheDir } from '../agent/hook-tools/client/build-client.ts'
import { callBodyBytesMax, encodeCall, encodeFrame, frameKinds, FrameError } from '../agent/hook-tools/transport/frames.ts'
import { ToolContexts } from '../agent/hook-tools/transport/tool-contexts.ts'
import { bindDirPrefix, callTool, ToolServer, type ToolCall, type ToolHandler, type ToolReply } from '../agent/hook-tools/transport/tool-server.ts'
import { limits } from '../runtime/limits.ts'
import { createMemoryLogger, type LogRecord } from '../runtime/logger.ts'
import { bundledChild } from './support/bundled-child.ts'

const test = suite('hook tool transport')
const repoRoot = fileURLToPath(new URL('..', import.meta.url))
const root = realpathSync(mkdtempSync(join(tmpdir(), 'cantrip-tools-')))
const toolsDir = join(root, 'tools')
const socketPath = join(root, 'agent.socket')
const contextId = 'web/0-install-1234'
const logRecords: LogRecord[] = []
const logger = createMemoryLogger('agent.hook-tools', logRecords)
const utf8 = new TextEncoder()

/** Every call the main server's handler saw, in order. */
const calls: ToolCall[] = []
let behave: ToolHandler = echo
let server: ToolServer
let clientPath: string

async function echo (call: ToolCall): Promise<ToolReply> {
  return { code: 0, stdout: JSON.stringify(call.args), stderr: '' }
}

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

/**
 * Marks a promise the test awaits later as handled, so that if the test fails before
 * awaiting it, its rejection fails only this test instead of ending the run.
 */
function inFlight<T> (promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}

/** Waits until `condition` holds, at most `withinMs`. */
async function waitFor (what: string, condition: () => boolean, withinMs = 5_000): Promise<void> {
  const deadline = performance.now() + withinMs
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${withinMs} ms waiting for ${what}`)
    await sleep(5)
  }
}

/** Resolves with `promise`, or rejects after `withinMs`. */
async function within<T> (what: string, promise: Promise<T>, withinMs = 5_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`timed out after ${withinMs} ms waiting for ${what}`)) }, withinMs)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

interface Ran { code: number | null, stdout: Buffer, stderr: Buffer }

/** Runs a program with a bounded wait; stdin is `input`, or empty. */
function run (command: string, args: readonly string[], options: { env?: Record<string, string | undefined>, cwd?: string, input?: Uint8Array, timeoutMs?: number } = {}): Promise<Ran> {
  const env: Record<string, string> = {}
  const merged = { ...hookEnv(), ...options.env }
  for (const [key, value] of Object.entries(merged)) if (value !== undefined) env[key] = value
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd: options.cwd ?? root, stdio: ['pipe', 'pipe', 'pipe'] })
    const stdout: Buffer[] = []
    const stderr: Buffer[] = []
    const timeoutMs = options.timeoutMs ?? 10_000
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${command} ${args.join(' ').slice(0, 200)}: no exit within ${timeoutMs} ms`))
    }, timeoutMs)
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
    child.stdin.on('error', () => { /* the child need not read its stdin */ })
    child.stdin.end(options.input ?? new Uint8Array(0))
    child.on('error', error => { clearTimeout(timer); reject(error) })
    child.on('close', code => {
      clearTimeout(timer)
      resolve({ code, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr) })
    })
  })
}

function hookEnv (): Record<string, string | undefined> {
  return {
    PATH: `${toolsDir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
    LANG: 'C.UTF-8',
    JUJU_CONTEXT_ID: contextId,
    JUJU_AGENT_SOCKET_ADDRESS: socketPath,
    JUJU_AGENT_SOCKET_NETWORK: 'unix'
  }
}

const bash = (script: string, options: Parameters<typeof run>[2] = {}): Promise<Ran> => run('/bin/bash', ['--norc', '--noprofile', '-c', script], options)

/** Sends raw bytes on a fresh connection; resolves with what came back once the server closes it. */
function raw (path: string, bytes: Uint8Array, options: { end?: boolean, withinMs?: number } = {}): Promise<Buffer> {
  return within('the server to close a raw connection', new Promise<Buffer>((resolve, reject) => {
    const socket = createConnection(path)
    const received: Buffer[] = []
    socket.on('connect', () => {
      socket.write(bytes)
      if (options.end === true) socket.end()
    })
    socket.on('data', (chunk: Buffer) => received.push(chunk))
    // The server may hang up while the bytes are still going out.
    socket.on('error', error => { if (!['ECONNRESET', 'EPIPE'].includes((error as NodeJS.ErrnoException).code ?? '')) reject(error) })
    socket.on('close', () => { resolve(Buffer.concat(received)) })
  }), options.withinMs ?? 5_000)
}

/** A CALL body built by hand, so tests can break it in ways the encoder refuses to. */
function callBody (fields: Array<number | string | Uint8Array | ['u8', number]>): Uint8Array {
  const parts: Uint8Array[] = []
  for (const field of fields) {
    if (typeof field === 'number') {
      const part = new Uint8Array(4)
      new DataView(part.buffer).setUint32(0, field, true)
      parts.push(part)
    } else if (Array.isArray(field)) {
      parts.push(Uint8Array.of(field[1]))
    } else {
      const bytes = typeof field === 'string' ? utf8.encode(field) : field
      const length = new Uint8Array(4)
      new DataView(length.buffer).setUint32(0, bytes.length, true)
      parts.push(length, bytes)
    }
  }
  return Buffer.concat(parts)
}

const dropLines = (): string[] => logRecords.filter(r => r.message.startsWith('hook tool connection dropped')).map(r => r.message)

test.before(async () => {
  clientPath = await ensureToolClient()
  await installToolLinks(toolsDir, [...hookToolNames, 'slow-get'])
  server = await ToolServer.listen(socketPath, async call => {
    calls.push(call)
    return await behave(call)
  }, { logger })
  server.contexts.open(contextId)
})

test.before.each(() => {
  calls.length = 0
  logRecords.length = 0
  behave = echo
})

test.after(async () => {
  try {
    await server?.close()
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test('every hook tool name is a symlink to the one client binary', () => {
  assert.equal(hookToolNames.length, 40, "§5.3 plus goal-state, credential-get, resource-get, relation-model-get and the eight secret-* tools")
  for (const name of hookToolNames) {
    assert.ok(lstatSync(join(toolsDir, name)).isSymbolicLink(), name)
    assert.is(readlinkSync(join(toolsDir, name)), clientPath)
  }
})

test('installing the links again replaces them, and a name with a slash is refused', async () => {
  await installToolLinks(toolsDir, ['config-get'], '/bin/true')
  assert.is(readlinkSync(join(toolsDir, 'config-get')), '/bin/true')
  await installToolLinks(toolsDir, ['config-get'])
  assert.is(readlinkSync(join(toolsDir, 'config-get')), clientPath)
  assert.equal(readdirSync(toolsDir).filter(name => name.includes('.tmp-')), [])
  try {
    await installToolLinks(toolsDir, ['../evil'], clientPath)
    assert.unreachable('a name with a slash was installed')
  } catch (error) {
    assert.is((error as Error).name, 'ToolClientBuildError')
  }
})

test('arguments with spaces, quotes, unicode and empty ones arrive intact, with the tool name and cwd', async () => {
  const cwd = join(root, 'charm dir ✓')
  mkdirSync(cwd, { recursive: true })
  const ran = await bash(`relation-get -r db:3 'a b' "it's" 'say "hi"' 'ünïcødé ✓ 日本' '' '$HOME' 'back\\slash' $'tab\\there' $'new\\nline'`, { cwd })
  assert.is(ran.stderr.toString(), '')
  assert.is(ran.code, 0)
  assert.is(calls.length, 1)
  assert.equal(calls[0], {
    contextId,
    cwd,
    tool: 'relation-get',
    args: ['-r', 'db:3', 'a b', "it's", 'say "hi"', 'ünïcødé ✓ 日本', '', '$HOME', 'back\\slash', 'tab\there', 'new\nline']
  })
  assert.is(ran.stdout.toString(), JSON.stringify(calls[0]!.args))
})

test('exit codes 0, 1 and 2 propagate to the hook', async () => {
  behave = async call => ({ code: Number(call.args[0]) as 0 | 1 | 2, stdout: '', stderr: '' })
  const ran = await bash('config-get 0; echo "0:$?"; config-get 1; echo "1:$?"; config-get 2; echo "2:$?"')
  assert.is(ran.stdout.toString(), '0:0\n1:1\n2:2\n')
})

test('stdout and stderr bytes arrive exactly: binary, no trailing newline', async () => {
  const everyByte = Uint8Array.from({ length: 256 }, (_, i) => i)
  behave = async () => ({ code: 1, stdout: everyByte, stderr: 'warning: no newline' })
  const ran = await run(join(toolsDir, 'unit-get'), ['private-address'])
  assert.is(ran.code, 1)
  assert.ok(ran.stdout.equals(Buffer.from(everyByte)), 'stdout is every byte value, in order')
  assert.is(ran.stderr.toString(), 'warning: no newline')

  behave = async () => ({ code: 0, stdout: '', stderr: '' })
  const empty = await run(join(toolsDir, 'is-leader'), [])
  assert.equal([empty.code, empty.stdout.length, empty.stderr.length], [0, 0, 0])
})

/** relation-set asks for stdin when given `--file -`, then echoes what it got. */
async function stdinEcho (call: ToolCall): Promise<ToolReply> {
  if (call.args.includes('-') && call.stdin === undefined) return { needsStdin: true }
  return { code: 0, stdout: call.stdin ?? new Uint8Array(0), stderr: `stdin=${call.stdin === undefined ? 'none' : call.stdin.length}` }
}

test('needs-stdin round trip: echo data | relation-set --file -', async () => {
  behave = stdinEcho
  const ran = await bash('echo data | relation-set --file -')
  assert.is(ran.code, 0)
  assert.is(ran.stdout.toString(), 'data\n')
  assert.is(ran.stderr.toString(), 'stdin=5')
  assert.is(calls.length, 2)
  assert.is(calls[0]!.stdin, undefined)
  assert.is(Buffer.from(calls[1]!.stdin!).toString(), 'data\n')
  assert.equal(calls[1]!.args, ['--file', '-'])

  // Without -, the handler never asks and stdin is not read (nor sent).
  calls.length = 0
  const noAsk = await bash('echo ignored | relation-set k=v')
  assert.is(noAsk.stderr.toString(), 'stdin=none')
  assert.is(calls.length, 1)

  // Binary stdin (NUL bytes included), and an empty one.
  calls.length = 0
  const binary = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256)
  const viaPipe = await run(join(toolsDir, 'relation-set'), ['--file', '-'], { input: binary })
  assert.ok(viaPipe.stdout.equals(Buffer.from(binary)), 'binary stdin comes back byte for byte')
  const empty = await bash('relation-set --file - < /dev/null')
  assert.is(empty.code, 0)
  assert.is(empty.stderr.toString(), 'stdin=0')
  // A closed stdin reads as empty (and the agent socket does not end up as fd 0).
  const closed = await bash('relation-set --file - <&-')
  assert.equal([closed.code, closed.stderr.toString()], [0, 'stdin=0'])
})

test('stdin is bounded by hookToolStdinBytesMax: at the limit it passes, over it the client refuses', async () => {
  behave = stdinEcho
  const max = limits.hookToolStdinBytesMax
  const atLimit = await bash(`head -c ${max} /dev/zero | relation-set --file - | wc -c`)
  assert.is(atLimit.stdout.toString().trim(), String(max))
  assert.is(atLimit.stderr.toString(), `stdin=${max}`)
  calls.length = 0
  const over = await bash(`head -c ${max + 1} /dev/zero | relation-set --file -`)
  assert.is(over.code, 1)
  assert.is(over.stderr.toString(), `ERROR stdin too large: the limit is ${max} bytes\n`)
  assert.is(calls.length, 1, 'only the first call, which asked for stdin, reached the handler')
})

test('an unknown or forged context id is refused without calling the handler', async () => {
  for (const id of ['web/0-install-9999', 'forged "quoted" id', contextId + ' ']) {
    const ran = await bash('config-get; echo "rc=$?"', { env: { JUJU_CONTEXT_ID: id } })
    assert.is(ran.stdout.toString(), 'rc=1\n')
    assert.is(ran.stderr.toString(), `ERROR invalid context id ${JSON.stringify(id)}\n`)
  }
  assert.is(calls.length, 0)
  assert.ok(logRecords.some(r => r.message === 'hook tool call refused: invalid context id "web/0-install-9999"'))
})

test('a closed context is refused; closing waits for its running call and refuses the queued ones', async () => {
  const id = 'web/0-config-changed-1'
  server.contexts.open(id)
  const ok = await bash('config-get', { env: { JUJU_CONTEXT_ID: id } })
  assert.is(ok.code, 0)

  let release: () => void = () => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  behave = async call => {
    if (call.args[0] === 'first') await gate
    return { code: 0, stdout: call.args[0] ?? '', stderr: '' }
  }
  const request = { contextId: id, cwd: root, tool: 'config-get' }
  try {
    const first = inFlight(callTool(socketPath, { ...request, args: ['first'] }, { timeoutMs: 5_000 }))
    await waitFor('the first call to start', () => calls.some(c => c.args[0] === 'first'))
    const queued = inFlight(callTool(socketPath, { ...request, args: ['queued'] }, { timeoutMs: 5_000 }))
    await waitFor('the second call to queue', () => server.contexts.waiting(id) === 1)
    let closed = false
    const closing = server.contexts.close(id).then(() => { closed = true })
    const refused = await queued
    assert.is(refused.code, 1)
    assert.is(Buffer.from(refused.stderr).toString(), `ERROR invalid context id "${id}"\n`)
    await sleep(20)
    assert.not.ok(closed, 'close waits while the first call runs')
    release()
    assert.is(Buffer.from((await first).stdout).toString(), 'first')
    await within('close to resolve', closing)
  } finally {
    release()
    await server.contexts.close(id)
  }
  assert.not.ok(calls.some(c => c.args[0] === 'queued'), 'the queued call never reached the handler')

  const after = await bash('config-get', { env: { JUJU_CONTEXT_ID: id } })
  assert.is(after.code, 1)
  assert.is(after.stderr.toString(), `ERROR invalid context id "${id}"\n`)
})

test('outside a hook context the client fails with exit 1 and says which variable is missing', async () => {
  const missingContext = await bash('config-get', { env: { JUJU_CONTEXT_ID: undefined } })
  assert.equal([missingContext.code, missingContext.stderr.toString()], [1, 'ERROR JUJU_CONTEXT_ID not set\n'])
  const missingSocket = await bash('config-get', { env: { JUJU_AGENT_SOCKET_ADDRESS: undefined } })
  assert.equal([missingSocket.code, missingSocket.stderr.toString()], [1, 'ERROR JUJU_AGENT_SOCKET_ADDRESS not set\n'])
  const tcp = await bash('config-get', { env: { JUJU_AGENT_SOCKET_NETWORK: 'tcp' } })
  assert.equal([tcp.code, tcp.stderr.toString()], [1, 'ERROR JUJU_AGENT_SOCKET_NETWORK "tcp" is not supported; expected "unix"\n'])
  const noNetwork = await bash('config-get', { env: { JUJU_AGENT_SOCKET_NETWORK: undefined } })
  assert.is(noNetwork.code, 0, 'the network defaults to unix')
  assert.is(calls.length, 1)
})

test('no agent at the socket path: cannot connect, exit 1', async () => {
  const missing = join(root, 'nobody.socket')
  const ran = await bash('config-get', { env: { JUJU_AGENT_SOCKET_ADDRESS: missing } })
  assert.equal([ran.code, ran.stderr.toString()], [1, `ERROR cannot connect to the unit agent at ${missing}: No such file or directory\n`])

  const stale = join(root, 'stale.socket')
  await leaveStaleSocket(stale)
  const refused = await bash('config-get', { env: { JUJU_AGENT_SOCKET_ADDRESS: stale } })
  assert.equal([refused.code, refused.stderr.toString()], [1, `ERROR cannot connect to the unit agent at ${stale}: Connection refused\n`])
})

test('the agent going away mid-call ends the client with exit 1, not a hang', async () => {
  // A peer that reads the request and hangs up.
  const rude = join(root, 'rude.socket')
  const rudeServer = createServer(socket => { socket.once('data', () => { socket.destroy() }) })
  await new Promise<void>(resolve => { rudeServer.listen(rude, resolve) })
  try {
    const ran = await bash('relation-get', { env: { JUJU_AGENT_SOCKET_ADDRESS: rude } })
    assert.equal([ran.code, ran.stderr.toString()], [1, `ERROR connection to the unit agent at ${rude} closed before a reply\n`])
  } finally {
    await new Promise(resolve => { rudeServer.close(resolve) })
  }

  // A real agent process killed while the handler runs.
  const agentSocket = join(root, 'doomed.socket')
  const script = join(root, 'doomed-agent.mts')
  writeFileSync(script, [
    `import { ToolServer } from ${JSON.stringify(join(repoRoot, 'agent/hook-tools/transport/tool-server.ts'))}`,
    `const server = await ToolServer.listen(${JSON.stringify(agentSocket)}, async () => { process.stdout.write('called\\n'); return await new Promise(() => {}) })`,
    `server.contexts.open(${JSON.stringify(contextId)})`,
    "process.stdout.write('ready\\n')",
    'setInterval(() => {}, 1000)'
  ].join('\n'))
  const agent = spawn(process.execPath, [bundledChild(script)], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    let output = ''
    agent.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
    await waitFor('the agent process to listen', () => output.includes('ready'), 15_000)
    const client = inFlight(bash('relation-get', { env: { JUJU_AGENT_SOCKET_ADDRESS: agentSocket } }))
    await waitFor('the tool call to reach the agent', () => output.includes('called'))
    agent.kill('SIGKILL')
    const ran = await client
    assert.equal([ran.code, ran.stderr.toString()], [1, `ERROR connection to the unit agent at ${agentSocket} closed before a reply\n`])
  } finally {
    agent.kill('SIGKILL')
  }
})

test('closing the server disconnects a client whose call is running', async () => {
  const path = join(root, 'closing.socket')
  let second: ToolServer | undefined
  second = await ToolServer.listen(path, async () => {
    await second!.close()
    return { code: 0, stdout: 'too late', stderr: '' }
  }, { logger })
  second.contexts.open(contextId)
  const ran = await bash('config-get', { env: { JUJU_AGENT_SOCKET_ADDRESS: path } })
  assert.equal([ran.code, ran.stdout.toString(), ran.stderr.toString()], [1, '', `ERROR connection to the unit agent at ${path} closed before a reply\n`])
  await within('the server to finish closing', second.close())
  assert.throws(() => statSync(path), /ENOENT/, 'close removed the socket file')
})

test('garbage, oversized, foreign and malformed frames are dropped and logged; the server carries on', async () => {
  const header = (kind: number, length: number, version = 1, reserved = 0): Uint8Array => {
    const bytes = encodeFrame(kind, new Uint8Array(0))
    bytes[4] = version
    new DataView(bytes.buffer).setUint16(6, reserved, true)
    new DataView(bytes.buffer).setUint32(8, length, true)
    return bytes
  }
  const wellFormed = (args: Array<number | string | Uint8Array | ['u8', number]>): Uint8Array => encodeFrame(frameKinds.call, callBody(args))
  const cases: Array<[string, Uint8Array, RegExp]> = [
    ['http', utf8.encode('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), /bad magic 47 45 54 20/],
    ['length 2^32-1', header(frameKinds.call, 0xffff_ffff), /body of 4294967295 bytes, more than/],
    ['one byte over the largest call', header(frameKinds.call, callBodyBytesMax + 1), new RegExp(`body of ${callBodyBytesMax + 1} bytes`)],
    ['a RESULT sent to the server', header(frameKinds.result, 0), /unexpected kind 2/],
    ['version 9', header(frameKinds.call, 0, 9), /version 9, expected 1/],
    ['reserved bits set', header(frameKinds.call, 0, 1, 7), /reserved field 7/],
    ['empty body', header(frameKinds.call, 0), /context id length needs 4 bytes/],
    ['string longer than the body', wellFormed([0xffff_fff0]), /context id needs 4294967280 bytes/],
    ['NUL inside an argument', wellFormed([contextId, root, 'config-get', 1, 'a\0b', ['u8', 0]]), /argument 1 contains a NUL byte/],
    ['argument count over hookToolArgsCountMax', wellFormed([contextId, root, 'config-get', limits.hookToolArgsCountMax + 1]), /65537 arguments, more than hookToolArgsCountMax/],
    ['arguments over hookToolArgsBytesMax', wellFormed([contextId, root, 'config-get', 1, new Uint8Array(limits.hookToolArgsBytesMax).fill(0x61), ['u8', 0]]), /more than hookToolArgsBytesMax/],
    ['stdin flag 7', wellFormed([contextId, root, 'config-get', 0, ['u8', 7]]), /stdin flag 7/],
    ['bytes after the last field', wellFormed([contextId, root, 'config-get', 0, ['u8', 0], ['u8', 0]]), /1 bytes after the last field/],
    ['two requests in one go', Buffer.concat([encodeCall({ contextId, cwd: root, tool: 'config-get', args: [] }), encodeCall({ contextId, cwd: root, tool: 'config-get', args: [] })]), /a second request before the reply/]
  ]
  for (const [name, bytes, expected] of cases) {
    logRecords.length = 0
    const reply = await raw(socketPath, bytes)
    assert.is(reply.length, 0, `${name}: no reply`)
    const lines = dropLines()
    assert.is(lines.length, 1, `${name}: one log line, got ${JSON.stringify(lines)}`)
    assert.match(lines[0]!, expected, name)
  }
  // Only the first of the two requests sent in one go reached the handler.
  assert.is(calls.length, 1)
  calls.length = 0
  // A half-sent frame followed by a hang-up is simply forgotten.
  await raw(socketPath, encodeCall({ contextId, cwd: root, tool: 'config-get', args: ['x'] }).subarray(0, 20), { end: true })
  assert.is(calls.length, 0)
  const still = await bash('config-get fine')
  assert.equal([still.code, still.stdout.toString()], [0, '["fine"]'])
})

test('an argument that is not UTF-8 is refused with exit 1 before the handler runs', async () => {
  const ran = await bash("config-get ok $'\\xff\\xfe'")
  assert.equal([ran.code, ran.stderr.toString()], [1, 'ERROR argument 2 is not valid UTF-8\n'])
  assert.is(calls.length, 0)
})

/** How much earlier than its delay a timer may fire by the wall clock (libuv's cached loop time). */
const timerEarlyMsMax = 10

test('a request that does not arrive within the frame read timeout is dropped; waiting for stdin is not timed', async () => {
  const path = join(root, 'timed.socket')
  const timed = await ToolServer.listen(path, stdinEcho, { logger, frameReadTimeoutMs: 150 })
  timed.contexts.open(contextId)
  try {
    // libuv times a timer from its cached loop time, so one can fire a few ms before the
    // wall clock says it is due (a flake at exactly 2 × 150 ms once): each connection is
    // checked on its own, with that slack.
    const heldMs = async (bytes: Uint8Array): Promise<number> => {
      const started = performance.now()
      await raw(path, bytes)
      return performance.now() - started
    }
    const held = [await heldMs(new Uint8Array(0)), await heldMs(encodeCall({ contextId, cwd: root, tool: 'relation-set', args: [] }).subarray(0, 5))]
    assert.ok(held.every(ms => ms >= 150 - timerEarlyMsMax), `both were held for the timeout: ${held.map(Math.round).join(', ')} ms`)
    assert.equal(dropLines(), ['hook tool connection dropped: no complete request within 150 ms', 'hook tool connection dropped: no complete request within 150 ms'])

    // A client slow to read its stdin (a slow producer in a pipe) is not cut off.
    const ran = await bash('{ sleep 0.4; echo late; } | relation-set --file -', { env: { JUJU_AGENT_SOCKET_ADDRESS: path } })
    assert.equal([ran.code, ran.stdout.toString()], [0, 'late\n'])
  } finally {
    await timed.close()
  }
})

test('calls on one context run one at a time; calls on different contexts run in parallel', async () => {
  let active = 0
  let activeMax = 0
  const order: string[] = []
  behave = async call => {
    active++
    activeMax = Math.max(activeMax, active)
    order.push(`start ${call.args[0]!}`)
    await sleep(30)
    order.push(`end ${call.args[0]!}`)
    active--
    return { code: 0, stdout: '', stderr: '' }
  }
  const ran = await bash('for i in 1 2 3 4 5; do relation-get "$i" & done; wait')
  assert.is(ran.code, 0)
  assert.is(calls.length, 5)
  assert.is(activeMax, 1, `calls overlapped: ${order.join(', ')}`)

  // Each handler waits to see the other context's call running: serialised, they would both time out.
  const otherContext = 'db/1-start-77'
  server.contexts.open(otherContext)
  try {
    const running = new Set<string>()
    behave = async call => {
      running.add(call.contextId)
      const deadline = performance.now() + 3_000
      while (running.size < 2 && performance.now() < deadline) await sleep(5)
      return { code: running.size === 2 ? 0 : 1, stdout: '', stderr: '' }
    }
    const both = await Promise.all([
      bash('slow-get'),
      bash('slow-get', { env: { JUJU_CONTEXT_ID: otherContext } })
    ])
    assert.equal(both.map(r => r.code), [0, 0])
  } finally {
    await server.contexts.close(otherContext)
  }
})

test('a context queues at most hookToolCallsQueuedPerContextMax calls; one more is refused', async () => {
  let release: () => void = () => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  behave = async call => {
    await gate
    return { code: 0, stdout: call.args[0] ?? '', stderr: '' }
  }
  const request = (n: number): Promise<{ code: number, stdout: Uint8Array, stderr: Uint8Array }> =>
    callTool(socketPath, { contextId, cwd: root, tool: 'config-get', args: [String(n)] }, { timeoutMs: 10_000 })
  try {
    const first = inFlight(request(0))
    await waitFor('the first call to start', () => calls.length === 1)
    const queued = Array.from({ length: limits.hookToolCallsQueuedPerContextMax }, (_, i) => inFlight(request(i + 1)))
    await waitFor('the queue to fill', () => server.contexts.waiting(contextId) === limits.hookToolCallsQueuedPerContextMax)
    const refused = await request(999)
    assert.is(refused.code, 1)
    assert.is(Buffer.from(refused.stderr).toString(), `ERROR too many hook tool calls waiting for context "${contextId}"\n`)
    release()
    const results = await within('the queued calls', Promise.all([first, ...queued]))
    assert.ok(results.every(r => r.code === 0))
    assert.is(calls.length, limits.hookToolCallsQueuedPerContextMax + 1)
  } finally {
    release()
  }
})

test('connections beyond hookToolConnectionsMax are closed at once and logged', async () => {
  const path = join(root, 'crowded.socket')
  const crowded = await ToolServer.listen(path, echo, { logger })
  crowded.contexts.open(contextId)
  const sockets: Socket[] = []
  try {
    for (let i = 0; i < limits.hookToolConnectionsMax; i++) {
      const socket = createConnection(path)
      socket.on('error', () => { /* closed by the test */ })
      sockets.push(socket)
    }
    await waitFor('the server to accept them all', () => crowded.connectionCount === limits.hookToolConnectionsMax)
    await raw(path, encodeCall({ contextId, cwd: root, tool: 'config-get', args: [] }))
    assert.ok(logRecords.some(r => r.message.includes('(hookToolConnectionsMax)')))
    for (const socket of sockets) socket.destroy()
    await waitFor('the connections to close', () => crowded.connectionCount === 0)
    const ran = await bash('config-get again', { env: { JUJU_AGENT_SOCKET_ADDRESS: path } })
    assert.equal([ran.code, ran.stdout.toString()], [0, '["again"]'])
  } finally {
    for (const socket of sockets) socket.destroy()
    await crowded.close()
  }
})

test('handler failures become exit 1 with an ERROR line, and are logged', async () => {
  const cases: Array<[ToolHandler, string]> = [
    [async () => { throw new Error('boom') }, 'ERROR config-get: boom\n'],
    [async () => ({ code: 3 as 0, stdout: '', stderr: '' }), 'ERROR config-get: internal error: exit code 3\n'],
    [async () => ({ needsStdin: true }), 'ERROR config-get: asked for stdin twice\n']
  ]
  for (const [handler, stderr] of cases) {
    behave = handler
    logRecords.length = 0
    const ran = await bash('config-get x </dev/null')
    assert.equal([ran.code, ran.stdout.toString(), ran.stderr.toString()], [1, '', stderr])
    assert.ok(logRecords.some(r => r.level === 'error'), `logged: ${stderr}`)
  }
})

test('output is bounded by hookToolOutputBytesMax: at the limit it passes, over it the tool fails', async () => {
  const max = limits.hookToolOutputBytesMax
  behave = async () => ({ code: 0, stdout: new Uint8Array(max - 3).fill(0x78), stderr: 'err' })
  const atLimit = await run(join(toolsDir, 'config-get'), [])
  assert.equal([atLimit.code, atLimit.stdout.length, atLimit.stderr.toString()], [0, max - 3, 'err'])
  behave = async () => ({ code: 0, stdout: new Uint8Array(max + 1), stderr: '' })
  const over = await run(join(toolsDir, 'config-get'), [])
  assert.equal([over.code, over.stdout.length, over.stderr.toString()], [1, 0, `ERROR config-get: output of ${max + 1} bytes is more than the limit of ${max}\n`])
})

test('the client refuses more than hookToolArgsCountMax arguments', async () => {
  const args = Array.from({ length: limits.hookToolArgsCountMax + 1 }, () => 'x')
  const over = await run(join(toolsDir, 'relation-set'), args)
  assert.equal([over.code, over.stderr.toString()], [1, `ERROR too many arguments: ${args.length}, the limit is ${limits.hookToolArgsCountMax}\n`])
  const atLimit = await run(join(toolsDir, 'relation-set'), args.slice(1))
  assert.is(atLimit.code, 0)
  assert.is(calls.length, 1)
  assert.is(calls[0]!.args.length, limits.hookToolArgsCountMax)
})

test('run under its own name, the client takes the tool from its first argument', async () => {
  const ran = await run(clientPath, ['status-set', 'active', 'ready to go'])
  assert.is(ran.code, 0)
  assert.equal(calls.map(c => [c.tool, c.args]), [['status-set', ['active', 'ready to go']]])
  const usage = await run(clientPath, [])
  assert.is(usage.code, 2)
  assert.match(usage.stderr.toString(), /^usage: cantrip-tool <tool>/)
})

test('callTool and encodeCall: the TS client round trip, and what the encoder refuses', async () => {
  behave = stdinEcho
  const result = await callTool(socketPath, { contextId, cwd: root, tool: 'relation-set', args: ['--file', '-'], stdin: utf8.encode('k: v\n') })
  assert.equal([result.code, Buffer.from(result.stdout).toString()], [0, 'k: v\n'])
  assert.throws(() => encodeCall({ contextId, cwd: root, tool: 'x', args: ['a\0b'] }), (error: Error) => error instanceof FrameError && /NUL/.test(error.message))
  assert.throws(() => encodeCall({ contextId, cwd: root, tool: 'x', args: [], stdin: new Uint8Array(limits.hookToolStdinBytesMax + 1) }), /hookToolStdinBytesMax/)
  assert.throws(() => encodeCall({ contextId, cwd: root, tool: 'x', args: ['a'.repeat(limits.hookToolArgsBytesMax)] }), /hookToolArgsBytesMax/)
})

test('the socket file is mode 0600; a stale one is replaced; a live socket or another file is left alone', async () => {
  const mode = statSync(socketPath)
  assert.ok(mode.isSocket())
  assert.is(mode.mode & 0o777, 0o600)
  assert.equal(readdirSync(root).filter(name => name.startsWith(bindDirPrefix)), [], 'the private bind directory is gone')

  const stale = join(root, 'crashed.socket')
  await leaveStaleSocket(stale)
  const replacement = await ToolServer.listen(stale, echo, { logger })
  replacement.contexts.open(contextId)
  const ran = await bash('config-get revived', { env: { JUJU_AGENT_SOCKET_ADDRESS: stale } })
  assert.equal([ran.code, ran.stdout.toString()], [0, '["revived"]'])
  await replacement.close()
  assert.throws(() => statSync(stale), /ENOENT/)

  try {
    await ToolServer.listen(socketPath, echo, { logger })
    assert.unreachable('took over a live socket')
  } catch (error) {
    assert.match((error as Error).message, `hook tool server: cannot listen at "${socketPath}": another process is listening there`)
  }
  const ok = await bash('config-get')
  assert.is(ok.code, 0, 'the live server still serves')

  const regular = join(root, 'not-a-socket')
  writeFileSync(regular, 'keep me')
  try {
    await ToolServer.listen(regular, echo, { logger })
    assert.unreachable('replaced a regular file')
  } catch (error) {
    assert.match((error as Error).message, 'a file that is not a socket is in the way')
  }
  assert.ok(statSync(regular).isFile())
  try {
    await ToolServer.listen('relative.socket', echo, { logger })
    assert.unreachable('listened at a relative path')
  } catch (error) {
    assert.is((error as Error).name, 'InvalidInputError')
  }
})

test('a socket path at the 107-byte limit binds: the private bind directory does not push it over (a unit agent deep under CANTRIP_HOME)', async () => {
  // A deployer's agent.socket at exactly the limit, like agents/unit-logship-2/agent.socket
  // under a long controller directory: it must bind, or the unit agent never starts.
  const name = 'agent.socket'
  const depth = 107 - Buffer.byteLength(join(root, 'x', name)) + 1
  const deep = join(root, 'd'.repeat(depth))
  mkdirSync(deep)
  const atLimit = join(deep, name)
  assert.is(Buffer.byteLength(atLimit), 107)
  const server = await ToolServer.listen(atLimit, echo, { logger })
  try {
    server.contexts.open(contextId)
    const ran = await bash('config-get deep', { env: { JUJU_AGENT_SOCKET_ADDRESS: atLimit } })
    assert.equal([ran.code, ran.stdout.toString()], [0, '["deep"]'])
  } finally {
    await server.close()
  }
  assert.equal(readdirSync(deep), [], 'no socket and no private directory left behind')

  // One byte longer is refused before anything is created.
  const over = join(deep, `${name}x`)
  try {
    await ToolServer.listen(over, echo, { logger })
    assert.unreachable('listened at a 108-byte path')
  } catch (error) {
    assert.match((error as Error).message, 'a socket path of at most 107 bytes')
  }
  // A short file name in a long directory: the private directory's path would not fit,
  // which is refused up front with the directory named, not left to fail on every retry.
  const deeper = join(deep, 'e'.repeat(5))
  mkdirSync(deeper)
  const short = join(deeper, 's')
  assert.ok(Buffer.byteLength(short) <= 107)
  try {
    await ToolServer.listen(short, echo, { logger })
    assert.unreachable('listened where the private bind directory cannot fit')
  } catch (error) {
    assert.match((error as Error).message, `hook tool server: expected a socket directory of at most 96 bytes`)
  }
  assert.equal(readdirSync(deeper), [], 'a refused listen creates nothing')
  rmSync(deep, { recursive: true })
})

test('a registry holds at most hookToolContextsOpenMax contexts and refuses an id opened twice', () => {
  const contexts = new ToolContexts()
  for (let i = 0; i < limits.hookToolContextsOpenMax; i++) contexts.open(`c-${i}`)
  assert.throws(() => { contexts.open('one-too-many') }, /hookToolContextsOpenMax/)
  assert.throws(() => { contexts.open('c-1') }, /already open/)
  assert.throws(() => { contexts.open('') }, /non-empty/)
})

test('build: a missing or failing compiler is one clear error line', async () => {
  const missing = join(root, 'no-such-cc')
  try {
    await ensureToolClient({ compiler: missing, cacheDir: join(root, 'cache-missing') })
    assert.unreachable('built without a compiler')
  } catch (error) {
    const message = (error as Error).message
    assert.is((error as Error).name, 'ToolClientBuildError')
    assert.not.match(message, '\n')
    assert.match(message, `hook tool client: expected a C compiler "${missing}" on PATH to build `)
    assert.match(message, 'got no such program; install one (apt-get install gcc)')
  }
  try {
    await ensureToolClient({ compiler: '/bin/false', cacheDir: join(root, 'cache-false') })
    assert.unreachable('built with /bin/false')
  } catch (error) {
    assert.match((error as Error).message, /^hook tool client: expected "\/bin\/false" to compile .*cantrip-tool\.c, got exit 1$/)
  }
  assert.equal(readdirSync(join(root, 'cache-false')), [], 'no temporary left behind')
})

test('build: the cached binary is reused; concurrent builds in two processes agree on one binary', async () => {
  const before = statSync(clientPath).mtimeMs
  assert.is(await ensureToolClient(), clientPath)
  assert.is(statSync(clientPath).mtimeMs, before, 'not rebuilt')
  assert.ok(clientPath.startsWith(toolClientCacheDir))

  const inProcess = join(root, 'cache-in-process')
  const paths = await Promise.all([1, 2, 3].map(() => ensureToolClient({ cacheDir: inProcess })))
  assert.equal(new Set(paths).size, 1)

  const shared = join(root, 'cache-shared')
  const script = join(root, 'build.mts')
  writeFileSync(script, [
    `import { ensureToolClient } from ${JSON.stringify(join(repoRoot, 'agent/hook-tools/client/build-client.ts'))}`,
    `process.stdout.write(await ensureToolClient({ cacheDir: ${JSON.stringify(shared)} }))`
  ].join('\n'))
  const builds = await Promise.all([1, 2].map(() => run(process.execPath, [bundledChild(script)], { cwd: repoRoot, timeoutMs: 60_000 })))
  assert.equal(builds.map(b => [b.code, b.stderr.toString()]), [[0, ''], [0, '']])
  assert.is(builds[0]!.stdout.toString(), builds[1]!.stdout.toString())
  const built = builds[0]!.stdout.toString()
  assert.equal(readdirSync(shared), [built.slice(shared.length + 1)], 'one binary, no temporaries')
  const ran = await run(built, ['config-get'], { env: { JUJU_CONTEXT_ID: undefined } })
  assert.equal([ran.code, ran.stderr.toString()], [1, 'ERROR JUJU_CONTEXT_ID not set\n'])
})

/** Leaves a socket file nobody listens on, the way a crashed agent does. */
async function leaveStaleSocket (path: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`], { stdio: 'ignore' })
  await within('the crashing listener to die', new Promise(resolve => { child.on('close', resolve) }), 10_000)
  assert.ok(statSync(path).isSocket(), 'a stale socket file is left')
}

test.run()
