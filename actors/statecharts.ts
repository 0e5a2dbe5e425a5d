import type { Statechart } from '../runtime/statechart-diagram.ts'
import { controllerMachine } from './controller/controller-machine.ts'
import { machineMachine } from './machine/machine-machine.ts'
import { relationMachine } from './relation/relation-machine.ts'
import { unitMachine } from './unit/unit-machine.ts'
import { provisionerMachine } from './provisioner/provisioner-machine.ts'
import { deployerMachine } from './machine/deployer-machine.ts'

/**
 * Every statechart cantrip runs, in the order the README draws them. `npm run diagrams`
 * (agent/export-statecharts.ts, also `cantrip export-statecharts`) writes
 * `docs/statecharts/<name>.mmd` and `<name>.svg` for each and the README section; a test
 * fails when any of them no longer matches these definitions, or when a machine in
 * actors/ is missing here.
 */
export const statecharts: Statechart[] = [
  { name: 'machine', title: 'Machine', machine: machineMachine },
  { name: 'unit', title: 'Unit (the uniter)', machine: unitMachine },
  { name: 'relation', title: 'Relation', machine: relationMachine },
  { name: 'controller', title: 'Controller (Raft role and singular workers)', machine: controllerMachine },
  { name: 'provisioner', title: 'Provisioner (the controller leader\'s worker)', machine: provisionerMachine },
  { name: 'deployer', title: 'Deployer (the machine agent\'s unit agents)', machine: deployerMachine }
]
