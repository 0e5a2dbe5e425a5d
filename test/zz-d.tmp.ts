import { randomWalk } from './support/unit-model-support.ts'
import { UnitWorld } from '../sim/unit-world.ts'
const orig = UnitWorld.prototype.settle
let world: UnitWorld | undefined
;(UnitWorld.prototype as any).settle = async function (this: UnitWorld) { world = this; return orig.call(this) }
const seed = Number(process.argv[2] ?? 276)
const w = await randomWalk(seed, 30)
console.log(w.failure?.split('\n')[0])
for (const e of world!.emitted) if (e.unit === 'web/0' && /hook|relation|clearResolved/.test(e.event.type)) console.log(e.unit, e.event.type, 'hook' in e.event ? JSON.stringify(e.event.hook) : ('relationId' in e.event ? e.event.relationId : ''))
console.log('durable web/0 op', JSON.stringify(world!.durable.get('web/0')?.operation), Object.keys(world!.durable.get('web/0')?.relations ?? {}))
console.log('relations', world!.controller.relationIds())
for (const e of world!.emitted) if (/relation\.(enter|leave)Scope|unit.terminated/.test(e.event.type)) console.log(e.unit, e.event.type, (e.event as any).relationId)
