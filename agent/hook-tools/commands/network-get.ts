/**
 * network-get (juju-semantics §5.3): the network config of a binding, optionally as seen
 * by a relation (`-r`, defaulting to the hook's relation). With no selector flag the
 * whole structure is printed (keys in Juju's struct order, including the legacy
 * `macaddress`/`interfacename`/`address` copies in YAML); one of `--bind-address`,
 * `--ingress-address`, `--egress-subnets` prints just that value; more than one prints a
 * map of them. `--primary-address` is Juju's deprecated form of `--bind-address`.
 */
import { HookToolError, type NetworkInfo } from '../hook-context.ts'
import { checkEmpty, goQuote, usageError } from './args.ts'
import { outputFormat, outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'
import { optionalRelationId, relationFlag } from './hook-tool.ts'

export const networkGet: HookTool = {
  name: 'network-get',
  args: '<binding-name> [--ingress-address] [--bind-address] [--egress-subnets]',
  purpose: 'Get network config.',
  doc: 'Returns the network config for a binding: its interfaces and addresses, ingress addresses and egress subnets. With one selector flag just that value is printed; with several, a map of them.',
  flags: (context) => ({
    ...outputFlags,
    primaryAddress: { names: ['primary-address'], usage: '(deprecated) get the primary address for the binding' },
    bindAddress: { names: ['bind-address'], usage: 'get the address for the binding on which the unit should listen' },
    ingressAddress: { names: ['ingress-address'], usage: 'get the ingress address for the binding' },
    egressSubnets: { names: ['egress-subnets'], usage: 'get the egress subnets for the binding' },
    relation: relationFlag(context)
  }),
  async run (call, parsed) {
    const [binding, ...rest] = parsed.args
    if (binding === undefined) throw usageError('no arguments specified')
    if (binding === '') throw usageError('no binding name specified')
    checkEmpty(rest)
    const keys: string[] = []
    if (parsed.bool('bindAddress')) keys.push('bind-address')
    if (parsed.bool('ingressAddress')) keys.push('ingress-address')
    if (parsed.bool('egressSubnets')) keys.push('egress-subnets')

    const info = await call.context.networkInfo(binding, optionalRelationId(call.context, parsed))
    if (info.bindAddresses.length === 0) throw new HookToolError(1, `no network config found for binding ${goQuote(binding)}`)
    const firstAddress = info.bindAddresses[0]?.addresses[0]?.value
    const noAddress = (): HookToolError => new HookToolError(1, `no addresses attached to space for binding ${goQuote(binding)}`)

    if (parsed.bool('primaryAddress')) {
      if (keys.length > 0) throw new HookToolError(1, '--primary-address must be the only flag specified')
      if (firstAddress === undefined) throw noAddress()
      await writeOutput(call, parsed, firstAddress)
      return
    }
    if (keys.length === 0) {
      await writeOutput(call, parsed, display(info, outputFormat(parsed) !== 'json'))
      return
    }
    const values: Record<string, unknown> = {}
    if (parsed.bool('egressSubnets')) values['egress-subnets'] = info.egressSubnets
    if (parsed.bool('ingressAddress')) {
      const ingress = info.ingressAddresses[0] ?? firstAddress
      if (ingress === undefined) throw noAddress()
      values['ingress-address'] = ingress
    }
    if (parsed.bool('bindAddress')) {
      if (firstAddress === undefined) throw noAddress()
      values['bind-address'] = firstAddress
    }
    await writeOutput(call, parsed, keys.length === 1 ? values[keys[0]!] : values)
  }
}

/**
 * Juju's display structs, as ordered maps. Empty top-level lists are omitted
 * (`omitempty`); the legacy duplicate keys exist only in YAML.
 */
function display (info: NetworkInfo, legacyKeys: boolean): Map<string, unknown> {
  const result = new Map<string, unknown>()
  if (info.bindAddresses.length > 0) {
    result.set('bind-addresses', info.bindAddresses.map(nic => {
      const entry = new Map<string, unknown>([
        ['mac-address', nic.macAddress],
        ['interface-name', nic.interfaceName],
        ['addresses', nic.addresses.map(address => {
          const shown = new Map<string, unknown>([['hostname', address.hostname], ['value', address.value], ['cidr', address.cidr]])
          if (legacyKeys) shown.set('address', address.value)
          return shown
        })]
      ])
      if (legacyKeys) {
        entry.set('macaddress', nic.macAddress)
        entry.set('interfacename', nic.interfaceName)
      }
      return entry
    }))
  }
  if (info.egressSubnets.length > 0) result.set('egress-subnets', [...info.egressSubnets])
  if (info.ingressAddresses.length > 0) result.set('ingress-addresses', [...info.ingressAddresses])
  return result
}
