/**
 * A charm whose first install hangs (recording the hook's pid in `<marks>/first`) and
 * whose retried install completes (`<marks>/installed`): for killing an agent in the
 * middle of a hook, deterministically.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export function writeSlowCharm (charmDir: string, marks: string): void {
  mkdirSync(join(charmDir, 'hooks'), { recursive: true })
  mkdirSync(marks, { recursive: true })
  writeFileSync(join(charmDir, 'metadata.yaml'), 'name: slow\nsummary: slow\ndescription: an install that hangs the first time\n')
  const hook = (body: string): string => `#!/bin/bash\nset -eu\n${body}\n`
  writeFileSync(join(charmDir, 'hooks', 'install'), hook(
    // The pid goes to a scratch file renamed into place, so \`first\` never exists empty: a
    // reader racing the shell's truncate-then-write read "" (Number('') is 0, and a kill of
    // group 0 is a kill of the reader's own group).
    `if [ ! -f ${marks}/first ]; then echo $$ > ${marks}/first.tmp; mv ${marks}/first.tmp ${marks}/first; sleep 600; fi\necho done > ${marks}/installed`))
  writeFileSync(join(charmDir, 'hooks', 'start'), hook('status-set active started'))
  for (const name of ['install', 'start']) chmodSync(join(charmDir, 'hooks', name), 0o755)
}
