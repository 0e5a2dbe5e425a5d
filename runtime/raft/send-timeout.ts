/**
 * How long a send waits for its answer, in election timeouts. The answer carries the
 * peer's reply (a vote, an acknowledgement; see #receive), so a sender that stops waiting
 * loses it: at one election timeout, a starved machine whose vote round trip took longer
 * lost every grant, and no candidate could win. Four covers the round trips measured at
 * load 35 on 2 cores (1-2.3 s against 600 ms), and a peer that cannot be reached fails
 * its sends at once, not by this timeout.
 */
export const sendTimeoutElectionTimeouts = 4
