/**
 * `cantrip export-statecharts --format svg`: every registered statechart drawn as one
 * self-contained SVG laid out by elkjs. Checked for each: well-formed XML; every state
 * of the definition has its box and every event its labelled edge; nested states lie
 * inside their parents' boxes; the same definition gives the same bytes (here and in the
 * CLI's own process). The registry
 * covers every machine in actors/; the CLI refuses a bad --format with one line.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { AnyStateMachine, AnyStateNode } from 'xstate'
import { statecharts } from '../actors/statecharts.ts'
import { statechartSvg } from '../agent/statecharts/statechart-svg.ts'
import { eventLabel, invokeEventLabels, isInert, withGuard } from '../runtime/statechart-diagram.ts'
import { distProgram } from './support/dist.ts'

/** A strict check of the XML this renderer can write: declaration, one root, balanced tags, quoted attributes, known entities. */
function xmlProblems (xml: string): string[] {
  const problems: string[] = []
  let rest = xml.replace(/^<\?xml [^?]*\?>\s*/, '')
  const stack: string[] = []
  let roots = 0
  const token = /^(<\/([A-Za-z][\w:-]*)\s*>|<([A-Za-z][\w:-]*)((?:\s+[A-Za-z_:][\w:.-]*="[^"<]*")*)\s*(\/?)>|[^<]+)/
  while (rest.length > 0) {
    const m = token.exec(rest)
    if (m === null) {
      problems.push(`unparseable at ${JSON.stringify(rest.slice(0, 40))}`)
      break
    }
    if (m[2] !== undefined) {
      const open = stack.pop()
      if (open !== m[2]) problems.push(`</${m[2]}> closes <${open ?? 'nothing'}>`)
    } else if (m[3] !== undefined) {
      if (stack.length === 0) roots++
      const names = [...(m[4] ?? '').matchAll(/([A-Za-z_:][\w:.-]*)=/g)].map(a => a[1])
      if (new Set(names).size !== names.length) problems.push(`<${m[3]}> repeats an attribute`)
      if (m[5] !== '/') stack.push(m[3])
    } else if (stack.length === 0 && m[0].trim() !== '') {
      problems.push('text outside the root')
    }
    for (const entity of m[0].matchAll(/&([^;\s]*);?/g)) {
      if (!/^&(amp|lt|gt|quot|apos);$/.test(entity[0])) problems.push(`bad entity ${entity[0]}`)
    }
    rest = rest.slice(m[0].length)
  }
  if (stack.length > 0) problems.push(`unclosed <${stack.join('>, <')}>`)
  if (roots !== 1) problems.push(`${roots} root elements`)
  return problems
}

function unescape (text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&')
}

interface Box { x: number, y: number, width: number, height: number }

/** Each state's box, by `data-state`. */
function stateBoxes (svg: string): Map<string, Box & { type: string }> {
  const boxes = new Map<string, Box & { type: string }>()
  for (const m of svg.matchAll(/<g data-state="([^"]*)" data-type="([a-z]+)"><(rect|circle) ([^>]*)\/>/g)) {
    const attr = (name: string): number => Number(new RegExp(`\\b${name}="([-0-9.]+)"`).exec(m[4]!)?.[1])
    const box = m[3] === 'rect'
      ? { x: attr('x'), y: attr('y'), width: attr('width'), height: attr('height') }
      : { x: attr('cx') - attr('r'), y: attr('cy') - attr('r'), width: 2 * attr('r'), height: 2 * attr('r') }
    boxes.set(unescape(m[1]!), { ...box, type: m[2]! })
  }
  return boxes
}

function allStates (node: AnyStateNode): AnyStateNode[] {
  return [node, ...Object.values(node.states).flatMap(child => allStates(child as AnyStateNode))]
}

/** Every transition label of the definition, as the diagrams write them. */
function transitionLabels (machine: AnyStateMachine): Set<string> {
  const labels = new Set<string>()
  for (const node of allStates(machine.root)) {
    const invoked = invokeEventLabels(node)
    for (const [descriptor, list] of node.transitions) {
      for (const transition of list) if (!isInert(transition)) labels.add(withGuard(eventLabel(node, descriptor, transition, invoked), transition, descriptor))
    }
    for (const transition of node.always ?? []) if (!isInert(transition)) labels.add(withGuard('always', transition, ''))
  }
  return labels
}

const inside = (inner: Box, outer: Box): boolean =>
  inner.x >= outer.x - 0.1 && inner.y >= outer.y - 0.1 && inner.x + inner.width <= outer.x + outer.width + 0.1 && inner.y + inner.height <= outer.y + outer.height + 0.1

/**
 * Each statechart's SVG as laid out here; the CLI test below lays every one out again in
 * its own process and must write the same bytes (elkjs layout is most of this file's CPU,
 * so each drawing is made once per process).
 */
const drawnHere = new Map<string, string>()

test('every registered statechart: well-formed, complete, nested boxes inside their parents', async () => {
  const started = performance.now()
  for (const { name, title, machine } of statecharts) {
    const svg = await statechartSvg(machine, title)
    drawnHere.set(name, svg)
    assert.equal(xmlProblems(svg), [], `${name}.svg is well-formed`)
    assert.match(svg, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" /)
    assert.not.match(svg, /href="http|@import|url\((?!#arrow\))/, 'self-contained')
    const boxes = stateBoxes(svg)
    for (const node of allStates(machine.root)) {
      const id = node === machine.root ? machine.root.id : node.path.join('.')
      const box = boxes.get(id)
      assert.ok(box !== undefined, `${name}: state ${id} is drawn`)
      assert.ok(box.width > 0 && box.height > 0)
      if (node.parent !== undefined) {
        const parentId = node.parent === machine.root ? machine.root.id : node.parent.path.join('.')
        assert.ok(inside(box, boxes.get(parentId)!), `${name}: ${id} lies inside ${parentId}`)
      }
      if (node.type === 'final') assert.is(box.type, 'final')
      if (Object.keys(node.states).length > 0 && node.type === 'compound') assert.ok(boxes.has(`${id}#initial`), `${name}: ${id} has its initial marker`)
    }
    const drawn = new Set([...svg.matchAll(/data-event="([^"]*)"/g)].map(m => unescape(m[1]!)))
    for (const label of transitionLabels(machine)) assert.ok(drawn.has(label), `${name}: transition "${label}" is drawn`)
    // Labels are written on the edges, not only in attributes.
    for (const label of transitionLabels(machine)) assert.ok(svg.includes(`>${label.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</text>`), `${name}: "${label}" is visible`)
  }
  console.log(`statechart svg: ${statecharts.length} statecharts laid out and drawn in ${Math.round(performance.now() - started)} ms`)
})

test('the registry holds every statechart defined in actors/', () => {
  const ids = new Set<string>()
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = join(dir, entry.name)
      if (entry.isDirectory()) walk(file)
      else if (entry.name.endsWith('.ts')) {
        const text = readFileSync(file, 'utf8')
        for (const m of text.matchAll(/\.createMachine\(\{\s*id: '([^']+)'/g)) ids.add(m[1]!)
      }
    }
  }
  walk('actors')
  const registered = new Set(statecharts.map(s => s.machine.id))
  assert.ok(ids.size >= 6, `found ${[...ids].join(', ')}`)
  for (const id of ids) assert.ok(registered.has(id), `statechart "${id}" is in actors/statecharts.ts`)
  for (const kind of ['unit', 'relation', 'machine', 'controller', 'provisioner', 'deployer']) assert.ok(registered.has(kind), kind)
})

test('cantrip export-statecharts: svg files in --out, the same bytes as drawn here, a bad --format refused with one line', () => {
  const out = mkdtempSync(join(tmpdir(), 'statecharts-'))
  try {
    const run = (args: string[]): { status: number | null, stdout: string, stderr: string } =>
      spawnSync(process.execPath, [distProgram('cantrip'), 'export-statecharts', ...args], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } })
    const bad = run(['--format', 'png', '--out', out])
    assert.is(bad.status, 1)
    assert.equal(bad.stderr.trim().split('\n'), ['ERROR cantrip export-statecharts: expected --format mermaid, svg or mermaid,svg, got "png"'])
    assert.equal(readdirSync(out), [], 'nothing written')
    const started = performance.now()
    const ok = run(['--format', 'svg', '--out', out])
    const ms = Math.round(performance.now() - started)
    assert.is(ok.status, 0, ok.stderr)
    assert.equal(readdirSync(out).sort(), statecharts.map(s => `${s.name}.svg`).sort())
    // Deterministic: the same definition gives the same bytes in another process (the shipped bundle).
    assert.is(drawnHere.size, statecharts.length, 'every statechart was drawn by the first test')
    for (const { name } of statecharts) assert.is(readFileSync(join(out, `${name}.svg`), 'utf8'), drawnHere.get(name), `${name}: the same definition gives the same bytes`)
    assert.is(readFileSync(join(out, 'unit.svg'), 'utf8'), readFileSync('docs/statecharts/unit.svg', 'utf8'), 'the same drawing as the docs')
    assert.is(run(['--format', 'svg', '--out', out, '--check']).status, 0)
    const mermaid = run(['--format', 'mermaid', '--out', out])
    assert.is(mermaid.status, 0, mermaid.stderr)
    assert.ok(readdirSync(out).includes('unit.mmd') && !readdirSync(out).includes('README.md'), 'no README unless --readme')
    console.log(`cantrip export-statecharts --format svg: ${statecharts.length} files in ${ms} ms (process included)`)
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
})

test.run()
