/**
 * What only a controller runs, in one module cantripd loads when its role includes the
 * controller: the controller role (Raft, the model, the API, the provisioner) and the
 * providers it provisions machines with. A machine agent never loads it, so its idle
 * memory holds none of that code (issue 26: an idle machine agent under 80 MB RSS).
 */
export { ControllerRole } from './roles/controller-role.ts'
export { FaultInjectingProvider } from '../providers/fault-injecting-provider.ts'
export { modelMachinesHome } from '../providers/local-provider.ts'
export { createLocalProvider } from './create-local-provider.ts'
export { createManualProvider } from './create-manual-provider.ts'
