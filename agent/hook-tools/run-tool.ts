/**
 * Runs one hook tool invocation against a hook context: the server half of the jujuc
 * RPC (juju-semantics §5.1). The socket transport calls this with the tool name from
 * the client's argv[0], its arguments and working directory, and relays the answer.
 *
 * Exit codes follow juju/cmd (§5.2): 0 ok; 2 for usage problems (unknown or malformed
 * flags, bad or extra arguments), reported as `ERROR <message>`; 1 for failures while
 * running, including any unexpected error. `-h`/`--help` prints the usage, exit 0. An
 * unknown tool name is exit 1 `ERROR unknown command: <name>` (Juju's server refuses the
 * request; cantrip answers it like any failed command).
 *
 * A tool that needs stdin it was not sent (`relation-set --file -`) answers
 * `{ needsStdin: true }` before doing anything; the client calls again with stdin.
 */
import type { ExitCode, HookContext } from './hook-context.ts'
import type { HookToolError } from './hook-context.ts'
import { parseArgs, usageText } from './commands/args.ts'
import { ToolCall, type ToolIo } from './commands/hook-tool.ts'
import { hookTools } from './commands/index.ts'

export interface ToolResult {
  code: ExitCode
  stdout: string
  stderr: string
}

export type RunToolResult = ToolResult | { needsStdin: true }

export type { ToolIo }

export async function runTool (context: HookContext, tool: string, args: readonly string[], io: ToolIo): Promise<RunToolResult> {
  const command = hookTools.get(tool)
  if (command === undefined) return { code: 1, stdout: '', stderr: `ERROR unknown command: ${tool}\n` }
  const call = new ToolCall(context, io)
  const flags = command.flags(context)
  try {
    const parsed = await parseArgs(flags, args)
    await command.run(call, parsed)
    return { code: 0, stdout: call.stdout, stderr: call.stderr }
  } catch (error) {
    const name = (error as Error | undefined)?.name
    if (name === 'HelpRequested') return { code: 0, stdout: usageText(command, flags), stderr: '' }
    if (name === 'NeedsStdin') return { needsStdin: true }
    if (name === 'HookToolError') {
      const { code, message } = error as HookToolError
      return { code, stdout: call.stdout, stderr: `${call.stderr}ERROR ${message}\n` }
    }
    const message = error instanceof Error ? error.message : String(error)
    return { code: 1, stdout: call.stdout, stderr: `${call.stderr}ERROR ${message}\n` }
  }
}
