import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'

/**
 * `node --import tsx bench/raft-idle-cost.ts [SIMULATED_S]`: the CPU one Raft message costs
 * at idle (issue 28), with the Raft host's whole path (encode, the simulated transport,
 * decode, step, Ready, the held answer) and nothing else: three controllers on the
 * simulator at the agent's timing (100 ms ticks, heartbeat every tick, election after 6),
 * no writes, SIMULATED_S seconds (default 1,200) after 10 s to elect. Nearly every message
 * is a heartbeat or its answer; the count is deterministic, so two builds compare by CPU
 * per message (run them alternately on a loaded machine).
 */
const simulatedMs = Number(process.argv[2] ?? 1_200) * 1000
let sent = 0
const types = new Map<string, number>()
const group = await SimControllerGroup.create(new Simulation({ seed: 7 }), {
  size: 3,
  tickMs: 100,
  electionTicks: 6,
  heartbeatTicks: 1,
  onRaftSend: (_from, messages) => {
    sent += messages.length
    for (const m of messages) types.set(m.type, (types.get(m.type) ?? 0) + 1)
  }
})
await group.runFor(10_000)
const sentBefore = sent
const before = process.cpuUsage()
await group.runFor(simulatedMs)
const used = process.cpuUsage(before)
const messages = sent - sentBefore
const cpuUs = used.user + used.system
console.log(`${messages} Raft messages in ${simulatedMs / 1000} s simulated: ${(cpuUs / 1000).toFixed(0)} CPU-ms, ${(cpuUs / messages).toFixed(1)} CPU-us a message`)
console.log(`by type, election included: ${JSON.stringify(Object.fromEntries(types))}`)
process.exit(0)
