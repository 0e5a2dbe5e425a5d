import { UnitWorld } from '../sim/unit-world.ts'
const world = new UnitWorld()
world.controller.deploy({ name: 'web' }, 1)          // web/0 on machine 0
world.controller.deploy({ name: 'db' }, 1, ['0'])    // db/0 on the same machine
await world.settle()
world.holdHook('db/0', 'server-relation-created')    // db/0 holds the machine lock…
world.failHook('web/0', 'db-relation-created')
const id = world.controller.relate('web:db', 'db:server')
await world.settle()                                 // …while web/0 decided db-relation-created and waits for the lock
world.controller.removeRelation(id)                  // the relation is dying before web/0 enters its scope
await world.settle()
world.releaseHook('db/0')                            // web/0 runs created (scope refused: dying) and fails; db/0 runs -broken, leaves: relation gone
await world.settle()
console.log(world.hooks('web/0'), world.stateOf('web/0'), world.controller.relationIds())
world.controller.resolved('web/0', 'no-hooks')
try { await world.settle() } catch (e) { console.log('settle threw:', String(e)) }
console.log('errors:', world.errors().map(String))
