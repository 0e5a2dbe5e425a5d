/// <reference lib="dom" />
import { actorTree, type TreeNode } from '../model/actor-tree.ts'
import { shortValueText, valueText } from '../model/statechart-graph.ts'
import { actorStopped, type ViewState } from '../model/view-state.ts'
import { esc } from './dom.ts'

/** The actor tree (agent → machine → units → relations) as HTML; a click selects an actor. */

function nodeHtml (node: TreeNode, selected: string | undefined, cursorSeq: number): string {
  const actor = node.actor
  const state = actor === undefined ? '' : valueText(actor.snapshot.value)
  const classes = ['node', `kind-${node.kind}`]
  if (node.key === selected) classes.push('selected')
  if (actor !== undefined && actorStopped(actor)) classes.push('stopped')
  if (actor !== undefined && actor.updatedSeq === cursorSeq) classes.push('changed')
  const attrs = actor === undefined
    ? `data-agent="${esc(node.label)}"`
    : `data-key="${esc(node.key)}" data-name="${esc(actor.name)}" data-actor-agent="${esc(actor.agent)}" data-kind="${esc(actor.kind)}" data-state="${esc(state)}"`
  const short = actor === undefined ? '' : shortValueText(actor.snapshot.value, actor.definition)
  const label = `<span class="label">${esc(node.label)}</span>${short === '' ? '' : ` <span class="state">${esc(short)}</span>`}`
  const children = node.children.map(c => nodeHtml(c, selected, cursorSeq)).join('')
  return `<div class="${classes.join(' ')}" ${attrs}><div class="row">${label}</div>${children === '' ? '' : `<div class="children">${children}</div>`}</div>`
}

export function renderTree (container: HTMLElement, state: ViewState, selected: string | undefined, sources: string): void {
  const roots = actorTree(state)
  const dropped = [...state.dropped].map(([agent, n]) => `<div class="dropped">${esc(agent)}: ${n} messages dropped</div>`).join('')
  container.innerHTML = `${sources}${dropped}${roots.map(r => nodeHtml(r, selected, state.seq)).join('')}`
}
