import { agentNetworkProblem } from '../../agent-network.ts'
import { limits } from '../../limits.ts'
import { keys } from '../keys.ts'
import { machineAgentStatuses, machineInstanceStatuses } from '../model-types.ts'
import { withStatusChange } from '../status-history.ts'
import { requireAdmin, requireAnyController, requireMachineAgent } from './authorisation.ts'
import { machineId, text, optionalBoolean, clockReading, constraintsOf } from './fields.ts'
import { getMachine } from './lookups.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'
import { newMachine, destroyUnit } from './unit-records.ts'
import { putMachine, removeKey } from './writes.ts'

/**
 * The machine commands: adding, provisioning, registering, status and removal.
 */

export const machineCommands: HandlerTable<'retry-provisioning' | 'add-machine' | 'set-machine-provisioning' | 'register-machine-agent' | 'set-machine-instance' | 'set-machine-status' | 'remove-machine' | 'machine-dead'> = {
  // Juju's retry-provisioning (cmd/juju/machine/retryprovisioning.go): only a machine whose
  // provisioning failed, which the provisioner then starts again even after an error it
  // would not retry by itself (a manual host that was unreachable, say).
  'retry-provisioning': (d, c) => {
    requireAdmin(c)
    const machine = getMachine(d, c, machineId(c, c.machine))
    if (machine.life !== 'alive') refuse(c, `machine is ${machine.life}`)
    if (machine.instance.status !== 'provisioning error') refuse(c, `machine ${machine.id} is not in an error state (${machine.instance.status})`)
    putMachine(d, { ...machine, provisioningRetries: (machine.provisioningRetries ?? 0) + 1 })
    d.touch(keys.machineStatus(machine.id))
    return {}
  },

  'add-machine': (d, c) => {
    requireAdmin(c)
    let placement: string | null = null
    if (c.placement !== undefined) {
      placement = text(c, 'placement', c.placement)
      if (!/^ssh:[A-Za-z0-9._-]+@[A-Za-z0-9.:_[\]-]+$/.test(placement) || placement.length > 256) refuse(c, `placement ${q(placement)} is not ssh:user@host[:port]`)
    }
    let privateKey: string | undefined
    if (c.privateKey !== undefined) {
      privateKey = text(c, 'privateKey', c.privateKey)
      if (placement === null) refuse(c, 'a private key needs an ssh: placement')
      // A path, never the key: the controllers read the file where they run ssh.
      if (!/^\/[^\0\n]{0,1023}$/.test(privateKey)) refuse(c, `private key ${q(privateKey)} is not an absolute file path`)
    }
    const network = {
      ...(c.listen === undefined ? {} : { listen: text(c, 'listen', c.listen) }),
      ...(c.advertise === undefined ? {} : { advertise: text(c, 'advertise', c.advertise) })
    }
    const problem = agentNetworkProblem(network)
    if (problem !== undefined) refuse(c, problem)
    const machine = newMachine(d, constraintsOf(c, c.constraints), placement, privateKey, network)
    return { machines: [machine.id] }
  },

  'set-machine-provisioning': (d, c) => {
    requireAnyController(c)
    const machine = getMachine(d, c, machineId(c, c.machine))
    const token = text(c, 'token', c.token)
    const secret = text(c, 'secret', c.secret)
    if (!/^[0-9a-f]{16,128}$/.test(token) || !/^[0-9a-f]{32,128}$/.test(secret)) refuse(c, 'token and secret must be hex (16 to 128 and 32 to 128 digits)')
    if (optionalBoolean(c, 'renew', c.renew) === true) {
      if (machine.provisioning === null || machine.provisioning.token !== token) refuse(c, 'only the recorded provisioning token can be renewed')
      if (machine.instanceId !== null) refuse(c, `machine is provisioned as ${q(machine.instanceId)} already`)
      if (machine.life !== 'alive') refuse(c, `machine is ${machine.life}`)
      putMachine(d, { ...machine, agentPeer: null, provisioning: { token, secret } })
      return {}
    }
    // The first record stands: a provisioner that lost the race (a new leader) reuses it.
    if (machine.provisioning !== null || machine.life !== 'alive') return {}
    putMachine(d, { ...machine, provisioning: { token, secret } })
    return {}
  },

  'register-machine-agent': (d, c) => {
    requireAnyController(c)
    const machine = getMachine(d, c, machineId(c, c.machine))
    const peer = text(c, 'peer', c.peer)
    const secret = text(c, 'secret', c.secret)
    if (peer === '' || peer.length > 128) refuse(c, 'peer must be a peer id')
    if (machine.agentPeer === peer) return {}
    if (machine.agentPeer !== null) refuse(c, 'an agent has registered for it already')
    if (machine.life !== 'alive') refuse(c, `machine is ${machine.life}`)
    if (machine.provisioning === null || machine.provisioning.secret === '' || machine.provisioning.secret !== secret) refuse(c, 'the registration secret is wrong or used')
    putMachine(d, { ...machine, agentPeer: peer, provisioning: { token: machine.provisioning.token, secret: '' } })
    return {}
  },

  'set-machine-instance': (d, c) => {
    const id = machineId(c, c.machine)
    requireMachineAgent(c, id)
    const machine = getMachine(d, c, id)
    const instanceId = text(c, 'instance id', c.instanceId)
    if (instanceId === '') refuse(c, 'instance id is empty')
    if (machine.instanceId !== null && machine.instanceId !== instanceId) refuse(c, `machine is provisioned as ${q(machine.instanceId)} already`)
    if (!Array.isArray(c.addresses) || c.addresses.length > limits.machineAddressesMax || c.addresses.some(a => typeof a !== 'string' || a === '' || a.length > 256)) {
      refuse(c, `addresses must be at most ${limits.machineAddressesMax} non-empty strings`)
    }
    const addresses = [...c.addresses]
    if (machine.instanceId === instanceId && addresses.join(',') === machine.addresses.join(',')) return {}
    putMachine(d, { ...machine, instanceId, addresses })
    return {}
  },

  'set-machine-status': (d, c) => {
    const id = machineId(c, c.machine)
    requireMachineAgent(c, id)
    const machine = getMachine(d, c, id)
    if (c.agentStatus === undefined && c.instanceStatus === undefined) refuse(c, 'give an agent status, an instance status or both')
    if (c.agentStatus !== undefined && !machineAgentStatuses.includes(c.agentStatus)) refuse(c, `${q(c.agentStatus)} is not a machine status (${machineAgentStatuses.join(', ')})`)
    if (c.instanceStatus !== undefined && !machineInstanceStatuses.includes(c.instanceStatus)) refuse(c, `${q(c.instanceStatus)} is not an instance status (${machineInstanceStatuses.join(', ')})`)
    const message = text(c, 'message', c.message)
    const now = clockReading(c, c.now)
    // The machine's own agent may say it is a controller too (role both submits through its
    // own controller as the machine): that only keeps its own machine from being removed with
    // its last unit, never anything of another's, and remove-machine still removes it.
    const controller = optionalBoolean(c, 'controller', c.controller)
    if (controller === false) refuse(c, 'controller is true or absent')
    const agent = c.agentStatus === undefined ? machine.agent : { status: c.agentStatus, message, since: now, data: null }
    const instance = c.instanceStatus === undefined ? machine.instance : { status: c.instanceStatus, message, since: now, data: null }
    let statusHistory = machine.statusHistory
    if (c.agentStatus !== undefined) statusHistory = withStatusChange(statusHistory, 'juju-machine', agent)
    if (c.instanceStatus !== undefined) statusHistory = withStatusChange(statusHistory, 'machine', instance)
    d.machines.set(id, { ...machine, agent, instance, statusHistory, ...(controller === true ? { controller } : {}) })
    d.touch(keys.machineStatus(id))
    if (controller === true && machine.controller !== true) d.touch(keys.machine(id))
    return {}
  },

  'remove-machine': (d, c) => {
    requireAdmin(c)
    const machine = getMachine(d, c, machineId(c, c.machine))
    const force = optionalBoolean(c, 'force', c.force) ?? false
    if (machine.life !== 'alive') return {}
    if (machine.units.length > 0 && !force) refuse(c, `it hosts ${machine.units.map(u => q(u)).join(', ')}; remove them first or force it`)
    for (const unit of machine.units) if (d.unit(unit)?.principal === null) destroyUnit(d, unit)
    putMachine(d, { ...d.machine(machine.id)!, life: 'dying' })
    return {}
  },

  'machine-dead': (d, c) => {
    const id = machineId(c, c.machine)
    requireMachineAgent(c, id)
    const machine = d.machine(id)
    if (machine === undefined) return {}
    if (machine.life === 'alive') refuse(c, 'the machine is alive; remove it first')
    if (machine.units.length > 0) refuse(c, `units ${machine.units.map(u => q(u)).join(', ')} remain on it`)
    removeKey(d, keys.machine(id))
    removeKey(d, keys.machineStatus(id))
    d.machines.delete(id)
    return {}
  }
}
