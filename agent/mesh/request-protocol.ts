/**
 * The one libp2p protocol that carries every application request: request channels
 * (request-channel.ts, serving-channel.ts). Apart from the transport so that the CLI's
 * client transport (agent/cli/client-transport.ts) names it without loading gossipsub.
 */
export const requestProtocol = '/cantrip/request-channel/1.0.0'
