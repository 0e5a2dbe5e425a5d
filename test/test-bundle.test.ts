/**
 * scripts/test-bundle.ts (run-tests' default; CANTRIP_TEST_BUNDLED=0 turns it off): a job's files bundled and
 * run under plain node through uvu's runner, each file's header as uvu prints it, each
 * module seeing its own import.meta (a string naming it left alone), the polyfill run
 * first, and stack traces naming the source file.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { bundleTests } from '../scripts/test-bundle.ts'
import { repoRoot } from './support/dist.ts'

test('two files bundled run in order under plain node, each module with its own import.meta', async () => {
  mkdirSync(join(repoRoot, '.cache'), { recursive: true })
  const dir = mkdtempSync(join(repoRoot, '.cache', 'test-bundle-'))
  try {
    const tests = join(dir, 'tests')
    mkdirSync(join(tests, 'sub'), { recursive: true })
    writeFileSync(join(tests, 'sub', 'where.ts'), 'export const where = { url: import.meta.url, dirname: import.meta.dirname, filename: import.meta.filename }\n')
    const body = (name: string): string => [
      "import { test } from 'uvu'",
      "import { where } from './sub/where.ts'",
      `test('${name}', () => { console.log(JSON.stringify({ name: '${name}', own: import.meta.url, where, text: 'import.meta.url', resolvers: typeof Promise.withResolvers, stack: new Error().stack?.split('\\n')[1] })) })`,
      'test.run()'
    ].join('\n')
    writeFileSync(join(tests, 'a.test.ts'), body('a'))
    writeFileSync(join(tests, 'b.test.ts'), body('b'))
    const args = await bundleTests(tests, ['b.test.ts', 'a.test.ts'], join(dir, 'out'))
    const run = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 })
    assert.is(run.status, 0, run.stderr)
    const lines = run.stdout.split('\n')
    assert.ok(lines.indexOf('b.test.ts') >= 0 && lines.indexOf('b.test.ts') < lines.indexOf('a.test.ts'), run.stdout)
    const seen = lines.filter(line => line.startsWith('{')).map(line => JSON.parse(line) as Record<string, unknown>)
    assert.equal(seen.map(s => s['name']), ['b', 'a'])
    const whereTs = join(tests, 'sub', 'where.ts')
    for (const s of seen) {
      assert.is(s['own'], pathToFileURL(join(tests, `${String(s['name'])}.test.ts`)).href)
      assert.equal(s['where'], { url: pathToFileURL(whereTs).href, dirname: join(tests, 'sub'), filename: whereTs })
      assert.is(s['text'], 'import.meta.url')
      assert.is(s['resolvers'], 'function')
      assert.match(String(s['stack']), `${String(s['name'])}.test.ts:3:`, String(s['stack']))
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
