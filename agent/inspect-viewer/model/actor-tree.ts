import type { ActorView, ViewState } from './view-state.ts'

/**
 * The actor tree per agent: agent → machine → units → relations, with the agent's other
 * actors (Raft role, provisioner, deployer, …) beside the machine. Parents come from the
 * stream's `parentId`; an actor whose parent is unknown hangs under its agent.
 */

export interface TreeNode {
  /** Actor key, or `agent:<name>` for an agent. */
  key: string
  label: string
  kind: string
  actor: ActorView | undefined
  children: TreeNode[]
}

/** Order of kinds under one parent: the machine first, then units, relations, the rest. */
const kindOrder = ['machine', 'unit', 'relation', 'raft', 'provisioner', 'deployer']

function kindRank (kind: string): number {
  const i = kindOrder.indexOf(kind)
  return i < 0 ? kindOrder.length : i
}

function byKindThenName (a: TreeNode, b: TreeNode): number {
  return kindRank(a.kind) - kindRank(b.kind) || a.label.localeCompare(b.label, 'en', { numeric: true })
}

/** Only actors with a cantrip kind other than `other` are shown; their XState helpers (invoked promises) are not. */
function shown (actor: ActorView): boolean {
  return actor.kind !== 'other'
}

export function actorTree (state: ViewState): TreeNode[] {
  const nodes = new Map<string, TreeNode>()
  for (const actor of state.actors.values()) {
    if (shown(actor)) nodes.set(actor.key, { key: actor.key, label: actor.name, kind: actor.kind, actor, children: [] })
  }
  const agents = new Map<string, TreeNode>()
  const agentNode = (agent: string): TreeNode => {
    let node = agents.get(agent)
    if (node === undefined) {
      node = { key: `agent:${agent}`, label: agent, kind: 'agent', actor: undefined, children: [] }
      agents.set(agent, node)
    }
    return node
  }
  // Unit actors run beside their machine actor in one agent: drawn under it when it is the only one.
  const machineOf = (agent: string): TreeNode | undefined => {
    const machines = [...nodes.values()].filter(n => n.kind === 'machine' && n.actor!.agent === agent)
    return machines.length === 1 ? machines[0] : undefined
  }
  for (const node of nodes.values()) {
    const actor = node.actor!
    // Walk up past hidden helpers to the nearest shown ancestor.
    let parentKey = actor.parentKey
    while (parentKey !== undefined && !nodes.has(parentKey)) parentKey = state.actors.get(parentKey)?.parentKey
    const parent = parentKey !== undefined
      ? nodes.get(parentKey)!
      : (actor.kind === 'unit' ? machineOf(actor.agent) : undefined) ?? agentNode(actor.agent)
    parent.children.push(node)
  }
  for (const agent of state.dropped.keys()) agentNode(agent)
  const sortDeep = (list: TreeNode[]): void => { list.sort(byKindThenName); for (const n of list) sortDeep(n.children) }
  const roots = [...agents.values()].sort((a, b) => a.label.localeCompare(b.label, 'en', { numeric: true }))
  for (const root of roots) sortDeep(root.children)
  return roots
}
