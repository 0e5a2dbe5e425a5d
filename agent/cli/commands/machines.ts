/**
 * `cantrip add-machine [ssh:user@host[:port]] [--private-key FILE] [-n N] [--constraints "k=v ..."]
 * [--listen HOST[:PORT]] [--advertise HOST]` and `cantrip remove-machine M... [--force]`, as
 * Juju's. With an ssh placement the controllers run ssh to the host (the manual provider):
 * `--private-key` names the key file they use, by its absolute path, so it must be
 * readable where the controllers run (this host, for a group bootstrapped here); the key
 * itself never enters the model. `--listen` and `--advertise` are cantrip's own (Juju
 * learns a machine's addresses from the cloud): where the machine's agent binds and the
 * address it, and its units' `private-address`, give out — for a host with several
 * interfaces or behind NAT. Without them a machine over ssh listens everywhere and
 * advertises the host as named, and a local one follows the controllers' network.
 */
import { accessSync, constants } from 'node:fs'
import { resolve } from 'node:path'
import { isAdvertisableHost, parseListen, type AgentNetwork } from '../../../runtime/agent-network.ts'
import { InvalidInputError } from '../../../runtime/errors.ts'
import type { ModelCommandBody } from '../../../runtime/model/command-proposer.ts'
import { parseConstraintText } from '../bundle.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { tableValues } from '../../../runtime/model/table.ts'
import { isMachineId } from '../../../runtime/ids.ts'
import type { MachineRecord } from '../../../runtime/model/model-types.ts'
import type { Command } from 'commander'
import { checkMachine, collect, type Connect, controllerFlags, controllerHelp, type Out, parseCount, readModel } from './model-common.ts'

export function addMachineCommand (placement: string | undefined, constraints: readonly string[], privateKey?: string, network: AgentNetwork = {}): Extract<ModelCommandBody, { type: 'add-machine' }> {
  const component = 'cantrip add-machine'
  if (network.listen !== undefined && parseListen(network.listen) === undefined) throw new InvalidInputError(component, '--listen as HOST, HOST:PORT or [V6]:PORT (e.g. 10.0.0.7:17080)', network.listen)
  if (network.advertise !== undefined && !isAdvertisableHost(network.advertise)) throw new InvalidInputError(component, '--advertise as an IPv4 or IPv6 address or a host name (not 0.0.0.0)', network.advertise)
  if (placement !== undefined && !/^ssh:[A-Za-z0-9._-]+@[A-Za-z0-9.:_[\]-]+$/.test(placement)) {
    throw new InvalidInputError(component, 'a placement like ssh:user@host or ssh:user@host:port', placement)
  }
  const key = privateKey === undefined ? undefined : privateKeyFile(component, placement, privateKey)
  const parsed: Record<string, string> = {}
  for (const text of constraints) Object.assign(parsed, parseConstraintText(text, got => { throw new InvalidInputError(component, '--constraints like "mem=4G cores=2"', got) }))
  return {
    type: 'add-machine',
    ...(Object.keys(parsed).length > 0 ? { constraints: parsed } : {}),
    ...(placement === undefined ? {} : { placement }),
    ...(key === undefined ? {} : { privateKey: key }),
    ...(network.listen === undefined ? {} : { listen: network.listen }),
    ...(network.advertise === undefined ? {} : { advertise: network.advertise })
  }
}

/** The key file by its absolute path, checked readable here (the controllers of a local group read the same file). */
function privateKeyFile (component: string, placement: string | undefined, file: string): string {
  if (placement === undefined) throw new InvalidInputError(component, '--private-key only with an ssh:user@host placement', file)
  const path = resolve(file)
  try {
    accessSync(path, constants.R_OK)
  } catch {
    throw new InvalidInputError(component, '--private-key as a readable private key file', path)
  }
  return path
}

export async function runAddMachine (connect: Connect, placement: string | undefined, options: { n?: string, constraints?: string[], privateKey?: string, listen?: string, advertise?: string }, out: Out): Promise<void> {
  const network = { ...(options.listen === undefined ? {} : { listen: options.listen }), ...(options.advertise === undefined ? {} : { advertise: options.advertise }) }
  const body = addMachineCommand(placement, options.constraints ?? [], options.privateKey, network)
  const count = parseCount('cantrip add-machine', options.n, 1)
  if (placement !== undefined && count > 1) throw new InvalidInputError('cantrip add-machine', '-n 1 with an ssh: placement', String(count))
  const client = await connect()
  for (let i = 0; i < count; i++) {
    const result = expectOk(await client.submit(body))
    for (const machine of result.machines ?? []) out(`created machine ${machine}`)
  }
}

export async function runRemoveMachine (connect: Connect, machines: readonly string[], options: { force?: boolean }, out: Out): Promise<void> {
  for (const id of machines) checkMachine('cantrip remove-machine', id)
  const client = await connect()
  for (const machine of machines) {
    expectOk(await client.submit({ type: 'remove-machine', machine, ...(options.force === true ? { force: true } : {}) }))
    out(`removing machine ${machine}`)
  }
}

/**
 * What is wrong with `retry-provisioning`'s arguments (a usage error), or undefined: Juju's
 * Init (cmd/juju/machine/retryprovisioning.go) wants machines or `--all`, not both, and
 * no containers.
 */
export function retryProvisioningUsage (machines: readonly string[], all: boolean): string | undefined {
  const component = 'cantrip retry-provisioning'
  if (all && machines.length > 0) return `${component}: expected machine ids or --all, not both, got --all ${machines.join(' ')}`
  if (!all && machines.length === 0) return `${component}: expected machine ids or --all, got none`
  const bad = machines.find(id => !isMachineId(id) || id.includes('/'))
  if (bad === undefined) return undefined
  return `${component}: expected machine ids like "0" (not containers), got ${JSON.stringify(bad)}`
}

/**
 * `retry-provisioning M... | --all`, as Juju's (cmd/juju/machine/retryprovisioning.go and
 * apiserver/facades/client/machinemanager RetryProvisioning): each named machine in
 * provisioning error gets a new start; one that is not says so on stderr
 * (`machine 0 is not in an error state (running)`), and the others still go ahead, exit
 * 0. `--all` takes every machine in provisioning error and passes over the rest silently.
 */
export async function runRetryProvisioning (connect: Connect, machines: readonly string[], options: { all?: boolean }, err: Out): Promise<void> {
  const client = await connect()
  const known = tableValues((await readModel(client)).machines)
  const inError = (m: MachineRecord): boolean => m.instance.status === 'provisioning error'
  const targets = options.all === true ? known.filter(m => m.life === 'alive' && inError(m)).map(m => m.id) : machines
  for (const id of targets) {
    const machine = known.find(m => m.id === id)
    if (machine === undefined) err(`machine ${id} not found`)
    else if (!inError(machine)) err(`machine ${id} is not in an error state (${machine.instance.status})`)
    else expectOk(await client.submit({ type: 'retry-provisioning', machine: id }))
  }
}

export const registerMachines: RegisterCommand = (program, context) => {
  program.command('retry-provisioning')
    .description('start machines whose provisioning failed again')
    .argument('[machines...]', 'machine ids')
    .option('--all', 'every machine in provisioning error')
    .option(controllerFlags, controllerHelp)
    .action(async (machines: string[], options: { all?: boolean, controller?: string }, command: Command) => {
      const usage = retryProvisioningUsage(machines, options.all === true)
      if (usage !== undefined) command.error(usage, { exitCode: 2, code: 'commander.usage' }) // exit 2 and one ERROR line, as a flag error
      await runRetryProvisioning(async () => await context.connect(options.controller), machines, options, context.err)
    })

  program.command('add-machine')
    .description('add a machine to the model (a new instance, or an existing host over ssh)')
    .argument('[placement]', 'ssh:user@host[:port] for a manually provisioned machine (an existing host)')
    .option('-n, --num-machines <n>', 'number of machines to add', '1')
    .option('--constraints <constraints>', 'machine constraints, e.g. "mem=4G cores=2" (repeatable)', collect, [])
    .option('--private-key <file>', 'with ssh:user@host: the private key the controllers connect with (default: ssh\'s own)')
    .option('--listen <host[:port]>', 'where the machine agent listens (default: every interface over ssh, the controllers\' network locally)')
    .option('--advertise <host>', 'the address the machine and its units give out (default: the ssh host, or the --listen host)')
    .option(controllerFlags, controllerHelp)
    .action(async (placement: string | undefined, options: { numMachines?: string, constraints?: string[], privateKey?: string, listen?: string, advertise?: string, controller?: string }) => {
      await runAddMachine(async () => await context.connect(options.controller), placement, {
        ...(options.numMachines === undefined ? {} : { n: options.numMachines }),
        constraints: options.constraints ?? [],
        ...(options.privateKey === undefined ? {} : { privateKey: options.privateKey }),
        ...(options.listen === undefined ? {} : { listen: options.listen }),
        ...(options.advertise === undefined ? {} : { advertise: options.advertise })
      }, context.out)
    })

  program.command('remove-machine')
    .description('remove machines from the model')
    .argument('<machines...>', 'machine ids')
    .option('--force', 'remove the machine with the units on it')
    .option(controllerFlags, controllerHelp)
    .action(async (machines: string[], options: { force?: boolean, controller?: string }) => {
      await runRemoveMachine(async () => await context.connect(options.controller), machines, options, context.out)
    })
}
