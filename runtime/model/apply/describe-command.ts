import { describeValue } from '../../errors.ts'
import type { Entity, ModelCommand } from '../model-types.ts'

// Not refusal.ts's q: that module imports this one.
const q = describeValue

/**
 * How messages and request keys name an entity and a command.
 */

/** The Juju tag of an entity, as messages and request keys name it (`machine-3`, `unit-web-0`). */
export function entityTag (entity: Entity): string {
  switch (entity.kind) {
    case 'user': return `user-${entity.name}`
    case 'controller': return `controller-${entity.id}`
    case 'machine': return `machine-${entity.id.replaceAll('/', '-')}`
    case 'unit': return `unit-${entity.name.replaceAll('/', '-')}`
  }
}

/** What the command tried to do, for `controller: cannot <this>: <why>`. */
export function describeCommand (c: ModelCommand): string {
  switch (c.type) {
    case 'add-charm': return `add charm ${q(c.url)}`
    case 'deploy': return `deploy ${q(c.application)}`
    case 'add-unit': return `add unit to ${q(c.application)}`
    case 'remove-unit': return `remove unit ${q(c.unit)}`
    case 'remove-application': return `remove application ${q(c.application)}`
    case 'set-config': return `set config of ${q(c.application)}`
    case 'set-model-config': return 'set model config'
    case 'apply-batch': return `apply a batch of ${Array.isArray(c.commands) ? c.commands.length : 0} commands`
    case 'add-agent-binary': return `add agent binary ${q(c.version)} for ${q(c.platform)}`
    case 'set-agent-version': return `set the agent version to ${q(c.version)}`
    case 'set-machine-agent-version': return `record the agent version of machine ${q(c.machine)}`
    case 'integrate': return `integrate ${q(c.a)} with ${q(c.b)}`
    case 'remove-relation': return `remove relation ${q(c.relationId)}`
    case 'enter-scope': return `enter scope of relation ${q(c.relationId)} for ${q(c.unit)}`
    case 'leave-scope': return `leave scope of relation ${q(c.relationId)} for ${q(c.unit)}`
    case 'relation-settings': return c.application === true
      ? `write application settings on relation ${q(c.relationId)} for ${q(c.unit)}`
      : `write relation settings of ${q(c.unit)} on relation ${q(c.relationId)}`
    case 'leader-settings': return `write leader settings of ${q(c.application)} for ${q(c.unit)}`
    case 'claim-leadership': return `claim leadership of ${q(c.application)} for ${q(c.unit)}`
    case 'extend-leadership': return `extend leadership of ${q(c.application)} for ${q(c.unit)}`
    case 'release-leadership': return `release leadership of ${q(c.application)} for ${q(c.unit)}`
    case 'unit-dead': return `mark unit ${q(c.unit)} dead`
    case 'set-unit-status': return `set workload status of ${q(c.unit)}`
    case 'set-agent-status': return `set agent status of ${q(c.unit)}`
    case 'resolved': return `resolve ${q(c.unit)}`
    case 'clear-resolved': return `clear the resolved mode of ${q(c.unit)}`
    case 'enqueue-action': return `run action ${q(c.name)} on ${q(c.unit)}`
    case 'start-task': return `start task ${q(c.taskId)} on ${q(c.unit)}`
    case 'complete-action': return `complete action ${q(c.actionId)} of ${q(c.unit)}`
    case 'enqueue-command': return `run commands on ${q(c.unit)}`
    case 'complete-command': return `complete command ${q(c.commandId)} of ${q(c.unit)}`
    case 'retry-provisioning': return `retry provisioning of machine ${q(c.machine)}`
    case 'enqueue-operation': return c.task?.kind === 'action' ? `run action ${q(c.task.name)}` : 'run commands'
    case 'storage-attached': return `attach storage ${q(c.storageId)} to ${q(c.unit)}`
    case 'add-storage': return `add storage ${q(c.name)} to ${q(c.unit)}`
    case 'detach-storage': return `detach storage ${q(c.storageId)} from ${q(c.unit)}`
    case 'storage-detached': return `remove the attachment of storage ${q(c.storageId)} to ${q(c.unit)}`
    case 'add-machine': return 'add a machine'
    case 'set-machine-provisioning': return `record the provisioning of machine ${q(c.machine)}`
    case 'register-machine-agent': return `register the agent of machine ${q(c.machine)}`
    case 'set-machine-instance': return `set the instance of machine ${q(c.machine)}`
    case 'set-machine-status': return `set the status of machine ${q(c.machine)}`
    case 'record-agent-presence': return `record the presence of machine ${q(c.machine)}'s agent`
    case 'remove-machine': return `remove machine ${q(c.machine)}`
    case 'machine-dead': return `mark machine ${q(c.machine)} dead`
    case 'refresh': return `refresh ${q(c.application)} to ${q(c.charm)}`
    case 'expose': return `expose ${q(c.application)}`
    case 'unexpose': return `unexpose ${q(c.application)}`
    case 'add-model': return `add model ${q(c.name)}`
    case 'set-model-uuid': return `set the model's UUID to ${q(c.uuid)}`
    case 'destroy-model': return `destroy model ${q(c.name)}`
    case 'remove-model': return `remove model ${q(c.name)}`
    case 'claim-controller-lease': return `claim controller lease ${q(c.lease)} for ${q(c.controller)}`
    case 'release-controller-lease': return `release controller lease ${q(c.lease)} for ${q(c.controller)}`
    case 'commit-hook-changes': return `commit hook changes of ${q(c.unit)}`
    case 'set-workload-version': return `set the workload version of ${q(c.unit)}`
    case 'set-application-status': return `set the application status for ${q(c.unit)}`
    case 'attach-resource': return `attach resource ${q(c.resource)} to ${q(c.application)}`
    // Secrets are named by id only: a refusal never carries content.
    case 'secret-consumed': return `track secret ${q(c.id)} for ${q(c.unit)}`
    case 'add-secret': return 'add secret'
    case 'update-secret': return `update secret ${q(c.secret.id)}`
    case 'remove-secret': return `remove secret ${q(c.id)}`
    case 'grant-secret': return `grant secret ${q(c.id)}`
    case 'revoke-secret': return `revoke secret ${q(c.id)}`
    case 'secret-rotated': return `record the rotation of secret ${q(c.id)}`
    case 'secret-rotate-due': return `mark the rotation of secret ${q(c.id)} due`
    case 'secret-expire-due': return `mark the expiry of secret ${q(c.id)} revision ${c.revision} due`
  }
}
