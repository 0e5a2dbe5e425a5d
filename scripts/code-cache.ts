/**
 * `node --import tsx scripts/code-cache.ts BUNDLE OUT DIGEST`: writes V8's code cache of a
 * program bundle (scripts/build.ts) to OUT, after the bundle's sha256 DIGEST (hex), as
 * agent/tools/cached-program.ts reads it. A process of its own, since it compiles with
 * `--no-lazy` (every function, so the cache holds them all) and must not change the
 * build's flags; the flag is set back before the cache is made, so V8 accepts the cache
 * in a process started without it.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { setFlagsFromString } from 'node:v8'
import { Script } from 'node:vm'
import { wrapProgram } from '../agent/tools/cached-program.ts'

const [bundle, out, digest] = process.argv.slice(2)
if (bundle === undefined || out === undefined || digest === undefined || !/^[0-9a-f]{64}$/.test(digest)) {
  process.stderr.write(`code-cache: expected BUNDLE OUT DIGEST (64 hex digits), got ${JSON.stringify(process.argv.slice(2))}\n`)
  process.exit(64)
}
setFlagsFromString('--no-lazy')
const script = new Script(wrapProgram(readFileSync(bundle, 'utf8')), { filename: bundle })
setFlagsFromString('--lazy')
const temporary = `${out}.tmp-${process.pid}`
writeFileSync(temporary, Buffer.concat([Buffer.from(digest, 'hex'), script.createCachedData()]))
renameSync(temporary, out)
