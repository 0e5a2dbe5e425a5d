/**
 * The example bundle (examples/bundle.yaml) written for a test: charm paths made absolute
 * and the kv and web port bases moved to free ports, so tests beside each other (and a
 * running `npm start`) never collide.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'

export function writeExampleBundle (path: string, ports: { kvBase: number, webBase: number }): void {
  writeFileSync(path, readFileSync('examples/bundle.yaml', 'utf8')
    .replaceAll('./charms/', `${resolve('examples/charms')}/`)
    .replace('port-base: 18400', `port-base: ${ports.kvBase}`).replace('port-base: 18500', `port-base: ${ports.webBase}`))
}
