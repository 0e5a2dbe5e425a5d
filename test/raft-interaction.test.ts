/**
 * Runs every interaction script in test/testdata/raft/ and compares each command's
 * output with the golden text that follows it. `REWRITE=1` regenerates the files from
 * the actual output instead: read the diff before committing it.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { RaftInteractionEnv, formatScript, parseScript } from './support/raft-interaction.ts'

const dir = fileURLToPath(new URL('./testdata/raft/', import.meta.url))
const rewrite = process.env['REWRITE'] === '1'

for (const file of readdirSync(dir).filter(name => name.endsWith('.txt')).sort()) {
  test(`raft interaction: ${file}`, () => {
    const path = join(dir, file)
    const cases = parseScript(readFileSync(path, 'utf8'))
    const env = new RaftInteractionEnv()
    const results = cases.map(c => ({ ...c, actual: env.run(c.line) }))
    if (rewrite) {
      writeFileSync(path, formatScript(results))
      return
    }
    for (const [i, c] of results.entries()) {
      assert.fixture(c.actual, c.expected, `${file}: command ${i + 1} "${c.line}" (REWRITE=1 regenerates)`)
    }
    assert.equal(env.violations, [], `${file}: safety violations`)
  })
}

test.run()
