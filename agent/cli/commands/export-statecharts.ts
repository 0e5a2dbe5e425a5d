/**
 * `cantrip export-statecharts --format svg|mermaid|mermaid,svg --out DIR [--readme FILE] [--check]`:
 * static diagrams of every statechart cantrip runs (actors/statecharts.ts: machine, unit,
 * relation, controller/Raft role, provisioner, deployer), one file each, for docs and CI
 * — agent/export-statecharts.ts does the work (`npm run diagrams` is the same with the
 * project's README). A refusal or an out-of-date `--check` is one line and exit 1.
 */
import process from 'node:process'
import type { RegisterCommand } from '../cli-context.ts'

const usage = 'usage: cantrip export-statecharts --format mermaid|svg|mermaid,svg --out DIR [--readme FILE] [--check]'

export const registerExportStatecharts: RegisterCommand = (program, context) => {
  program.command('export-statecharts')
    .description('write a diagram of every statechart (SVG laid out with elkjs, or Mermaid) into a directory')
    .requiredOption('--format <format>', 'svg, mermaid, or mermaid,svg')
    .requiredOption('--out <dir>', 'directory for <name>.svg / <name>.mmd')
    .option('--readme <file>', 'with mermaid: also (re)write the statecharts section of this README')
    .option('--check', 'write nothing; fail when a file is out of date')
    .action(async (options: { format: string, out: string, readme?: string, check?: boolean }) => {
      const errors: string[] = []
      // Loaded on use: the layout engine (elkjs) is large, and no other command needs it.
      const { exportStatecharts } = await import('../../export-statecharts.ts')
      const code = await exportStatecharts([
        '--format', options.format, '--out', options.out,
        ...(options.readme === undefined ? [] : ['--readme', options.readme]),
        ...(options.check === true ? ['--check'] : [])
      ], {
        cwd: process.cwd(),
        stdout: line => { context.out(line) },
        stderr: line => { errors.push(line) },
        defaultReadme: null,
        usage
      })
      if (code !== 0) throw new Error(`cantrip ${errors.join('; ') || `export-statecharts: failed with exit code ${code}`}`)
    })
}
