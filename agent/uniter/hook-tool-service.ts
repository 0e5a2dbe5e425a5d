/**
 * The hook tools of one unit: the C client linked under every tool name in
 * `<agentDir>/tools` (first on the hooks' PATH) and the unit's socket
 * (`<agentDir>/agent.socket` when that path is short enough; see unit-socket-path.ts),
 * whose calls run the tool commands against the HookContext
 * of the hook that made them. A call with a context id that is not open (stale: its hook
 * has ended; or forged) is refused by the server before any command runs.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from '../../runtime/logger.ts'
import { ensureToolClient, hookToolNames, installToolLinks } from '../hook-tools/client/build-client.ts'
import type { HookContext } from '../hook-tools/hook-context.ts'
import { runTool } from '../hook-tools/run-tool.ts'
import { ToolServer } from '../hook-tools/transport/tool-server.ts'
import type { HookToolService } from './process-unit-workspace.ts'
import { unitSocketPath } from './unit-socket-path.ts'

export interface ClosableHookToolService extends HookToolService {
  close (): Promise<void>
}

export async function startHookToolService (agentDir: string, logger: Logger): Promise<ClosableHookToolService> {
  const toolsDir = join(agentDir, 'tools')
  mkdirSync(toolsDir, { recursive: true })
  await installToolLinks(toolsDir, hookToolNames, await ensureToolClient())
  const contexts = new Map<string, HookContext>()
  const server = await ToolServer.listen(unitSocketPath(agentDir), async call => {
    const context = contexts.get(call.contextId)
    // The server checks open contexts itself; this covers a close racing a call.
    if (context === undefined) return { code: 1, stdout: '', stderr: `ERROR invalid context id "${call.contextId}"\n` }
    return await runTool(context, call.tool, call.args, { cwd: call.cwd, ...(call.stdin === undefined ? {} : { stdin: call.stdin }) })
  }, { logger: logger.child('hook-tools') })
  return {
    socketPath: server.socketPath,
    toolsDir,
    open (contextId, context) {
      contexts.set(contextId, context)
      server.contexts.open(contextId)
      return () => {
        contexts.delete(contextId)
        void server.contexts.close(contextId)
      }
    },
    close: async () => { await server.close() }
  }
}
