#!/usr/bin/env node
// web-proxy: a round-robin HTTP reverse proxy, the workload of the `web` example charm.
//
//   node web-proxy.mjs <config-file>     serve
//   node web-proxy.mjs --version         print the workload version
//
// The config file holds `key=value` lines (written by the charm):
//   host, port, unit, backends-file, log-level
// The backends file holds one `host:port` per line (blank lines and `#` comments are
// ignored). It is re-read on every request, so the charm only has to rewrite it;
// SIGHUP additionally re-reads the config file and logs the current backends.
//
// HTTP:
//   GET /backends    200 {"backends":["host:port",...]}
//   GET|HEAD|PUT *   forwarded to the next backend in turn (response header
//                    X-Backend names it); a backend refusing the connection is
//                    skipped; 503 with no backends, 502 when none answers.
import { readFileSync } from 'node:fs'
import { request as httpRequest, createServer } from 'node:http'

export const VERSION = '1.0.0'
const bodyBytesMax = 1024 * 1024
const upstreamTimeoutMs = 10_000
const levels = { debug: 10, info: 20, warn: 30, error: 40 }
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host'])
const skippable = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])

if (process.argv[2] === '--version') {
  console.log(VERSION)
  process.exit(0)
}
const configFile = process.argv[2]
if (configFile === undefined) {
  console.error('usage: web-proxy.mjs <config-file> | --version')
  process.exit(2)
}

function readConfig (path) {
  const config = {}
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue
    const eq = line.indexOf('=')
    if (eq < 0) continue
    config[line.slice(0, eq).trim()] = line.slice(eq + 1)
  }
  return config
}

let config = readConfig(configFile)
const host = config.host || '0.0.0.0'
const port = Number(config.port)
if (!Number.isInteger(port) || port < 0 || port > 65535) fatal(`bad port ${JSON.stringify(config.port)}`)
if (!config['backends-file']) fatal('backends-file is not set')

function log (level, message) {
  const wanted = levels[config['log-level']] ?? levels.info
  if (levels[level] < wanted) return
  process.stdout.write(`${new Date().toISOString()} ${level.toUpperCase()} web-proxy[${config.unit ?? '?'}] ${message}\n`)
}

function fatal (message) {
  console.error(`web-proxy: ${message}`)
  process.exit(1)
}

/** The current backends; a missing file means none. */
function readBackends () {
  let text = ''
  try {
    text = readFileSync(config['backends-file'], 'utf8')
  } catch (error) {
    if (error.code !== 'ENOENT') log('warn', `cannot read backends: ${error.message}`)
    return []
  }
  return text.split('\n').map(line => line.trim()).filter(line => line !== '' && !line.startsWith('#'))
}

/** `host:port` or `[v6]:port` → { hostname, port }, or undefined when malformed. */
function parseBackend (backend) {
  const colon = backend.lastIndexOf(':')
  if (colon <= 0) return undefined
  const hostname = backend.slice(0, colon).replace(/^\[(.*)\]$/, '$1')
  const backendPort = Number(backend.slice(colon + 1))
  if (!Number.isInteger(backendPort) || backendPort <= 0 || backendPort > 65535) return undefined
  return { hostname, port: backendPort }
}

let turn = 0

/** One upstream attempt; resolves { skipped: true } when the backend refused the connection. */
function forward (req, res, body, backend) {
  return new Promise(resolve => {
    const target = parseBackend(backend)
    if (target === undefined) {
      log('warn', `malformed backend ${JSON.stringify(backend)}`)
      return resolve({ skipped: true })
    }
    const headers = {}
    for (const [name, value] of Object.entries(req.headers)) {
      if (!hopByHop.has(name)) headers[name] = value
    }
    headers['content-length'] = String(body.length)
    headers['x-forwarded-for'] = req.socket.remoteAddress ?? ''
    const upstream = httpRequest({ ...target, method: req.method, path: req.url, headers, timeout: upstreamTimeoutMs }, answer => {
      const out = {}
      for (const [name, value] of Object.entries(answer.headers)) {
        if (!hopByHop.has(name)) out[name] = value
      }
      out['x-backend'] = backend
      res.writeHead(answer.statusCode ?? 502, out)
      answer.pipe(res)
      answer.on('end', () => resolve({ skipped: false }))
      answer.on('error', () => { res.destroy(); resolve({ skipped: false }) })
    })
    upstream.on('timeout', () => upstream.destroy(Object.assign(new Error('upstream timeout'), { code: 'ETIMEDOUT' })))
    upstream.on('error', error => {
      if (skippable.has(error.code)) {
        log('warn', `backend ${backend} unavailable (${error.code})`)
        return resolve({ skipped: true })
      }
      log('warn', `backend ${backend} failed: ${error.message}`)
      if (!res.headersSent) reply(res, error.code === 'ETIMEDOUT' ? 504 : 502, `backend ${backend} failed\n`)
      else res.destroy()
      resolve({ skipped: false })
    })
    upstream.end(body)
  })
}

function reply (res, status, body, type = 'text/plain; charset=utf-8') {
  res.writeHead(status, { 'content-type': type })
  res.end(body)
}

async function proxy (req, res, body) {
  const backends = readBackends()
  if (backends.length === 0) return reply(res, 503, 'no backends\n')
  const first = turn++ % backends.length
  for (let i = 0; i < backends.length; i++) {
    const backend = backends[(first + i) % backends.length]
    log('debug', `${req.method} ${req.url} -> ${backend}`)
    const { skipped } = await forward(req, res, body, backend)
    if (!skipped) return
  }
  reply(res, 502, 'no backend answered\n')
}

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0]
  if (path === '/backends' && (req.method === 'GET' || req.method === 'HEAD')) {
    // Which process answered: the charm's health check asks for its own proxy's pid (a
    // stranger on the port, e.g. another deployment's proxy, never passes for it).
    res.setHeader('X-Workload-Pid', String(process.pid))
    return reply(res, 200, JSON.stringify({ backends: readBackends() }) + '\n', 'application/json')
  }
  if (!['GET', 'HEAD', 'PUT'].includes(req.method ?? '')) return reply(res, 405, 'method not allowed\n')
  const chunks = []
  let size = 0
  req.on('data', chunk => {
    size += chunk.length
    if (size <= bodyBytesMax) chunks.push(chunk)
  })
  req.on('end', () => {
    if (size > bodyBytesMax) return reply(res, 413, 'body too large\n')
    proxy(req, res, Buffer.concat(chunks)).catch(error => {
      log('error', `proxy failed: ${error.message}`)
      if (!res.headersSent) reply(res, 500, 'proxy error\n')
    })
  })
})

process.on('SIGHUP', () => {
  try {
    config = readConfig(configFile)
  } catch (error) {
    log('error', `config reload failed: ${error.message}`)
  }
  log('info', `reloaded; backends: ${readBackends().join(' ') || '(none)'}`)
})
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    log('info', `${signal}: shutting down`)
    server.close(() => process.exit(0))
    server.closeAllConnections()
    setTimeout(() => process.exit(0), 2000).unref()
  })
}
server.on('error', error => fatal(`cannot listen on ${host}:${port}: ${error.message}`))
server.listen(port, host, () => {
  log('info', `web-proxy ${VERSION} listening on ${host}:${server.address().port}`)
})
