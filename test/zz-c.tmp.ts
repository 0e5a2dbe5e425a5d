import { exploreModel, fullModel, smallModel, checkEdge, checkPaths, formatViolations, serializeModelEvent, pathTo } from './support/unit-model-support.ts'
const opts = process.argv[2] === 'small' ? smallModel : { ...fullModel, maxStates: Number(process.argv[3] ?? 5000) }
const m = exploreModel(opts)
console.log('states', Object.keys(m.adjacency).length, 'edges', m.edges.length, 'ms', m.ms.toFixed(0))
let bad = 0
const t = performance.now()
for (const e of m.edges) { const v = checkEdge(e); if (v.length) { bad++; if (bad <= 3) console.log('EDGE', e.from, '--', serializeModelEvent(e.event), '->', e.to, '\n', pathTo(m, e.from).join(' → '), '\n', formatViolations(v)) } }
console.log('edge violations', bad, 'ms', (performance.now() - t).toFixed(0))
let pbad = 0
const t2 = performance.now()
checkPaths(m, (s, v) => { pbad++; if (pbad <= 3) console.log('PATH', pathTo(m, s).join(' → '), '\n', formatViolations(v)) })
console.log('path violations', pbad, 'ms', (performance.now() - t2).toFixed(0))
