import type { Statechart } from '../runtime/statechart-diagram.ts'
import { controllerMachine } from './controller/controller-machine.ts'
import { machineMachine } from './machine/machine-machine.ts'
import { relationMachine } from './relation/relation-machine.ts'
import { unitMachine } from './unit/unit-machine.ts'

/**
 * The statecharts the README draws, in the order it draws them. `npm run diagrams`
 * (agent/export-statecharts.ts) writes `docs/statecharts/<name>.mmd` for each and the
 * README section; a test fails when either no longer matches these definitions.
 */
export const statecharts: Statechart[] = [
  { name: 'machine', title: 'Machine', machine: machineMachine },
  { name: 'unit', title: 'Unit (the uniter)', machine: unitMachine },
  { name: 'relation', title: 'Relation', machine: relationMachine },
  { name: 'controller', title: 'Controller (Raft role and singular workers)', machine: controllerMachine }
]
