/**
 * Runs `run` later, once the code running now and every microtask it queued are done:
 * cantripd passes setImmediate, the simulator a zero-delay step of its own scheduler that
 * a crash of the controller drops (sim/sim-controller-group.ts). One type for each option
 * of that kind (the Raft host's follower apply and leader write, the held-watch check), so
 * both worlds hand every one of them the same thing and the simulator runs the ordering
 * the shipped controller runs.
 */
export type Deferral = (run: () => void) => void
