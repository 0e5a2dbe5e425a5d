import { randomWalk } from './support/unit-model-support.ts'
import { Simulation } from '../sim/simulation.ts'
const lines: string[] = []
const orig = Simulation.prototype.trace
;(Simulation.prototype as any).trace = function (this: Simulation, line: string) { lines.push(line); return orig.call(this, line) }
const w = await randomWalk(Number(process.argv[2] ?? 276), 30)
console.log(w.failure?.split('\n')[0])
console.log(lines.filter(l => /web\/0 (hook.started|relation)|relation 2|crash|start |walk step/.test(l) && !/unit.status/.test(l)).slice(-60).join('\n'))
