/**
 * Fuzzing charm files (issue 12, item 8): metadata.yaml, config.yaml and actions.yaml,
 * from text through parseCharmYaml to the checked charm definition, the path
 * `cantrip deploy` and the machine agent take. Each input is accepted or refused with
 * one InvalidCharmError line naming charm, file, field, expectation and what arrived.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parseCharmYaml } from '../../agent/charm/charm-yaml.ts'
import { charmDefinition } from '../../runtime/charm/charm-definition.ts'
import { InvalidCharmError } from '../../runtime/charm/charm-error.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { accepted, declaredRejection, fuzz, tallyFigures, type Verdict } from './support/fuzz-harness.ts'
import { yamlInputs } from './support/fuzz-text.ts'

const count = chaosCount(100_000, 2_000)
const charms = join(import.meta.dirname, '..', '..', 'examples', 'charms')
const test = suite('fuzz: charm YAML files')
const figures: Record<string, number | string> = {}

async function seeds (file: string): Promise<string[]> {
  const texts: string[] = []
  for (const charm of ['web', 'kv', 'cluster', 'logship']) {
    try {
      texts.push(await readFile(join(charms, charm, file), 'utf8'))
    } catch {
      // Not every example charm has every file.
    }
  }
  return texts
}

function verdict (run: () => unknown): Verdict {
  try {
    run()
    return accepted
  } catch (error) {
    return declaredRejection(error, [InvalidCharmError])
  }
}

test('metadata.yaml, config.yaml and actions.yaml: accepted or one InvalidCharmError line', async () => {
  const metadata = await seeds('metadata.yaml')
  const validMetadata = parseCharmYaml(metadata[0]!, 'web', 'metadata.yaml')
  for (const [file, texts] of [['metadata.yaml', metadata], ['config.yaml', await seeds('config.yaml')], ['actions.yaml', await seeds('actions.yaml')]] as const) {
    assert.ok(texts.length > 0, `no ${file} among the example charms`)
    const tally = await fuzz(yamlInputs(texts), count, text => verdict(() => {
      const parsed = parseCharmYaml(text, 'fuzz', file)
      if (file === 'metadata.yaml') return charmDefinition({ metadata: parsed }, { label: 'fuzz' })
      return charmDefinition({ metadata: validMetadata, [file === 'config.yaml' ? 'config' : 'actions']: parsed }, { label: 'fuzz' })
    }))
    Object.assign(figures, tallyFigures(file, tally))
    assert.is(tally.inputs, count)
    assert.is(tally.crashes + tally.hangs, 0)
    assert.ok(tally.accepted > 0 && (tally.rejected['InvalidCharmError'] ?? 0) > 0, `${file}: both outcomes expected, got ${JSON.stringify(tally)}`)
  }
})

test.after(() => {
  reportFigures('fuzz-charm-yaml', figures)
})

test.run()
