import type { InspectionEvent, Observer } from 'xstate'

/**
 * What kind of actor an inspector is looking at (cantrip's own field on the inspection
 * stream, beside the `@statelyai/inspect` wire format): the viewer groups actors by it.
 */
export type ActorKind = 'machine' | 'unit' | 'relation' | 'raft' | 'provisioner' | 'deployer' | 'other'

/** XState's `inspect` option of `createActor`: it also sees every child actor. */
export type InspectObserver = Observer<InspectionEvent>

/**
 * Given to code that creates a root actor (through its options, so actors/ stays pure):
 * the observer for that actor and its children, or undefined when nobody inspects.
 * `name` is the human name the inspector shows (`unit-kv-0`, `machine-3`, …).
 */
export type ActorInspect = (kind: ActorKind, name: string) => InspectObserver | undefined
