/**
 * The network settings a controller group gives its local machines, read back from a
 * local member's launch record (`launch.json`, agent/agent-launch.ts): `--machine-network`
 * (each machine in a network namespace of its own) and `--listen`/`--advertise` (where
 * machines listen and what they advertise when the group is not on loopback). `start-agent
 * N` starts a local machine's agent with the same provider settings its controllers use
 * (cantripd.ts localProvisioning), or it would come back outside its namespace.
 */
import type { LocalMachineNetwork } from '../../providers/local-provider.ts'
import type { AgentNetwork } from '../../runtime/agent-network.ts'
import { readAgentLaunch } from '../agent-launch.ts'
import { machineDefaultNetwork } from '../machine-agent-network.ts'
import { machineNetworkUnavailable, NetnsMachineNetwork } from '../netns-machine-network.ts'
import type { ControllerEntry } from './cli-home.ts'

export interface GroupMachineNetwork {
  readonly network?: LocalMachineNetwork
  readonly defaultNetwork?: AgentNetwork
}

/** The value after `flag` in `args` (`--flag value`), or undefined. */
function flagValue (args: readonly string[], flag: string): string | undefined {
  const at = args.indexOf(flag)
  return at < 0 ? undefined : args[at + 1]
}

/** From the first local member whose launch record is readable; nothing when none is. */
export function groupMachineNetwork (entry: ControllerEntry): GroupMachineNetwork {
  for (const member of entry.controllers) {
    if (member.host !== undefined) continue
    let args: readonly string[]
    try {
      const launch = readAgentLaunch(member['data-dir'])
      if (launch === undefined) continue
      args = launch.args
    } catch {
      continue
    }
    const cidr = flagValue(args, '--machine-network')
    const defaultNetwork = machineDefaultNetwork(flagValue(args, '--listen'), flagValue(args, '--advertise'))
    const network = cidr !== undefined && machineNetworkUnavailable() === undefined ? new NetnsMachineNetwork(cidr) : undefined
    return { ...(network === undefined ? {} : { network }), ...(defaultNetwork === undefined ? {} : { defaultNetwork }) }
  }
  return {}
}
