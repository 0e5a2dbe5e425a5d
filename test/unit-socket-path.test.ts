/**
 * The unit's hook tool socket path: `<agentDir>/agent.socket` when it fits a unix socket
 * path (with the bind directory ToolServer makes beside it), else a digest-named socket
 * in a per-user 0700 directory — and a ToolServer really listens there and answers.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { callTool, ToolServer } from '../agent/hook-tools/transport/tool-server.ts'
import { unitSocketPath } from '../agent/uniter/unit-socket-path.ts'
import { createMemoryLogger } from '../runtime/logger.ts'

const root = realpathSync(mkdtempSync(join(tmpdir(), 'cantrip-sock-')))
/** As deep as a default-home deployment's unit directory. */
const longAgentDir = join(root, 'home', 'someone', '.local', 'share', 'cantrip', 'controllers', 'demo', 'machines', 'machine-0', 'agent', 'agents', 'unit-logship-0')

test('a short agent directory keeps its socket inside', () => {
  assert.is(unitSocketPath(join(root, 'a')), join(root, 'a', 'agent.socket'))
})

test('a long agent directory gets a digest-named socket in a per-user 0700 directory, the same every time', () => {
  const base = join(root, 'tmp1')
  mkdirSync(base)
  const path = unitSocketPath(longAgentDir, base)
  assert.is(dirname(path), join(base, `cantrip-${process.getuid!()}`))
  assert.match(path, /\/[0-9a-f]{24}\.socket$/)
  assert.ok(Buffer.byteLength(path) <= 107)
  assert.is(unitSocketPath(longAgentDir, base), path, 'a restarting agent finds the same path')
  assert.is.not(unitSocketPath(longAgentDir + '-other', base), path)
})

test('a socket directory others can enter is refused', () => {
  const base = join(root, 'tmp2')
  mkdirSync(join(base, `cantrip-${process.getuid!()}`), { recursive: true })
  chmodSync(join(base, `cantrip-${process.getuid!()}`), 0o755)
  assert.throws(() => unitSocketPath(longAgentDir, base), /hook tool socket: expected .* mode 0700, got "a directory of uid \d+, mode 755"/)
})

test('a ToolServer listens at the fallback path and answers a call', async () => {
  const base = join(root, 'tmp3')
  mkdirSync(base)
  mkdirSync(longAgentDir, { recursive: true })
  assert.ok(Buffer.byteLength(join(longAgentDir, 'agent.socket')) > 107, 'the in-directory path would not fit')
  const path = unitSocketPath(longAgentDir, base)
  const server = await ToolServer.listen(path, async call => ({ code: 0, stdout: `called ${call.tool}`, stderr: '' }), { logger: createMemoryLogger('test', []) })
  try {
    server.contexts.open('u/0-install-1')
    const result = await callTool(path, { contextId: 'u/0-install-1', cwd: '/', tool: 'status-get', args: [] }, { timeoutMs: 10_000 })
    assert.is(result.code, 0)
    assert.is(Buffer.from(result.stdout).toString(), 'called status-get')
  } finally {
    await server.close()
  }
  assert.not.ok(existsSync(path), 'closing removes the socket file')
})

test.after(() => { rmSync(root, { recursive: true, force: true }) })
test.run()
