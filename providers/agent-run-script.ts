/**
 * An agent's `run.sh` on a host it was placed on over ssh: its settings exported, then its
 * command exec'd (so the pid the script starts under is the agent's). It is all a host
 * keeps to start the agent again, as Juju keeps `jujud-machine-N-exec-start.sh` beside
 * the agent (juju/juju service/systemd/conf.go): `cantrip start-agent`, a systemd unit's
 * ExecStart and the first start all run this one file, so each runs the same agent with
 * the same settings (the controller's CANTRIP_* settings, its log level among them).
 */

/** Quotes one word for a POSIX shell: nothing inside single quotes is special. */
export function shellQuote (word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`
}

const variableName = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/

/**
 * The script's exact text: one `export NAME='value'` line per setting, sorted by name, then
 * `exec` and the quoted argv. A name that is no shell variable is refused: it would be code.
 */
export function agentRunScript (env: Readonly<Record<string, string>>, argv: readonly string[]): string {
  const names = Object.keys(env).sort()
  const bad = names.find(name => !variableName.test(name))
  if (bad !== undefined) throw new Error(`agent run script: expected environment names like CANTRIP_LOG_LEVEL, got ${JSON.stringify(bad)}`)
  if (argv.length === 0) throw new Error('agent run script: expected a command, got none')
  const exports = names.map(name => `export ${name}=${shellQuote(env[name]!)}\n`).join('')
  return `${exports}exec ${argv.map(shellQuote).join(' ')}\n`
}
