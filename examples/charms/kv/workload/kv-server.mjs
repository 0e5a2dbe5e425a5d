#!/usr/bin/env node
// kv-server: a tiny key-value HTTP service, the workload of the `kv` example charm.
//
//   node kv-server.mjs <config-file>     serve
//   node kv-server.mjs --version         print the workload version
//
// The config file holds `key=value` lines (written by the charm):
//   host, port, unit, data-file, peers-file, token, log-level
//
// HTTP:
//   GET  /kv/<key>   200 value | 404
//   PUT  /kv/<key>   body = value; needs header X-Token = token; 204 | 403 | 503 (no token yet)
//   GET  /health     200 {"status":"ok","unit":...,"peers":[{unit,address}],"keys":N}
//
// Data lives in one JSON file, replaced by write-to-temp + fsync + rename, so a crash
// leaves either the old or the new content. SIGHUP re-reads the config file (token,
// log level, peers file); a new host or port needs a restart. SIGTERM exits cleanly.
import { createHash, timingSafeEqual } from 'node:crypto'
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { createServer } from 'node:http'

export const VERSION = '1.0.0'
const valueBytesMax = 1024 * 1024
const levels = { debug: 10, info: 20, warn: 30, error: 40 }

if (process.argv[2] === '--version') {
  console.log(VERSION)
  process.exit(0)
}
const configFile = process.argv[2]
if (configFile === undefined) {
  console.error('usage: kv-server.mjs <config-file> | --version')
  process.exit(2)
}

/** Parses `key=value` lines; blank lines and `#` comments are skipped. */
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
const dataFile = config['data-file']
if (!Number.isInteger(port) || port < 0 || port > 65535) fatal(`bad port ${JSON.stringify(config.port)}`)
if (!dataFile) fatal('data-file is not set')

function log (level, message) {
  const wanted = levels[config['log-level']] ?? levels.info
  if (levels[level] < wanted) return
  process.stdout.write(`${new Date().toISOString()} ${level.toUpperCase()} kv-server[${config.unit ?? '?'}] ${message}\n`)
}

function fatal (message) {
  console.error(`kv-server: ${message}`)
  process.exit(1)
}

/** @type {Record<string, string>} */
let data = {}
try {
  data = JSON.parse(readFileSync(dataFile, 'utf8'))
} catch (error) {
  if (error.code !== 'ENOENT') fatal(`cannot read ${dataFile}: ${error.message}`)
}

function save () {
  const tmp = `${dataFile}.tmp-${process.pid}`
  const fd = openSync(tmp, 'w', 0o600)
  try {
    writeSync(fd, JSON.stringify(data))
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, dataFile)
}

/** Peers as the charm recorded them: `<unit> <host:port>` per line. */
function readPeers () {
  if (!config['peers-file']) return []
  let text = ''
  try {
    text = readFileSync(config['peers-file'], 'utf8')
  } catch {
    return []
  }
  return text.split('\n').map(line => line.trim()).filter(Boolean).map(line => {
    const [unit, address = ''] = line.split(/\s+/)
    return { unit, address }
  })
}

function tokenMatches (given) {
  const digest = value => createHash('sha256').update(value).digest()
  return timingSafeEqual(digest(config.token), digest(given ?? ''))
}

function reply (res, status, body = '', type = 'text/plain; charset=utf-8') {
  res.writeHead(status, body === '' ? {} : { 'content-type': type })
  res.end(body)
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://kv')
  log('debug', `${req.method} ${url.pathname}`)
  if (url.pathname === '/health') {
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'method not allowed\n')
    const body = JSON.stringify({ status: 'ok', unit: config.unit ?? '', peers: readPeers(), keys: Object.keys(data).length })
    // Which process answered: the charm's health check asks for its own server's pid, so a
    // stranger on the port (another deployment's kv-server) never passes for it.
    res.setHeader('X-Workload-Pid', String(process.pid))
    return reply(res, 200, body + '\n', 'application/json')
  }
  if (!url.pathname.startsWith('/kv/')) return reply(res, 404, 'not found\n')
  let key
  try {
    key = decodeURIComponent(url.pathname.slice('/kv/'.length))
  } catch {
    return reply(res, 400, 'bad key\n')
  }
  if (key === '') return reply(res, 400, 'empty key\n')

  if (req.method === 'GET' || req.method === 'HEAD') {
    if (!Object.hasOwn(data, key)) return reply(res, 404, 'no such key\n')
    return reply(res, 200, data[key])
  }
  if (req.method !== 'PUT') return reply(res, 405, 'method not allowed\n')
  if (!config.token) return reply(res, 503, 'no token configured yet\n')
  if (!tokenMatches(req.headers['x-token'])) return reply(res, 403, 'bad token\n')
  const chunks = []
  let size = 0
  req.on('data', chunk => {
    size += chunk.length
    if (size <= valueBytesMax) chunks.push(chunk)
  })
  req.on('end', () => {
    if (size > valueBytesMax) return reply(res, 413, 'value too large\n')
    data[key] = Buffer.concat(chunks).toString('utf8')
    try {
      save()
    } catch (error) {
      log('error', `cannot save: ${error.message}`)
      return reply(res, 500, 'cannot save\n')
    }
    log('info', `put ${JSON.stringify(key)} (${size} bytes)`)
    reply(res, 204)
  })
})

process.on('SIGHUP', () => {
  try {
    const next = readConfig(configFile)
    if ((next.host || '0.0.0.0') !== host || Number(next.port) !== port) log('warn', 'host or port changed: restart needed')
    config = next
    log('info', 'config reloaded')
  } catch (error) {
    log('error', `config reload failed: ${error.message}`)
  }
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
  log('info', `kv-server ${VERSION} listening on ${host}:${server.address().port}`)
})
