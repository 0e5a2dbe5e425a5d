import { encode } from '../../codec.ts'
import { isApplicationName, isMachineId, isModelName, isUnitName, type ApplicationName, type MachineId, type RelationId, type UnitName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { isPlainRecord } from '../charm-summary.ts'
import { isControllerLeaseName } from '../controller-leases.ts'
import type { ModelCommand } from '../model-types.ts'
import { q, textFieldLengthMax, refuse } from './refusal.ts'

/**
 * Field checks: commands come from the log, so every field is checked before it is used.
 */

export function applicationName (c: ModelCommand, value: unknown): ApplicationName {
  if (typeof value !== 'string' || !isApplicationName(value)) refuse(c, `${q(value)} is not a valid application name`)
  return value
}

export function unitName (c: ModelCommand, value: unknown): UnitName {
  if (typeof value !== 'string' || !isUnitName(value)) refuse(c, `${q(value)} is not a valid unit name`)
  return value
}

export function modelName (c: ModelCommand, value: unknown): string {
  if (typeof value !== 'string' || !isModelName(value)) refuse(c, `${q(value)} is not a valid model name (lower-case letters, digits and hyphens, at most 63 characters)`)
  return value
}

export function machineId (c: ModelCommand, value: unknown): MachineId {
  if (typeof value !== 'string' || !isMachineId(value)) refuse(c, `${q(value)} is not a valid machine id`)
  return value
}

/** A controller id, as the `controller` entity's `id` is checked in the envelope. */
export function controllerId (c: ModelCommand, value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > textFieldLengthMax) refuse(c, `${q(value)} is not a valid controller id`)
  return value
}

export function controllerLeaseName (c: ModelCommand, value: unknown): string {
  if (typeof value !== 'string' || !isControllerLeaseName(value)) refuse(c, `${q(value)} is not a lease name of 1 to 64 characters a-z, 0-9 and "-"`)
  return value
}

export function relationId (c: ModelCommand, value: unknown): RelationId {
  if (!Number.isSafeInteger(value) || (value as number) < 0) refuse(c, `${q(value)} is not a valid relation id`)
  return value as number
}

const charmUrlPattern = /^(?:local|ch|cs):[A-Za-z0-9][A-Za-z0-9._+/-]*$/
export function charmUrl (c: ModelCommand, value: unknown): string {
  if (typeof value !== 'string' || value.length > textFieldLengthMax || !charmUrlPattern.test(value)) refuse(c, `${q(value)} is not a charm URL like "local:mysql-0" or "ch:mysql-42"`)
  return value
}

export function text (c: ModelCommand, field: string, value: unknown, lengthMax = textFieldLengthMax): string {
  if (typeof value !== 'string' || value.length > lengthMax) refuse(c, `${field} must be a string of at most ${lengthMax} characters`)
  return value
}

export function optionalBoolean (c: ModelCommand, field: string, value: unknown): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') refuse(c, `${field} must be true or false`)
  return value
}

export function clockReading (c: ModelCommand, value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) refuse(c, `"now" must be a clock reading in whole milliseconds, got ${q(value)}`)
  return value as number
}

export function unitCount (c: ModelCommand, value: unknown, min: number): number {
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > limits.modelUnitsPerCommandMax) {
    refuse(c, `number of units must be ${min} to ${limits.modelUnitsPerCommandMax}, got ${q(value)}`)
  }
  return value as number
}

export function stringRecord (c: ModelCommand, field: string, value: unknown): Readonly<Record<string, string>> {
  if (!isPlainRecord(value)) refuse(c, `${field} must be a map of strings`)
  let bytes = 0
  for (const [key, entry] of Object.entries(value)) {
    if (key === '' || key.length > textFieldLengthMax) refuse(c, `${field} key ${q(key)} must be 1 to ${textFieldLengthMax} characters`)
    if (typeof entry !== 'string') refuse(c, `${field} value of ${q(key)} must be a string`)
    bytes += key.length + entry.length
  }
  if (bytes > limits.modelSettingsBytesMax) refuse(c, `${field} exceed ${limits.modelSettingsBytesMax} bytes`)
  return value as Record<string, string>
}

export function constraintsOf (c: ModelCommand, value: unknown): Readonly<Record<string, string>> {
  if (value === undefined) return {}
  const record = stringRecord(c, 'constraints', value)
  for (const key of Object.keys(record)) if (!/^[a-z][a-z0-9-]*$/.test(key)) refuse(c, `constraint ${q(key)} is not a constraint name`)
  return sortedRecord(record)
}

export function encodedSize (c: ModelCommand, field: string, value: unknown): number {
  try {
    return encode(value, 'controller').byteLength
  } catch {
    refuse(c, `${field} cannot be encoded`)
  }
}

export function sortedRecord<T> (record: Readonly<Record<string, T>>): Record<string, T> {
  const out: Record<string, T> = {}
  for (const key of Object.keys(record).sort()) defineOwn(out, key, record[key] as T)
  return out
}

export function defineOwn<T> (target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}
