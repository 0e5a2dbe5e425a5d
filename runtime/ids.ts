import { InvalidInputError } from './errors.ts'

/**
 * Juju's names: applications (`mysql`), units (`mysql/0`), machines (`0`, `0/lxd/1`),
 * relation ids (model-wide integers, shown as `endpoint:id`), storage (`data/0`).
 */
export type ApplicationName = string
export type UnitName = string
export type MachineId = string
export type RelationId = number
export type StorageId = string
/** A model's name, as Juju's: `default`, `staging-2`. */
export type ModelName = string
/** The model the bootstrap group serves: it holds the model registry, so only destroy-controller ends it. */
export const defaultModelName = 'default'

const applicationPattern = /^[a-z][a-z0-9]*(?:-[a-z0-9]*[a-z][a-z0-9]*)*$/
const unitPattern = /^([a-z][a-z0-9]*(?:-[a-z0-9]*[a-z][a-z0-9]*)*)\/(0|[1-9][0-9]*)$/
const machinePattern = /^(0|[1-9][0-9]*)(?:\/[a-z]+\/(0|[1-9][0-9]*))*$/
const modelPattern = /^[a-z0-9][a-z0-9-]*$/
const modelNameLengthMax = 63
const storagePattern = /^([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\/(0|[1-9][0-9]*)$/

export function isApplicationName (name: string): boolean { return applicationPattern.test(name) }
/** Juju's model names: lower-case letters, digits and hyphens, starting with a letter or digit, at most 63 characters. */
export function isModelName (name: string): boolean { return name.length <= modelNameLengthMax && modelPattern.test(name) }
export function isUnitName (name: string): boolean { return unitPattern.test(name) }
export function isMachineId (id: string): boolean { return machinePattern.test(id) }

export function parseUnitName (name: string): { application: ApplicationName, number: number } {
  const match = unitPattern.exec(name)
  if (match === null) throw new InvalidInputError('ids', 'a unit name like "mysql/0"', name)
  return { application: match[1]!, number: Number(match[2]) }
}

export function applicationOf (unit: UnitName): ApplicationName {
  return parseUnitName(unit).application
}

export function parseStorageId (id: string): { name: string, number: number } {
  const match = storagePattern.exec(id)
  if (match === null) throw new InvalidInputError('ids', 'a storage id like "data/0"', id)
  return { name: match[1]!, number: Number(match[2]) }
}

/** `mysql/0` → `unit-mysql-0`, the agent tag Juju uses in paths. */
export function unitTag (unit: UnitName): string {
  const { application, number } = parseUnitName(unit)
  return `unit-${application}-${number}`
}

/** Accepts `db:3` or `3`, as `-r/--relation` does. */
export function parseRelationRef (ref: string): { endpoint?: string, id: RelationId } {
  const match = /^(?:([a-z][a-z0-9-]*):)?(0|[1-9][0-9]*)$/.exec(ref)
  if (match === null) throw new InvalidInputError('ids', 'a relation id like "db:3" or "3"', ref)
  const id = Number(match[2])
  if (!Number.isSafeInteger(id)) throw new InvalidInputError('ids', 'a relation id within safe integers', ref)
  return match[1] === undefined ? { id } : { endpoint: match[1], id }
}

/**
 * Natural order for unit names and machine ids, as `juju status` sorts rows
 * (`web/2` before `web/10`).
 */
export function naturalCompare (a: string, b: string): number {
  const partsA = a.split(/(\d+)/)
  const partsB = b.split(/(\d+)/)
  const length = Math.min(partsA.length, partsB.length)
  for (let i = 0; i < length; i++) {
    const x = partsA[i]!
    const y = partsB[i]!
    if (x === y) continue
    if (i % 2 === 1) return Number(x) - Number(y)
    return x < y ? -1 : 1
  }
  return partsA.length - partsB.length
}

/** Plain string order, which is what the uniter's relation resolver uses (`mysql/10` < `mysql/2`). */
export function stringCompare (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
