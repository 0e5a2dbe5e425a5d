import { describeValue } from '../../runtime/errors.ts'

/** The text of a provider failure as it appears in status: the error's message, without a stack. */
export function failureReason (error: unknown): string {
  if (error instanceof Error) return error.message === '' ? error.name : error.message
  if (typeof error === 'string') return error
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
    return (error as { message: string }).message
  }
  return describeValue(error)
}

/**
 * Failures that another attempt cannot fix: a side effect nobody provided, or input the
 * provider rejects as invalid. They skip the back-off and go straight to error.
 */
export function isPermanentFailure (error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const name = (error as { name?: unknown }).name
  // A provider's own verdict (providers/provider-contract.ts): only `invalid` is past retrying.
  if (name === 'ProviderError') return (error as { failure?: unknown }).failure === 'invalid'
  return name === 'NotProvidedError' || name === 'InvalidInputError'
}
