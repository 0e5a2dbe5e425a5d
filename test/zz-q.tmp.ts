import { exploreModel, smallModel, pathTo } from './support/unit-model-support.ts'
const m = exploreModel(smallModel)
const keys = Object.keys(m.adjacency).filter(k => k.includes(process.argv[2] ?? 'queued/start'))
console.log(keys.length)
for (const k of keys.slice(0, 5)) { console.log(k); console.log('  ', pathTo(m, k).join(' → ')); const t = m.adjacency[k as keyof typeof m.adjacency]!.transitions; console.log('   events:', Object.keys(t).join(', ')) }
