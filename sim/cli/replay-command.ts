/** The one command that replays a run: the scenario as it was named on the command line, and the seed. */
export function replayCommand (scenarioPath: string, seed: number): string {
  const path = /^[\w./@%+=:,-]+$/.test(scenarioPath) ? scenarioPath : `'${scenarioPath.replaceAll('\'', '\'\\\'\'')}'`
  return `cantrip sim ${path} --seed ${seed}`
}
