/**
 * `cantripd --provider-config FILE`: the provider's settings on a controller, as JSON:
 *
 *   { "credentials": { ... },            // the cloud's credentials: kept by the provider, never sent anywhere
 *     "faults": { "allocate": 1, ... },  // failures to inject per step (providers/fault-injecting-provider.ts)
 *     "retryDelayMs": [1000, 30000] }    // the provisioner's back-off after a failed start or stop (default 10 s to 5 min)
 *
 * Credentials stay on the controllers: nothing built from this file reaches bootstrap
 * data, agents, gossip or logs (test/local-provisioning.test.ts plants a canary).
 */
import { readFileSync } from 'node:fs'
import { InvalidInputError } from '../../runtime/errors.ts'
import { faultSteps, type FaultStep } from '../../providers/fault-injecting-provider.ts'

const component = 'provider config'

export interface ProviderConfig {
  readonly credentials: Readonly<Record<string, string>>
  readonly faults: Partial<Record<FaultStep, number>>
  readonly retryDelayMs?: readonly [number, number]
}

export function readProviderConfig (file: string | undefined): ProviderConfig {
  if (file === undefined) return { credentials: {}, faults: {} }
  let value: unknown
  try {
    value = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    // The message names the file, not its contents: it may hold credentials.
    throw new InvalidInputError(component, `a JSON file at ${file}`, error instanceof SyntaxError ? 'malformed JSON' : (error as Error).message)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidInputError(component, 'a JSON object', typeof value)
  const { credentials = {}, faults = {}, retryDelayMs, ...rest } = value as Record<string, unknown>
  const unknown = Object.keys(rest)
  if (unknown.length > 0) throw new InvalidInputError(component, 'only "credentials", "faults" and "retryDelayMs"', unknown.join(', '))
  if (retryDelayMs !== undefined && (!Array.isArray(retryDelayMs) || retryDelayMs.length !== 2 || !retryDelayMs.every(ms => Number.isSafeInteger(ms) && ms > 0) || retryDelayMs[0] > retryDelayMs[1])) {
    throw new InvalidInputError(component, '"retryDelayMs" as [min, max] milliseconds, 0 < min <= max', JSON.stringify(retryDelayMs))
  }
  if (typeof credentials !== 'object' || credentials === null || Object.values(credentials).some(v => typeof v !== 'string')) {
    throw new InvalidInputError(component, '"credentials" as an object of strings', 'something else')
  }
  if (typeof faults !== 'object' || faults === null) throw new InvalidInputError(component, '"faults" as an object', typeof faults)
  for (const [step, count] of Object.entries(faults)) {
    if (!faultSteps.includes(step as FaultStep) || !Number.isSafeInteger(count) || (count as number) < 0) {
      throw new InvalidInputError(component, `"faults" steps among ${faultSteps.join(', ')} with counts >= 0`, `${step}: ${String(count)}`)
    }
  }
  return {
    credentials: credentials as Record<string, string>,
    faults: faults as Partial<Record<FaultStep, number>>,
    ...(retryDelayMs === undefined ? {} : { retryDelayMs: retryDelayMs as [number, number] })
  }
}
