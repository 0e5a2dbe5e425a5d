/** How the system world names a fault and its target in the run record and the trace. */
import type { FaultEvent } from '../scenario/scenario-types.ts'
import type { Resolved } from './system-world.ts'

export function describe (target: Resolved): string {
  return target.kind === 'controller' ? `controller/${target.index} (${target.peer})` : `machine/${target.id}`
}

export function forText (forMs: number | undefined): string {
  return forMs === undefined ? '' : ` for ${forMs} ms`
}

export function describePartition (fault: Extract<FaultEvent, { kind: 'partition' }>): string {
  switch (fault.shape) {
    case 'isolate': return `isolate ${fault.target}`
    case 'majority-minority': return `majority-minority ${fault.minority}`
    case 'split': return `split ${fault.groups.map(g => g.join(',')).join(' | ')}`
    case 'bridge': return `bridge via ${fault.bridge}`
    case 'one-way': return `one-way ${fault.from}->${fault.to}`
    case 'machines-from-controllers': return `machines-from-controllers ${fault.machines === 'all' ? 'all' : fault.machines.join(',')}`
  }
}
