import { exploreModel, fullModel, allStateNodeIds, allTransitions } from './support/unit-model-support.ts'
const m = exploreModel({ ...fullModel, maxStates: Number(process.argv[2] ?? 40000) }, 1e9)
console.log('states', Object.keys(m.adjacency).length, 'edges', m.edges.length, 'ms', m.ms.toFixed(0))
const nodes = allStateNodeIds(); const ts = allTransitions()
console.log('nodes', nodes.length, 'missing', nodes.filter(n => !m.statesReached.has(n)))
console.log('transitions', ts.length, 'missing', ts.filter(t => !m.transitionsTaken.has(t)))
