/**
 * The controllers' request protocols, by name only: apart from the modules that serve
 * them, so that a client (the CLI) names them without loading the replica, Raft and the
 * statecharts behind the server side.
 */

/** The controller API (controller-api.ts). */
export const controllerApiProtocol = 'cantrip/api/1'

/** Followers forward client commands to the leader over this request protocol (model-replica.ts). */
export const controllerProposeProtocol = 'controller/propose/1'
