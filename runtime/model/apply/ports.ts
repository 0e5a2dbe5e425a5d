import type { UnitName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { charmEndpoints, isPlainRecord } from '../charm-summary.ts'
import type { ModelDraft } from '../model-draft.ts'
import { portProtocols, type CharmRecord, type ModelCommand, type UnitRecord, type OpenedPortRange, type PortProtocol } from '../model-types.ts'
import { q, refuse } from './refusal.ts'

/**
 * A unit's opened ports, as Juju's port ranges behave: checks, merging and conflicts.
 */

/** A port range as Juju's network.PortRange holds it: icmp is -1 to -1, which makes two icmp ranges conflict. */
interface PortSpan {
  readonly protocol: PortProtocol
  readonly from: number
  readonly to: number
}

interface PortRequest extends PortSpan {
  /** `['*']`, or endpoint names, sorted and distinct. */
  readonly endpoints: readonly string[]
}

/** Juju's PortRange.String: `80/tcp`, `1000-2000/udp`, `icmp`. */
function portText (span: PortSpan): string {
  if (span.protocol === 'icmp') return 'icmp'
  return span.from === span.to ? `${span.from}/${span.protocol}` : `${span.from}-${span.to}/${span.protocol}`
}

function portIdentity (span: PortSpan): string {
  return `${span.protocol} ${span.from} ${span.to}`
}

/** Juju's PortRange.ConflictsWith: the same protocol and overlapping numbers. */
function portsConflict (a: PortSpan, b: PortSpan): boolean {
  return a.protocol === b.protocol && a.to >= b.from && b.to >= a.from
}

/** Juju's PortRange.LessThan: protocol, then from, then to. */
function comparePortSpans (a: PortSpan, b: PortSpan): number {
  if (a.protocol !== b.protocol) return a.protocol < b.protocol ? -1 : 1
  return a.from - b.from || a.to - b.to
}

function spanOf (range: OpenedPortRange): PortSpan {
  return { protocol: range.protocol, from: range.from ?? -1, to: range.to ?? -1 }
}

function openedPortRangeOf (span: PortSpan, endpoints: readonly string[]): OpenedPortRange {
  return span.protocol === 'icmp'
    ? { protocol: 'icmp', endpoints: [...endpoints] }
    : { protocol: span.protocol, from: span.from, to: span.to, endpoints: [...endpoints] }
}

/** Every endpoint of the charm, sorted: what `*` stands for when one endpoint is closed. */
export function endpointNamesOf (charm: CharmRecord): string[] {
  return [...new Set(charmEndpoints(charm.metadata).map(ep => ep.name))].sort()
}

/** The ranges of `openPorts` or `closePorts`, checked as Juju's PortRange.Validate does (ports 1 to 65535). */
export function portRangeChanges (c: ModelCommand, unit: UnitRecord, verb: 'open' | 'close', value: unknown, endpointNames: ReadonlySet<string>): PortRequest[] {
  if (value === undefined) return []
  const field = `${verb}Ports`
  if (!Array.isArray(value) || value.length > limits.modelOpenedPortRangesPerUnitMax) {
    refuse(c, `${field} must be a list of at most ${limits.modelOpenedPortRangesPerUnitMax} port ranges`)
  }
  return (value as unknown[]).map(entry => {
    if (!isPlainRecord(entry)) refuse(c, `each of ${field} must be a map with "protocol", "from", "to" and "endpoints"`)
    const protocol = entry.protocol
    if (typeof protocol !== 'string' || !(portProtocols as readonly string[]).includes(protocol)) {
      refuse(c, `invalid protocol ${q(protocol)}, expected "tcp", "udp", or "icmp"`)
    }
    let span: PortSpan
    if (protocol === 'icmp') {
      if (entry.from !== undefined || entry.to !== undefined) refuse(c, `protocol "icmp" doesn't support any ports; got ${q(entry.from ?? entry.to)}`)
      span = { protocol: 'icmp', from: -1, to: -1 }
    } else {
      const from = entry.from
      const to = entry.to ?? from
      const valid = (port: unknown): boolean => Number.isSafeInteger(port) && (port as number) >= 1 && (port as number) <= 65535
      if (!valid(from) || !valid(to)) refuse(c, `port range bounds must be between 1 and 65535, got ${q(from)}-${q(to)}`)
      span = { protocol: protocol as PortProtocol, from: from as number, to: to as number }
      if (span.from > span.to) refuse(c, `invalid port range ${span.from}-${span.to}/${span.protocol}`)
    }
    // No count of its own: every entry must name an endpoint, and the command's size bounds repeats.
    const listed = entry.endpoints ?? ['*']
    if (!Array.isArray(listed) || listed.length === 0) refuse(c, `${verb} port range ${portText(span)}: endpoints must list "*" or endpoint names`)
    const named = new Set<string>()
    for (const endpoint of listed as unknown[]) {
      if (endpoint === '*') continue
      if (typeof endpoint !== 'string' || !endpointNames.has(endpoint)) refuse(c, `${verb} port range: endpoint ${q(endpoint)} for unit ${q(unit.name)} not found`)
      named.add(endpoint)
    }
    const endpoints = (listed as unknown[]).includes('*') ? ['*'] : [...named].sort()
    return { ...span, endpoints }
  })
}

/**
 * The unit's opened ports after the hook's opens and then its closes, as Juju's
 * openClosePortRangesOperation merges them; undefined when nothing changes. A range is
 * one entry however many endpoints it is open for, and `*` absorbs named endpoints.
 * Opening a range that overlaps a different range open on the machine (another unit's,
 * or another of this unit's) is refused, and so is closing one that is not open but
 * overlaps one that is, since Juju refuses both.
 */
export function nextOpenedPorts (
  d: ModelDraft, c: ModelCommand, unit: UnitRecord, opens: readonly PortRequest[], closes: readonly PortRequest[], endpointNames: readonly string[]
): OpenedPortRange[] | undefined {
  if (opens.length === 0 && closes.length === 0) return undefined
  const mine = new Map<string, { span: PortSpan, endpoints: readonly string[] }>()
  for (const range of unit.openedPorts) {
    const span = spanOf(range)
    mine.set(portIdentity(span), { span, endpoints: range.endpoints })
  }
  const others: Array<{ span: PortSpan, unit: UnitName }> = []
  for (const name of d.machine(unit.machine)?.units ?? []) {
    if (name === unit.name) continue
    for (const range of d.unit(name)?.openedPorts ?? []) others.push({ span: spanOf(range), unit: name })
  }
  const checkConflicts = (verb: 'open' | 'close', request: PortSpan): void => {
    const held = [...others, ...[...mine.values()].map(entry => ({ span: entry.span, unit: unit.name }))]
    for (const existing of held) {
      if (portsConflict(existing.span, request)) {
        refuse(c, `cannot ${verb} ports ${portText(request)}: port ranges ${portText(existing.span)} (${q(existing.unit)}) and ${portText(request)} (${q(unit.name)}) conflict`)
      }
    }
  }

  for (const open of opens) {
    const identity = portIdentity(open)
    const existing = mine.get(identity)
    if (existing === undefined) {
      checkConflicts('open', open)
      mine.set(identity, { span: open, endpoints: open.endpoints })
    } else if (existing.endpoints[0] !== '*') {
      const endpoints = open.endpoints[0] === '*' ? ['*'] : [...new Set([...existing.endpoints, ...open.endpoints])].sort()
      mine.set(identity, { span: existing.span, endpoints })
    }
  }
  for (const close of closes) {
    const identity = portIdentity(close)
    const existing = mine.get(identity)
    if (existing === undefined) {
      // Closing what is not open is a no-op, unless it overlaps what is.
      checkConflicts('close', close)
      continue
    }
    // Closing one endpoint of a range open for all leaves it open for every other endpoint.
    const current = existing.endpoints[0] === '*' ? endpointNames : existing.endpoints
    const remaining = close.endpoints[0] === '*' ? [] : current.filter(endpoint => !close.endpoints.includes(endpoint))
    if (remaining.length === 0) mine.delete(identity)
    else mine.set(identity, { span: existing.span, endpoints: remaining })
  }
  if (mine.size > limits.modelOpenedPortRangesPerUnitMax) {
    refuse(c, `unit ${q(unit.name)} would have more than ${limits.modelOpenedPortRangesPerUnitMax} port ranges open`)
  }
  const next = [...mine.values()].sort((a, b) => comparePortSpans(a.span, b.span)).map(entry => openedPortRangeOf(entry.span, entry.endpoints))
  return JSON.stringify(next) === JSON.stringify(unit.openedPorts) ? undefined : next
}
