/**
 * Juju's tabular output (its ansiterm TabWriter): no borders, columns two spaces apart,
 * each as wide as its widest cell, no trailing spaces. Laid out by cli-table3, which
 * measures cells by their printed width, so coloured cells (ANSI codes) stay aligned.
 * The first row is the header, printed like the others.
 */
import Table from 'cli-table3'

const noBorders = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
  bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: ''
}

export function plainTable (rows: ReadonlyArray<readonly string[]>): string {
  const table = new Table({ chars: noBorders, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 2, compact: true } })
  for (const row of rows) table.push([...row])
  return table.toString().split('\n').map(line => line.trimEnd()).join('\n')
}
