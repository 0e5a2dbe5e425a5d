/**
 * The provisioner as the simulated controller leader runs it (its singular worker), against
 * the simulated cloud, with the machine actors fed from that controller's presence.
 */
import type { ModelReplica } from '../../actors/controller/model-replica.ts'
import { Provisioner } from '../../actors/provisioner/provisioner.ts'
import { encodeBootstrapData } from '../../runtime/bootstrap-data.ts'
import { defaultModelName } from '../../runtime/ids.ts'
import { silentLogger } from '../../runtime/logger.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'
import type { AgentLiveness } from '../../actors/provisioner/liveness-feed.ts'
import type { SimProvider } from '../../providers/sim-provider.ts'

/** The mesh key in every instance's bootstrap data (the simulated network checks none). */
const simNetworkKey = new Uint8Array([0x73, 0x69, 0x6d])

export interface SimProvisionerOptions {
  node: ModelReplica
  cloud: SimProvider
  controllers: readonly NodeId[]
  /** Random hex of `digits` digits, from the run's "tokens" stream. */
  hex: (digits: number) => string
  /** Listeners of the node's applied entries. */
  onModelChange: (listener: () => void) => () => void
  liveness: AgentLiveness
  startsInFlightMax: number | undefined
}

export function startSimProvisioner (o: SimProvisionerOptions): Provisioner {
  const { node } = o
  const provisioner = new Provisioner({
    controllerId: node.id,
    incarnation: `${node.host.term}`,
    clock: node.clock,
    logger: silentLogger,
    providerFor: () => o.cloud,
    providers: [o.cloud],
    model: () => node.host.state(),
    onModelChange: o.onModelChange,
    submit: async command => await node.submit(command),
    newToken: () => o.hex(16),
    newSecret: () => o.hex(32),
    bootstrapFor: (machine, secret) => encodeBootstrapData({
      version: 1,
      modelUuid: defaultModelName,
      machineId: machine.id,
      controllers: o.controllers.map(peerId => ({ peerId, addresses: [] })),
      networkKey: simNetworkKey,
      secret
    }),
    policy: { retryDelayMsMin: 200, retryDelayMsMax: 2_000, provisioningAttemptsMax: 3, stopAttemptsMax: 5 },
    ...(o.startsInFlightMax === undefined ? {} : { startsInFlightMax: o.startsInFlightMax }),
    reconcileIntervalMs: 1_000,
    retryRoundMs: 3_000,
    liveness: o.liveness
  })
  provisioner.start()
  return provisioner
}
