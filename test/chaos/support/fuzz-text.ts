/**
 * Text inputs for the fuzz suites: random strings, valid texts mutated character by
 * character (deleted, duplicated, replaced with YAML's structural characters), and
 * random values written out as YAML so deep structure arrives with odd contents.
 */
import fc from 'fast-check'
import { stringify } from 'yaml'
import { msgpackValue } from './fuzz-inputs.ts'

/** Characters that change what YAML means: indicators, quotes, tabs, line breaks, anchors. */
const structural = ['\n', '  ', '\t', ':', '- ', '{', '}', '[', ']', '"', "'", '&a ', '*a', '!!', '!', '%', '#', '|', '>', '?', ',', '---\n', '...\n', '\u0000', '\ufeff', '<<: ']

type TextMutation = (text: string) => string

const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.tuple(fc.nat(), fc.nat(20)).map(([at, length]): TextMutation => text => {
    const from = text.length === 0 ? 0 : at % text.length
    return text.slice(0, from) + text.slice(from + length)
  }),
  fc.tuple(fc.nat(), fc.oneof(fc.constantFrom(...structural), fc.string({ maxLength: 8 }))).map(([at, insert]): TextMutation => text => {
    const from = text.length === 0 ? 0 : at % (text.length + 1)
    return text.slice(0, from) + insert + text.slice(from)
  }),
  fc.tuple(fc.nat(), fc.nat(40)).map(([at, length]): TextMutation => text => {
    const from = text.length === 0 ? 0 : at % text.length
    return text.slice(0, from) + text.slice(from, from + length) + text.slice(from)
  })
)

/** A valid text with one to five character-level mutations. */
export function mutatedText (seeds: readonly string[]): fc.Arbitrary<string> {
  return fc.tuple(fc.constantFrom(...seeds), fc.array(textMutation, { minLength: 1, maxLength: 5 }))
    .map(([seed, mutations]) => mutations.reduce((text, mutate) => mutate(text), seed))
}

function yamlOf (value: unknown): string {
  try {
    return stringify(value, (_key, v: unknown) => typeof v === 'bigint' ? Number(v) : v) ?? ''
  } catch {
    return ''
  }
}

/** Random YAML documents, mutated valid ones, and arbitrary strings, in equal shares. */
export function yamlInputs (seeds: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 200, unit: 'grapheme-ascii' }),
    msgpackValue.map(yamlOf),
    mutatedText(seeds)
  )
}
