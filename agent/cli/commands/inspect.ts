/**
 * `cantrip inspect [--agent [NAME=]ws://…]… [--log FILE]… [--sim REPORT.json] [--listen 127.0.0.1:PORT] [--no-open]`:
 * the offline viewer of the actors. Serves a page on this host (prints its URL), connects
 * to every agent's inspection stream (`cantripd --inspect`; by default every agent the
 * controller's data directories name, plus --agent) and merges them into one log the page
 * draws and steps through; or opens recorded logs instead. Runs until interrupted.
 */
import { spawn } from 'node:child_process'
import { Option } from 'commander'
import type { RegisterCommand } from '../cli-context.ts'
import { controllerEntry } from '../cli-home.ts'
import type { InspectOptions } from '../../inspect-viewer/viewer-plan.ts'
import type { ViewerSource } from '../../inspect-viewer/viewer-server.ts'

const component = 'cantrip inspect'

/** The agents' endpoints: every `inspect.url` the controller's agents wrote (`cantrip bootstrap --inspect`). */
async function discovered (controller: string | undefined): Promise<ViewerSource[]> {
  const { entry } = controllerEntry(controller)
  const { discoverInspectEndpoints } = await import('../../inspect/inspect-endpoints.ts')
  return discoverInspectEndpoints(entry).map(e => ({ name: e.agent, url: e.url }))
}

function collect (value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value]
}

function openBrowser (url: string): void {
  // Best effort: a desktop may have no opener; the URL is printed either way.
  const child = spawn('xdg-open', [url], { stdio: 'ignore', detached: true })
  child.on('error', () => undefined)
  child.unref()
}

export const registerInspect: RegisterCommand = (program, context) => {
  program.command('inspect')
    .description('a local web viewer of every agent\'s actors: statecharts, messages, hooks, time travel')
    .option('--agent <url>', 'an agent\'s inspection endpoint, [NAME=]ws://HOST:PORT (repeatable; adds to those discovered)', collect)
    .option('--log <file>', 'open a recorded inspection log (JSONL, cantripd --inspect-log) instead of live agents (repeatable)', collect)
    .option('--sim <report>', 'open a cantrip sim run: its <scenario>-<seed>.json report (the .inspect.jsonl beside it)')
    .option('--listen <host:port>', 'where the page is served (this host only)', '127.0.0.1:0')
    .option('--no-open', 'do not open a browser, only print the URL')
    .addOption(new Option('-c, --controller <name>', 'controller whose agents to inspect (default: the current one)'))
    .action(async (options: InspectOptions) => {
      // Loaded on use, like the server below: the viewer's planning pulls in its websocket
      // client, which every other command would otherwise read and compile (issue 28).
      const { inspectPlan, mergeSources } = await import('../../inspect-viewer/viewer-plan.ts')
      const { readRecordedLogs } = await import('../../inspect-viewer/recorded-log.ts')
      const plan = inspectPlan(options)
      let agents = plan.agents
      if (plan.discover) {
        try {
          agents = mergeSources(await discovered(options.controller), plan.agents)
        } catch (error) {
          // With --agent given, a missing controller is fine; without, there is nothing to show.
          if (plan.agents.length === 0) throw error
          context.err(`${component}: no agents discovered (${(error as Error).message.split('\n')[0]}); using --agent only`)
        }
        if (agents.length === 0) throw new Error(`${component}: expected agents run with --inspect (cantrip bootstrap --inspect) or --agent, got none`)
      }
      const recorded = await readRecordedLogs(plan.logs)
      // Loaded on use: the viewer's server and its assets' builder serve this command only.
      const { startViewerServer } = await import('../../inspect-viewer/viewer-server.ts')
      const server = await startViewerServer({
        host: plan.host,
        port: plan.port,
        agents,
        recorded,
        ...(plan.logs.length === 0 ? {} : { recordedLabel: plan.logs.join(', ') })
      })
      context.out(`cantrip inspect: ${server.url}`)
      for (const agent of agents) context.out(`  agent ${agent.name} ${agent.url}`)
      if (plan.logs.length > 0) context.out(`  ${recorded.length} recorded messages from ${plan.logs.join(', ')}`)
      if (plan.open) openBrowser(server.url)
      await new Promise<void>(resolve => {
        process.once('SIGINT', resolve)
        process.once('SIGTERM', resolve)
      })
      await server.close()
    })
}
