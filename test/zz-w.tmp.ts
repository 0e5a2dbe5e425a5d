import { randomWalk, describeWalkFailure } from './support/unit-model-support.ts'
const from = Number(process.argv[2] ?? 1), n = Number(process.argv[3] ?? 50), len = Number(process.argv[4] ?? 30)
const t = performance.now(); let hooks = 0
const kinds = new Map<string, number[]>()
for (let seed = from; seed < from + n; seed++) {
  const w = await randomWalk(seed, len)
  hooks += w.hooks
  if (w.failure !== undefined || w.violations.length) {
    const key = (w.violations[0] ? w.violations[0].property + ' ' + w.violations[0].message.replace(/\(recent.*$/, '').replace(/[a-z]+\/\d+/g, 'U').replace(/\d+/g, 'N') : (w.failure ?? '').split('\n')[0]!.replace(/\d+/g, 'N')).slice(0, 200)
    const list = kinds.get(key) ?? []; list.push(seed); kinds.set(key, list)
    if (process.env.SHOW === String(seed)) console.log(describeWalkFailure(w, len))
  }
}
for (const [k, v] of kinds) console.log(v.length, k, 'seeds', v.slice(0, 8).join(','))
console.log('walks', n, 'hooks', hooks, 'ms', (performance.now() - t).toFixed(0))
