import { exploreModel, smallModel } from './support/unit-model-support.ts'
const m = exploreModel(smallModel)
const keys = Object.keys(m.adjacency)
const dim = Number(process.argv[2] ?? 6), filter = process.argv[3] ?? ''
const count = new Map<string, number>()
for (const k of keys) { if (!k.includes(filter)) continue; const d = k.split(';'); const key = d[dim] ?? ''; count.set(key, (count.get(key) ?? 0) + 1) }
console.log([...count].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${v} ${k}`).join('\n'))
