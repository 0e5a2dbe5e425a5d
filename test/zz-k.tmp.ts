import { exploreModel, fullModel, smallModel } from './support/unit-model-support.ts'
import { describeHook } from '../actors/unit/hook-info.ts'
const m = exploreModel(process.argv[2] === 'small' ? smallModel : { ...fullModel, maxStates: Number(process.argv[3] ?? 5000) })
const kinds = new Map<string, number>()
for (const e of m.edges) for (const ev of e.trace.emitted) if (ev.type === 'hook.started' || ev.type === 'hook.committed') { const k = ev.type + ' ' + describeHook(ev.hook).replace(/ .*/, ''); kinds.set(k, (kinds.get(k) ?? 0) + 1) }
console.log([...kinds].sort().map(([k, v]) => `${v} ${k}`).join('\n'))
