import { normaliseCharmSummary } from '../charm-summary.ts'
import { keys } from '../keys.ts'
import { requireAdmin } from './authorisation.ts'
import { charmUrl } from './fields.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'

/**
 * The charm commands: adding a charm to the model.
 */

export const charmCommands: HandlerTable<'add-charm'> = {
  'add-charm': (d, c) => {
    requireAdmin(c)
    const url = charmUrl(c, c.url)
    if (typeof c.hash !== 'string' || !/^[0-9a-f]{16,128}$/.test(c.hash)) refuse(c, 'hash must be a lower-case hex digest of the charm archive')
    const metadata = normaliseCharmSummary(c.metadata)
    if (typeof metadata === 'string') refuse(c, metadata)
    const existing = d.charm(url)
    if (existing !== undefined) {
      if (existing.hash !== c.hash) refuse(c, `the URL is already used by charm content ${q(existing.hash)}`)
      return {}
    }
    d.charms.set(url, { url, hash: c.hash, metadata })
    d.touch(keys.charm(url))
    return {}
  }
}
