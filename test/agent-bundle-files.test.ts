/**
 * Which files of dist/ the agent bundle ships (agent/tools/agent-bundle.ts): cantripd.mjs,
 * the stub and every chunk they import, followed through static, side-effect and dynamic
 * imports, minified or not. scripts/build.ts minifies syntax, which writes a side-effect
 * import as `import"./chunk-X.mjs"`: a pattern that wanted a space after `import` left
 * such a chunk out, and every machine started from the shipped bundle (manual provider,
 * another host) exited at once with ERR_MODULE_NOT_FOUND.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { agentDistFiles } from '../agent/tools/agent-bundle.ts'

test('every chunk the agent imports, minified or spaced, and none it does not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-agent-files-'))
  try {
    const dist = join(dir, 'dist')
    mkdirSync(dist)
    const files: Record<string, string> = {
      'cantripd.mjs': 'import"./chunk-SIDE.mjs";import{a as b}from"./chunk-NAMED.mjs";export*from"./chunk-STAR.mjs";const l=()=>import("./lazy-LOAD.mjs");',
      'cantripd-stub.mjs': 'import { x } from "./chunk-STUB.mjs"\nimport "./chunk-SPACED.mjs"\n',
      'chunk-SIDE.mjs': 'import"./chunk-DEEP.mjs";',
      'chunk-NAMED.mjs': '', 'chunk-STAR.mjs': '', 'lazy-LOAD.mjs': '', 'chunk-STUB.mjs': '', 'chunk-SPACED.mjs': '', 'chunk-DEEP.mjs': '',
      'cantrip.mjs': 'import"./chunk-CLIENT.mjs";', 'chunk-CLIENT.mjs': ''
    }
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dist, name), text)
    assert.equal(agentDistFiles(dist), [
      'cantripd-stub.mjs', 'cantripd.mjs', 'chunk-DEEP.mjs', 'chunk-NAMED.mjs', 'chunk-SIDE.mjs', 'chunk-SPACED.mjs', 'chunk-STAR.mjs', 'chunk-STUB.mjs', 'lazy-LOAD.mjs'
    ])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the agent\'s program bundle and code cache beside its loader, and what the bundle imports on use', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-agent-files-'))
  try {
    const dist = join(dir, 'dist')
    mkdirSync(dist)
    const files: Record<string, string> = {
      'cantripd.mjs': 'runCachedProgram({bundle:"cantripd.cjs"});',
      'cantripd.cjs': 'const x=()=>__cImp("./lazy-SEPARATE.mjs");',
      'cantripd.cjs.v8cache': '', 'lazy-SEPARATE.mjs': '',
      'cantrip.mjs': '', 'cantrip.cjs': '', 'cantrip.cjs.v8cache': ''
    }
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dist, name), text)
    assert.equal(agentDistFiles(dist), ['cantripd.cjs', 'cantripd.cjs.v8cache', 'cantripd.mjs', 'lazy-SEPARATE.mjs'])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
