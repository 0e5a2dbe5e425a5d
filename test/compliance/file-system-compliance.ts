/**
 * The `FileSystem` contract (runtime/file-system.ts), run against NodeFileSystem (a
 * temporary directory) and SimFileSystem (in memory). Each test gets a fresh, empty,
 * existing directory `root`.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { joinPath, type FileSystem } from '../../runtime/file-system.ts'

export interface FileSystemHarness {
  name: string
  create (): { files: FileSystem, root: string }
}

const text = (bytes: Uint8Array | undefined): string | undefined => bytes === undefined ? undefined : new TextDecoder().decode(bytes)

function throws (fn: () => void, what: string): void {
  let threw = false
  try { fn() } catch { threw = true }
  assert.ok(threw, what)
}

export function fileSystemCompliance (harness: FileSystemHarness): void {
  const test = suite(`file system compliance: ${harness.name}`)
  let files: FileSystem
  let root: string
  test.before.each(() => { ({ files, root } = harness.create()) })

  test('a written file reads back; a missing one reads as undefined', () => {
    const file = joinPath(root, 'token')
    assert.is(files.readFile(file), undefined)
    assert.not.ok(files.exists(file))
    files.writeFile(file, 'token-1', 0o600)
    assert.is(text(files.readFile(file)), 'token-1')
    assert.ok(files.exists(file))
    files.writeFile(file, new Uint8Array([104, 105]), 0o600)
    assert.is(text(files.readFile(file)), 'hi', 'a write replaces the contents')
  })

  test('appends create the file and add to its end; the tail is its last bytes', () => {
    const file = joinPath(root, 'agent.log')
    files.appendFile(file, 'one\n', 0o600)
    files.appendFile(file, 'two\n', 0o600)
    assert.is(text(files.readFile(file)), 'one\ntwo\n')
    assert.is(text(files.readTail(file, 4)), 'two\n')
    assert.is(text(files.readTail(file, 1000)), 'one\ntwo\n')
    assert.is(files.readTail(joinPath(root, 'none.log'), 10), undefined)
  })

  test('a write into a missing directory throws', () => {
    throws(() => { files.writeFile(joinPath(root, 'no-dir', 'file'), 'x', 0o600) }, 'write into a missing directory')
    throws(() => { files.appendFile(joinPath(root, 'no-dir', 'file'), 'x', 0o600) }, 'append into a missing directory')
  })

  test('makeDirectory: plain needs the parent and no such directory; recursive makes parents', () => {
    const dir = joinPath(root, 'machine-0')
    files.makeDirectory(dir, { mode: 0o700 })
    assert.ok(files.exists(dir))
    throws(() => { files.makeDirectory(dir, { mode: 0o700 }) }, 'making an existing directory again')
    throws(() => { files.makeDirectory(joinPath(root, 'a', 'b'), { mode: 0o700 }) }, 'making a directory whose parent is missing')
    files.makeDirectory(joinPath(root, 'a', 'b'), { mode: 0o700, recursive: true })
    files.makeDirectory(joinPath(root, 'a', 'b'), { mode: 0o700, recursive: true })
    assert.ok(files.exists(joinPath(root, 'a', 'b')))
  })

  test('list names files and directories; a missing directory lists as undefined', () => {
    files.makeDirectory(joinPath(root, 'machine-1'), { mode: 0o700 })
    files.writeFile(joinPath(root, 'manual-hosts.json'), '{}', 0o600)
    files.writeFile(joinPath(root, 'machine-1', 'token'), 't', 0o600)
    const entries = files.list(root)?.sort((a, b) => a.name < b.name ? -1 : 1)
    assert.equal(entries, [{ name: 'machine-1', kind: 'directory' }, { name: 'manual-hosts.json', kind: 'file' }])
    assert.is(files.list(joinPath(root, 'nothing')), undefined)
  })

  test('remove takes a whole tree; a missing path is not an error', () => {
    const dir = joinPath(root, 'machine-2')
    files.makeDirectory(joinPath(dir, 'agent'), { mode: 0o700, recursive: true })
    files.writeFile(joinPath(dir, 'agent', 'state'), 's', 0o600)
    files.remove(dir)
    assert.not.ok(files.exists(dir))
    assert.not.ok(files.exists(joinPath(dir, 'agent', 'state')))
    assert.equal(files.list(root), [])
    files.remove(dir)
  })

  test('rename moves a file over another', () => {
    files.writeFile(joinPath(root, 'state.json.new'), 'new', 0o600)
    files.writeFile(joinPath(root, 'state.json'), 'old', 0o600)
    files.rename(joinPath(root, 'state.json.new'), joinPath(root, 'state.json'))
    assert.is(text(files.readFile(joinPath(root, 'state.json'))), 'new')
    assert.not.ok(files.exists(joinPath(root, 'state.json.new')))
    throws(() => { files.rename(joinPath(root, 'none'), joinPath(root, 'other')) }, 'renaming a missing file')
  })

  test('joinPath joins with one slash', () => {
    assert.is(joinPath('/a/', 'b', '/c'), '/a/b/c')
    assert.is(joinPath('/a', ''), '/a')
  })

  test.run()
}
