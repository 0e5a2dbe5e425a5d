/**
 * For the viewer's browser test and bench: Debian's chromium (installed by
 * scripts/ensure-chromium.sh, never skipped) driven headless by playwright-core, and
 * `cantrip inspect` as a child process whose URL is read from its first line. Every
 * process is ended by its pid.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chromium, type Browser, type Page } from 'playwright-core'
import { distProgram } from './dist.ts'

export const chromiumPath = '/usr/bin/chromium'
/** `cantrip inspect` prints its URL within this long, even on a loaded machine. */
const viewerStartMs = 60_000

export function ensureChromium (): void {
  // Throws (failing the test) with the script's one-line reason when it cannot install.
  execFileSync('scripts/ensure-chromium.sh', { stdio: ['ignore', 'inherit', 'inherit'], timeout: 600_000 })
}

export async function launchChromium (): Promise<Browser> {
  return await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu'] })
}

export interface ViewerProcess {
  url: string
  child: ChildProcess
  output: () => string
  stop: () => Promise<void>
}

/** Starts `cantrip inspect ARGS --no-open` and waits (bounded) for the URL it prints. */
export async function startViewer (args: readonly string[], env: Readonly<Record<string, string>>): Promise<ViewerProcess> {
  const child = spawn(process.execPath, [distProgram('cantrip'), 'inspect', ...args, '--no-open'], {
    env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
    const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
    process.kill(child.pid, 'SIGTERM')
    const timer = setTimeout(() => { if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL') }, 5_000)
    await exited
    clearTimeout(timer)
  }
  const deadline = performance.now() + viewerStartMs
  for (;;) {
    const match = /cantrip inspect: (http:\/\/\S+)/.exec(output)
    if (match !== null) return { url: match[1]!, child, output: () => output, stop }
    if (child.exitCode !== null || performance.now() > deadline) {
      await stop()
      throw new Error(`inspect browser: expected cantrip inspect to print its URL within ${viewerStartMs / 1000}s, got: ${output.slice(-2000)}`)
    }
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

export interface TreeRow { agent: string, name: string, kind: string, state: string, key: string }

/** The actor tree as the page shows it. */
export async function treeRows (page: Page): Promise<TreeRow[]> {
  return await page.$$eval('#tree [data-key]', nodes => nodes.map(n => {
    const d = (n as HTMLElement).dataset
    return { agent: d.actorAgent ?? '', name: d.name ?? '', kind: d.kind ?? '', state: d.state ?? '', key: d.key ?? '' }
  }))
}

export async function agentsShown (page: Page): Promise<string[]> {
  return await page.$$eval('#tree [data-agent]', nodes => nodes.map(n => (n as HTMLElement).dataset.agent ?? ''))
}

export interface HookRow { hook: string, result: string }

export async function hookRows (page: Page): Promise<HookRow[]> {
  return await page.$$eval('#hooks tr[data-hook]', rows => rows.map(r => ({ hook: (r as HTMLElement).dataset.hook ?? '', result: (r as HTMLElement).dataset.result ?? '' })))
}

/** Polls `read` until `holds` (bounded); fails with what was last read. */
export async function untilPage<T> (what: string, read: () => Promise<T>, holds: (value: T) => boolean, withinMs = 60_000): Promise<T> {
  const deadline = performance.now() + withinMs
  for (;;) {
    const value = await read()
    if (holds(value)) return value
    if (performance.now() > deadline) throw new Error(`inspect browser: expected ${what} within ${withinMs / 1000}s, last saw ${JSON.stringify(value).slice(0, 1500)}`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}
