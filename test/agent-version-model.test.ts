/**
 * Agent versions in the model: version order (Juju's version.Number: a tagged build
 * sorts before its release), the add-agent-binary / set-agent-version /
 * set-machine-agent-version commands with their exact refusals, the model-config
 * refusal of agent-version (juju/juju cmd/juju/model/config.go: "agent-version must be
 * set via upgrade-…"), machine views carrying the binaries, and RaftSnapshots of models
 * without binaries staying the value they were.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { compareAgentVersions, noAgentBinaries, parseAgentVersion, sortAgentVersions } from '../runtime/model/agent-binaries.ts'
import { machineModelView } from '../runtime/model/machine-view.ts'
import { restoreModel, snapshotModel } from '../runtime/model/model-snapshot.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import { CommandProposer, type ModelCommandBody } from '../runtime/model/command-proposer.ts'
import type { Entity, ModelContext } from '../runtime/model/model-types.ts'
import { tableValues } from '../runtime/model/table.ts'

const admin: Entity = { kind: 'user', name: 'admin' }
const hashA = 'a'.repeat(64)
const hashB = 'b'.repeat(64)

type Body = ModelCommandBody

function apply (context: ModelContext, body: Body, proposer: Entity = admin): { context: ModelContext, error?: string } {
  const index = context.revision + 1
  const outcome = applyCommand(context, new CommandProposer({ proposer, requestPrefix: `r${index}` }).command(body), { index, term: 1 })
  return { context: outcome.context, ...(outcome.result.ok ? {} : { error: outcome.result.error }) }
}

function ok (context: ModelContext, body: Body, proposer: Entity = admin): ModelContext {
  const result = apply(context, body, proposer)
  assert.is(result.error, undefined)
  return result.context
}

const versions = suite('agent versions: parsing and order')

versions('versions parse as Juju\'s numbers and sort oldest first, a tagged build before its release', () => {
  assert.equal(parseAgentVersion('0.2.0'), { major: 0, minor: 2, patch: 0, tag: '' })
  assert.equal(parseAgentVersion('3.2-beta1'), { major: 3, minor: 2, patch: 0, tag: 'beta1' })
  assert.is(parseAgentVersion('v1.0'), undefined)
  assert.is(parseAgentVersion('1'), undefined)
  assert.ok(compareAgentVersions('0.1.1', '0.1.0') > 0)
  assert.ok(compareAgentVersions('0.10.0', '0.9.9') > 0)
  assert.ok(compareAgentVersions('1.0.0-rc1', '1.0.0') < 0)
  assert.equal(sortAgentVersions(['0.2.0', '0.1.0', '0.10.0', '0.2.0']), ['0.1.0', '0.2.0', '0.10.0'])
})

versions('the missing-binaries line names the version, platform, place and what there is', () => {
  assert.is(noAgentBinaries('0.3.0', 'linux/x64', 'the controller store', ['0.2.0', '0.1.0']),
    'no agent binaries for 0.3.0 linux/x64 in the controller store (have 0.1.0, 0.2.0)')
  assert.is(noAgentBinaries('0.3.0', 'linux/x64', 'the model', []), 'no agent binaries for 0.3.0 linux/x64 in the model (have none)')
})

versions.run()

const commands = suite('agent versions: model commands')

function withMachine (): ModelContext {
  return ok(emptyModel(), { type: 'add-machine' })
}

commands('a model without binaries keeps its RaftSnapshot form; with one, it survives a snapshot', () => {
  const plain = emptyModel()
  assert.not.ok('agentBinaries' in restoreModel(snapshotModel(plain)))
  const held = ok(plain, { type: 'add-agent-binary', version: '0.1.0', platform: 'linux/x64', hash: hashA, size: 10 })
  assert.equal(tableValues(restoreModel(snapshotModel(held)).agentBinaries!), [{ version: '0.1.0', platform: 'linux/x64', hash: hashA, size: 10 }])
})

commands('set-agent-version needs a recorded binary and refuses a downgrade, naming both versions', () => {
  let model = ok(emptyModel(), { type: 'add-agent-binary', version: '0.1.0', platform: 'linux/x64', hash: hashA, size: 10 })
  assert.is(apply(model, { type: 'set-agent-version', version: '0.3.0' }).error,
    'controller: cannot set the agent version to "0.3.0": no agent binaries for 0.3.0 linux/x64 in the model (have 0.1.0)')
  model = ok(model, { type: 'set-agent-version', version: '0.1.0' })
  model = ok(model, { type: 'add-agent-binary', version: '0.2.0', platform: 'linux/x64', hash: hashB, size: 10 })
  model = ok(model, { type: 'set-agent-version', version: '0.2.0' })
  assert.is(model.config['agent-version'], '0.2.0')
  assert.is(apply(model, { type: 'set-agent-version', version: '0.1.0' }).error,
    'controller: cannot set the agent version to "0.1.0": cannot downgrade from 0.2.0 to 0.1.0')
  assert.is(apply(model, { type: 'add-agent-binary', version: 'latest', platform: 'linux/x64', hash: hashA, size: 10 }).error,
    'controller: cannot add agent binary "latest" for "linux/x64": expected an agent version like "0.2.0", got "latest"')
  assert.is(apply(model, { type: 'add-agent-binary', version: '0.2.1', platform: 'linux/x64', hash: 'abc', size: 10 }).error,
    'controller: cannot add agent binary "0.2.1" for "linux/x64": expected a sha256 in lower-case hex, got "abc"')
})

commands('model-config refuses agent-version with Juju\'s line; only admins set versions', () => {
  assert.is(apply(emptyModel(), { type: 'set-model-config', config: { 'agent-version': '9.9.9' } }).error,
    'controller: cannot set model config: agent-version must be set via "upgrade-model"')
  const machine: Entity = { kind: 'machine', id: '0' }
  assert.is(apply(emptyModel(), { type: 'set-agent-version', version: '0.1.0' }, machine).error,
    'controller: cannot set the agent version to "0.1.0": permission denied for machine-0')
})

commands('a machine agent records its own version and upgrade problem, and no other machine\'s', () => {
  let model = withMachine()
  model = ok(model, { type: 'set-machine-agent-version', machine: '0', version: '0.1.0', upgradeError: 'upgrade to 0.1.1 failed: x' }, { kind: 'machine', id: '0' })
  const machine = tableValues(model.machines)[0]!
  assert.is(machine.agentVersion, '0.1.0')
  assert.is(machine.agentUpgradeError, 'upgrade to 0.1.1 failed: x')
  model = ok(model, { type: 'set-machine-agent-version', machine: '0', version: '0.1.1', upgradeError: '' }, { kind: 'machine', id: '0' })
  assert.is(tableValues(model.machines)[0]!.agentUpgradeError, undefined)
  assert.is(apply(model, { type: 'set-machine-agent-version', machine: '0', version: '0.1.1', upgradeError: '' }, { kind: 'machine', id: '1' }).error,
    'controller: cannot record the agent version of machine "0": permission denied for machine-1')
})

commands('a machine\'s view carries the agent-version and the binaries it may fetch', () => {
  let model = withMachine()
  model = ok(model, { type: 'add-agent-binary', version: '0.1.0', platform: 'linux/x64', hash: hashA, size: 10 })
  model = ok(model, { type: 'set-agent-version', version: '0.1.0' })
  const view = machineModelView(model, '0')
  assert.is(view.config['agent-version'], '0.1.0')
  assert.is(tableValues(view.agentBinaries!).length, 1)
})

commands.run()
