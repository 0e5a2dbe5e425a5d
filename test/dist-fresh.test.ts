/**
 * When `npm test` (scripts/run-tests.ts) and a test file run alone (test/support/dist.ts)
 * build dist/ again: only when something it is built from changed after the bundle was
 * written (scripts/dist-fresh.ts), so a clean clone's `npm test` does not repeat the
 * build `npm ci` has just made, and an edited source is never run from yesterday's bundle.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { distFresh, distInputs } from '../scripts/dist-fresh.ts'

/** A tree with every input at `inputsAt` (seconds since the epoch) and, unless `bundleAt` is undefined, dist/cantrip.mjs then. */
function tree (inputsAt: number, bundleAt: number | undefined): string {
  const root = mkdtempSync(join(tmpdir(), 'dist-fresh-'))
  for (const input of distInputs) {
    const isFile = /\.(json|ts)$/.test(input)
    const path = join(root, input)
    if (isFile) {
      mkdirSync(join(path, '..'), { recursive: true })
      writeFileSync(path, '')
    } else {
      mkdirSync(join(path, 'deep'), { recursive: true })
      writeFileSync(join(path, 'deep', 'file.ts'), '')
    }
  }
  const stamp = (path: string, at: number): void => { utimesSync(path, at, at) }
  for (const input of distInputs) {
    const path = join(root, input)
    if (!/\.(json|ts)$/.test(input)) {
      stamp(join(path, 'deep', 'file.ts'), inputsAt)
      stamp(join(path, 'deep'), inputsAt)
    }
    stamp(path, inputsAt)
  }
  if (bundleAt !== undefined) {
    mkdirSync(join(root, 'dist'))
    writeFileSync(join(root, 'dist', 'cantrip.mjs'), '')
    stamp(join(root, 'dist', 'cantrip.mjs'), bundleAt)
  }
  return root
}

const t0 = 1_700_000_000

test('a bundle written after every input is fresh; no bundle is never fresh', () => {
  const built = tree(t0, t0 + 10)
  const none = tree(t0, undefined)
  try {
    assert.ok(distFresh(built))
    assert.not.ok(distFresh(none))
  } finally {
    rmSync(built, { recursive: true, force: true })
    rmSync(none, { recursive: true, force: true })
  }
})

test('a file changed deep in a source directory, the lock file or the build script makes it stale', () => {
  for (const changed of ['agent/deep/file.ts', 'runtime/deep/file.ts', 'package-lock.json', 'scripts/build.ts', 'scripts/code-cache.ts']) {
    const root = tree(t0, t0 + 10)
    try {
      utimesSync(join(root, changed), t0 + 20, t0 + 20)
      assert.not.ok(distFresh(root), changed)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }
})

test('a file removed from a source directory (its directory changed) makes it stale; a missing input is no input', () => {
  const root = tree(t0, t0 + 10)
  try {
    rmSync(join(root, 'bin'), { recursive: true })
    assert.ok(distFresh(root), 'bin/ absent: judged on the rest')
    rmSync(join(root, 'sim', 'deep', 'file.ts'))
    assert.not.ok(distFresh(root), 'sim/deep changed just now')
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test.run()
