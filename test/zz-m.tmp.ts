import { exploreModel, smallModel } from './support/unit-model-support.ts'
const m = exploreModel({ ...smallModel, maxStates: Infinity }, 1e9)
console.log('states', Object.keys(m.adjacency).length, 'edges', m.edges.length, 'ms', m.ms.toFixed(0))
const keys = Object.keys(m.adjacency)
const dims = keys.map(k => k.split(';'))
for (let i = 0; i < dims[0]!.length; i++) { const set = new Map<string, number>(); for (const d of dims) set.set(d[i] ?? '', (set.get(d[i] ?? '') ?? 0) + 1); console.log(i, set.size, [...set].sort((a,b)=>b[1]-a[1]).slice(0, 12).map(([k,v])=>`${k}:${v}`).join('  ')) }
import { allStateNodeIds, allTransitions } from './support/unit-model-support.ts'
const nodes = allStateNodeIds(); const ts = allTransitions()
console.log('nodes', nodes.length, 'missing', nodes.filter(n => !m.statesReached.has(n)))
console.log('transitions', ts.length, 'missing', ts.filter(t => !m.transitionsTaken.has(t)))
console.log('extra', [...m.transitionsTaken.keys()].filter(k => !ts.includes(k)))
