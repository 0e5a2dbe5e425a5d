import { exploreModel, allStateNodeIds, allTransitions } from './support/unit-model-support.ts'
const m = exploreModel(undefined, 300_000)
console.log('states', Object.keys(m.adjacency).length, 'edges', m.edges.length, 'ms', m.ms.toFixed(0))
const nodes = allStateNodeIds(); const ts = allTransitions()
console.log('nodes', nodes.length, 'missing', nodes.filter(n => !m.statesReached.has(n)))
console.log('transitions', ts.length, 'missing', ts.filter(t => !m.transitionsTaken.has(t)))
console.log('extra', [...m.transitionsTaken.keys()].filter(k => !ts.includes(k)))
