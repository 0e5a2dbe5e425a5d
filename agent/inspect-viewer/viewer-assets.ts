import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { packageRoot } from '../package-root.ts'

/**
 * The page's assets, all from this repository and node_modules (no CDN): the HTML, the
 * front end (browser/app.ts and the pure model it shares with the tests) bundled with
 * esbuild — which tsx, a runtime dependency, brings — and elkjs's browser build.
 */

const require = createRequire(import.meta.url)
const viewerDir = join(packageRoot, 'agent', 'inspect-viewer')
const appEntry = join(viewerDir, 'browser', 'app.ts')
const stylesheet = join(viewerDir, 'browser', 'viewer.css')

export interface ViewerAssets {
  html: string
  appJs: string
  elkJs: string
  css: string
}

async function bundleApp (): Promise<string> {
  const esbuild = await import('esbuild')
  const result = await esbuild.build({
    entryPoints: [appEntry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    sourcemap: 'inline',
    logLevel: 'silent'
  })
  const file = result.outputFiles[0]
  if (file === undefined) throw new Error('cantrip inspect: expected a bundled front end, got no output from esbuild')
  return file.text
}

export function viewerHtml (title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title.replace(/[<&]/g, c => c === '<' ? '&lt;' : '&amp;')}</title>
<link rel="stylesheet" href="/viewer.css">
<script src="/elk.js"></script>
<script type="module" src="/app.js"></script>
</head>
<body>
<header id="bar">
  <strong>cantrip inspect</strong>
  <span id="sources"></span>
  <button id="pause" data-testid="pause">pause</button>
  <button id="back" data-testid="step-back" title="one message back">◀</button>
  <button id="forward" data-testid="step-forward" title="one message forward">▶</button>
  <button id="live" data-testid="live">live</button>
  <input id="slider" data-testid="slider" type="range" min="0" max="0" value="0">
  <span id="position" data-testid="position"></span>
</header>
<main>
  <nav id="tree" data-testid="tree"></nav>
  <section id="chart-panel"><h2 id="chart-title">statechart</h2><div id="chart" data-testid="chart"></div></section>
  <aside id="details">
    <h2>hooks</h2><div id="hooks" data-testid="hooks"></div>
    <h2>context</h2><pre id="context" data-testid="context"></pre>
  </aside>
  <section id="sequence-panel"><h2>message sequence</h2><div id="sequence" data-testid="sequence"></div></section>
</main>
</body>
</html>
`
}

export async function loadViewerAssets (): Promise<ViewerAssets> {
  const [appJs, elkJs, css] = await Promise.all([
    bundleApp(),
    readFile(require.resolve('elkjs/lib/elk.bundled.js'), 'utf8'),
    readFile(stylesheet, 'utf8')
  ])
  return { html: viewerHtml('cantrip inspect'), appJs, elkJs, css }
}
