/**
 * `cantrip version --all` lists its rows in a fixed order whatever peer answered first:
 * controllers by member name (natural: c2 before c10), then the machine agents by
 * machine id numerically (machine-2 before machine-10).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { sortedVersionRows, type VersionRow } from '../agent/cli/commands/version.ts'

test('controllers by member name, then machines by id numerically', () => {
  const row = (kind: string, peer: string, name?: string): VersionRow => ({ kind, peer, who: kind, version: '0.1.0', ...(name === undefined ? {} : { name }) })
  const rows = [row('machine-10', 'p5'), row('controller', 'p1', 'c10'), row('machine-2', 'p4'), row('controller', 'p2', 'c2'), row('machine-0', 'p3'), row('controller', 'p0', 'c0')]
  assert.equal(sortedVersionRows(rows).map(r => r.name ?? r.kind), ['c0', 'c2', 'c10', 'machine-0', 'machine-2', 'machine-10'])
  assert.equal(rows.map(r => r.name ?? r.kind)[0], 'machine-10', 'the input is left as it was')
})

test.run()
