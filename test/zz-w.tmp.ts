import { randomWalk, describeWalkFailure } from './support/unit-model-support.ts'
const n = Number(process.argv[2] ?? 50), len = Number(process.argv[3] ?? 30)
const t = performance.now(); let fails = 0, hooks = 0
for (let seed = 1; seed <= n; seed++) {
  const w = await randomWalk(seed, len)
  hooks += w.hooks
  if (w.failure !== undefined || w.violations.length) { fails++; if (fails <= 3) console.log(describeWalkFailure(w, len)) }
}
console.log('walks', n, 'fails', fails, 'hooks', hooks, 'ms', (performance.now() - t).toFixed(0))
