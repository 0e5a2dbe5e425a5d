/**
 * `cantrip completion bash|zsh|fish`: a script that, sourced (or saved where the shell
 * looks), completes cantrip's command names and then the current model's applications,
 * units and machines — as Juju's snap ships bash/zsh completion that asks `juju` for
 * names. The script calls the hidden `cantrip __complete WORDS…`, which prints one
 * candidate a line: command names for the first word, else names from the model (nothing,
 * quietly, when no controller answers). `CANTRIP_COMPLETE_COMMAND` may name the program
 * (default `cantrip`).
 */
import type { Command } from 'commander'
import { InvalidInputError } from '../../../runtime/errors.ts'
import { tableValues } from '../../../runtime/model/table.ts'
import type { RegisterCommand } from '../cli-context.ts'
import { readModel } from './model-common.ts'

const shells = ['bash', 'zsh', 'fish'] as const

const bashScript = `# cantrip completion for bash: source <(cantrip completion bash)
_cantrip_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  local IFS=$'\\n'
  COMPREPLY=( $(compgen -W "$(\${CANTRIP_COMPLETE_COMMAND:-cantrip} __complete "\${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)" -- "$cur") )
}
complete -o default -F _cantrip_complete cantrip
`

const scripts: Record<typeof shells[number], string> = {
  bash: bashScript,
  zsh: `# cantrip completion for zsh: source <(cantrip completion zsh)\nautoload -U +X bashcompinit && bashcompinit\n${bashScript}`,
  fish: '# cantrip completion for fish: cantrip completion fish > ~/.config/fish/completions/cantrip.fish\n' +
    'complete -c cantrip -f -a \'(${CANTRIP_COMPLETE_COMMAND:-cantrip} __complete (commandline -opc)[2..-1] 2>/dev/null)\'\n'
}

/** The visible command names and aliases, sorted. */
export function commandNames (program: Command): string[] {
  return program.commands.filter(c => !(c as unknown as { _hidden?: boolean })._hidden && c.name() !== '__complete')
    .flatMap(c => [c.name(), ...c.aliases()]).sort()
}

export const registerCompletion: RegisterCommand = (program, context) => {
  program.command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .argument('<shell>', 'bash, zsh or fish')
    .addHelpText('after', '\nExamples:\n  source <(cantrip completion bash)\n  cantrip completion fish > ~/.config/fish/completions/cantrip.fish')
    .action((shell: string) => {
      if (!(shells as readonly string[]).includes(shell)) throw new InvalidInputError('cantrip completion', `a shell: ${shells.join(', ')}`, shell)
      process.stdout.write(scripts[shell as typeof shells[number]])
    })

  program.command('__complete', { hidden: true })
    .argument('[words...]', 'the words typed after cantrip, before the one being completed')
    .allowUnknownOption()
    .action(async (words: string[]) => {
      if (words.length === 0) {
        context.out(commandNames(program).join('\n'))
        return
      }
      // A command with subcommands (`wait-for application|machine|model|unit`) completes them next.
      const parent = program.commands.find(c => c.name() === words[0])
      if (words.length === 1 && parent !== undefined && parent.commands.length > 0) {
        context.out(commandNames(parent).join('\n'))
        return
      }
      try {
        const model = await readModel(await context.connect())
        const names = [
          ...tableValues(model.applications).map(a => a.name),
          ...tableValues(model.units).map(u => u.name),
          ...tableValues(model.machines).map(m => m.id)
        ]
        if (names.length > 0) context.out(names.join('\n'))
      } catch {
        // Completion never complains: no controller, no names.
      }
    })
}
