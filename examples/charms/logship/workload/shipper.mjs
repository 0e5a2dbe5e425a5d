#!/usr/bin/env node
// shipper: follows log files matching a glob and appends their new lines, prefixed,
// to one output file. The workload of the `logship` example subordinate charm.
//
//   node shipper.mjs <config-file>     run until SIGTERM
//   node shipper.mjs --version         print the workload version
//
// The config file holds `key=value` lines (written by the charm):
//   glob          absolute glob; `*`, `?` and `[...]` within one path segment
//   out           output file; every shipped line is `<prefix> <source>: <line>`,
//                 <source> being the file's path below the glob's fixed part
//   prefix        normally the principal unit's name
//   offsets-file  where the read position of every file is kept (JSON)
//   exclude-dir   files under this directory are never shipped (the shipper's own)
//   exclude-name  files with this name are never shipped (other shippers' output)
//   interval-ms   polling period (default 1000)
//   ready-file    written (with the pid) once the first poll is done
//
// Only complete lines are shipped; a partial last line waits for its newline. A file
// that shrank or was replaced (new inode) is read again from the start. Offsets are
// saved after each append, so a restart does not ship lines twice unless it crashed in
// between (at-least-once). SIGHUP re-reads the config file.
import { appendFileSync, closeSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { basename, join, relative, resolve, sep } from 'node:path'

export const VERSION = '1.0.0'
const chunkBytesMax = 1024 * 1024

if (process.argv[2] === '--version') {
  console.log(VERSION)
  process.exit(0)
}
const configFile = process.argv[2]
if (configFile === undefined) {
  console.error('usage: shipper.mjs <config-file> | --version')
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
  if (!config.glob || !config.out) throw new Error('glob and out must be set')
  return config
}

function log (message) {
  process.stdout.write(`${new Date().toISOString()} shipper[${config.prefix ?? '?'}] ${message}\n`)
}

let config
try {
  config = readConfig(configFile)
} catch (error) {
  console.error(`shipper: ${error.message}`)
  process.exit(1)
}

const isWild = segment => /[*?[]/.test(segment)

function segmentRegExp (segment) {
  let source = ''
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]
    if (c === '*') source += '[^/]*'
    else if (c === '?') source += '[^/]'
    else if (c === '[') {
      const end = segment.indexOf(']', i + 2)
      if (end < 0) { source += '\\['; continue }
      let body = segment.slice(i + 1, end)
      if (body.startsWith('!')) body = '^' + body.slice(1)
      source += `[${body.replace(/\\/g, '\\\\')}]`
      i = end
    } else source += c.replace(/[.+^${}()|\\\]]/g, '\\$&')
  }
  return new RegExp(`^${source}$`)
}

/** The files a glob matches (sorted) and its fixed leading directory. */
function expand (pattern) {
  const segments = resolve(pattern).split(sep).filter(Boolean)
  const fixed = []
  for (const segment of segments) {
    if (isWild(segment)) break
    fixed.push(segment)
  }
  let paths = [sep]
  for (const segment of segments) {
    const next = []
    if (!isWild(segment)) {
      for (const path of paths) next.push(join(path, segment))
    } else {
      const re = segmentRegExp(segment)
      for (const path of paths) {
        let names = []
        try { names = readdirSync(path) } catch { continue }
        for (const name of names.sort()) {
          if (name.startsWith('.') && !segment.startsWith('.')) continue
          if (re.test(name)) next.push(join(path, name))
        }
      }
    }
    paths = next
  }
  const files = paths.filter(path => {
    try { return statSync(path).isFile() } catch { return false }
  })
  // Without any wildcard the glob names one file; its directory is the base.
  const baseSegments = fixed.length === segments.length ? fixed.slice(0, -1) : fixed
  return { files, base: sep + baseSegments.join(sep) }
}

/** @type {Record<string, { ino: number, offset: number }>} */
let offsets = {}
try {
  offsets = JSON.parse(readFileSync(config['offsets-file'], 'utf8'))
} catch { /* first run */ }

function saveOffsets () {
  if (!config['offsets-file']) return
  const tmp = `${config['offsets-file']}.tmp-${process.pid}`
  writeFileSync(tmp, JSON.stringify(offsets))
  renameSync(tmp, config['offsets-file'])
}

function excluded (file) {
  const out = resolve(config.out)
  if (file === out) return true
  if (config['exclude-name'] && basename(file) === config['exclude-name']) return true
  const dir = config['exclude-dir'] ? resolve(config['exclude-dir']) + sep : undefined
  return dir !== undefined && file.startsWith(dir)
}

/** New complete lines of one file, advancing its offset record. */
function collect (file, base) {
  const st = statSync(file)
  let record = offsets[file]
  if (record === undefined || record.ino !== st.ino || st.size < record.offset) record = { ino: st.ino, offset: 0 }
  offsets[file] = record
  if (st.size <= record.offset) return ''
  const length = Math.min(st.size - record.offset, chunkBytesMax)
  const buffer = Buffer.alloc(length)
  const fd = openSync(file, 'r')
  let read
  try {
    read = readSync(fd, buffer, 0, length, record.offset)
  } finally {
    closeSync(fd)
  }
  const chunk = buffer.subarray(0, read)
  let end = chunk.lastIndexOf(10) + 1
  // A line longer than a whole chunk is shipped in pieces rather than never.
  if (end === 0 && read === chunkBytesMax) end = read
  if (end === 0) return ''
  record.offset += end
  const source = relative(base, file)
  let text = chunk.subarray(0, end).toString('utf8')
  if (text.endsWith('\n')) text = text.slice(0, -1)
  return text.split('\n').map(line => `${config.prefix ?? ''} ${source}: ${line}\n`).join('')
}

function tick () {
  const { files, base } = expand(config.glob)
  let output = ''
  const seen = new Set()
  for (const file of files) {
    if (excluded(file)) continue
    seen.add(file)
    try {
      output += collect(file, base)
    } catch (error) {
      log(`cannot read ${file}: ${error.message}`)
    }
  }
  for (const file of Object.keys(offsets)) {
    if (!seen.has(file)) delete offsets[file]
  }
  if (output !== '') appendFileSync(config.out, output)
  saveOffsets()
}

let timer
let ready = false
function loop () {
  try {
    tick()
  } catch (error) {
    log(`tick failed: ${error.message}`)
  }
  if (!ready && config['ready-file']) {
    ready = true
    try { writeFileSync(config['ready-file'], `${process.pid}\n`) } catch (error) { log(`cannot write ready file: ${error.message}`) }
  }
  timer = setTimeout(loop, Number(config['interval-ms']) || 1000)
}

process.on('SIGHUP', () => {
  try {
    config = readConfig(configFile)
    log(`config reloaded; glob ${config.glob}`)
  } catch (error) {
    log(`config reload failed: ${error.message}`)
  }
})
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    clearTimeout(timer)
    log(`${signal}: stopping`)
    process.exit(0)
  })
}
log(`shipper ${VERSION} following ${config.glob} into ${config.out}`)
loop()
