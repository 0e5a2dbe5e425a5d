import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { packCharm } from '../agent/charm/charm-archive.ts'
import { loadCharmDir, type LoadedCharm } from '../agent/charm/load-charm.ts'
import { charmDefinition } from '../runtime/charm/charm-definition.ts'
import { limits } from '../runtime/limits.ts'
import { normaliseCharmSummary } from '../runtime/model/charm-summary.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import type { ModelCommand } from '../runtime/model/model-types.ts'
import { tableGet } from '../runtime/model/table.ts'
import { rejects } from './support/rejects.ts'

const test = suite('charm files')

const baseMetadata = 'name: web\nsummary: A web server\ndescription: Serves pages.\n'

/** A charm directory named `name` holding `files`, removed afterwards. */
async function withCharm<T> (files: Record<string, string | Uint8Array>, run: (dir: string) => Promise<T>, name = 'web'): Promise<T> {
  const base = await mkdtemp(join(tmpdir(), 'cantrip-charm-load-'))
  try {
    const dir = join(base, name)
    await mkdir(dir)
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true })
      await writeFile(join(dir, path), content)
    }
    return await run(dir)
  } finally {
    await rm(base, { recursive: true, force: true })
  }
}

const load = async (files: Record<string, string | Uint8Array>): Promise<LoadedCharm> => await withCharm(files, loadCharmDir)

/** The one-line message the load is refused with. */
async function refusal (files: Record<string, string | Uint8Array>, name = 'InvalidCharmError'): Promise<string> {
  const error = await withCharm(files, async dir => await rejects(loadCharmDir(dir), name))
  assert.not.match(error.message, /\n/, 'a refusal is one line')
  return error.message
}

// ---------------------------------------------------------------------------------
// Charms that load

test('a minimal charm has an empty summary the model accepts', async () => {
  const charm = await load({ 'metadata.yaml': baseMetadata })
  assert.equal(charm.summary, { name: 'web', subordinate: false, provides: {}, requires: {}, peers: {}, config: {}, storage: {}, actions: {} })
  assert.is(charm.metadata.summary, 'A web server')
  assert.is(charm.metadata.format, 1)
  assert.equal(charm.config, {})
  assert.equal(charm.actions, {})
  assert.type(normaliseCharmSummary(charm.summary), 'object')
})

test('endpoints in short and long form, with limit, optional and scope defaults', async () => {
  const charm = await load({
    'metadata.yaml': baseMetadata + [
      'provides:',
      '  website: http',
      '  metrics: {interface: prometheus, limit: 2}',
      'requires:',
      '  db:',
      '    interface: mysql',
      '    optional: true',
      '    scope: global',
      '  logging: {interface: syslog, scope: container}',
      'peers:',
      '  cluster: web-peers',
      'extra-bindings:',
      '  admin:',
      '  public:',
      'series: [jammy, focal]',
      ''
    ].join('\n')
  })
  assert.equal(charm.metadata.provides, {
    metrics: { interface: 'prometheus', limit: 2, optional: false, scope: 'global' },
    website: { interface: 'http', limit: null, optional: false, scope: 'global' }
  })
  assert.equal(charm.metadata.requires.db, { interface: 'mysql', limit: null, optional: true, scope: 'global' })
  assert.equal(charm.metadata.requires.logging, { interface: 'syslog', limit: null, optional: false, scope: 'container' })
  assert.equal(charm.metadata.peers, { cluster: { interface: 'web-peers', limit: null, optional: false, scope: 'global' } })
  assert.equal(charm.metadata.extraBindings, ['admin', 'public'])
  assert.equal(charm.metadata.series, ['jammy', 'focal'])
  assert.equal(charm.summary.provides, { metrics: { interface: 'prometheus', scope: 'global' }, website: { interface: 'http', scope: 'global' } })
  assert.equal(charm.summary.requires, { db: { interface: 'mysql', scope: 'global' }, logging: { interface: 'syslog', scope: 'container' } })
  assert.equal(Object.keys(charm.summary.provides!), ['metrics', 'website'], 'summary keys are sorted')
  const normalised = normaliseCharmSummary(charm.summary)
  assert.type(normalised, 'object')
})

test('a subordinate may use a reserved name for its container-scoped requires endpoint', async () => {
  const charm = await load({
    'metadata.yaml': 'name: telegraf\nsummary: Metrics\ndescription: Collects metrics.\nsubordinate: true\n' +
      'requires:\n  juju-info:\n    interface: juju-info\n    scope: container\nprovides:\n  metrics: prometheus\n'
  })
  assert.is(charm.metadata.subordinate, true)
  assert.equal(charm.summary.requires, { 'juju-info': { interface: 'juju-info', scope: 'container' } })
})

test('storage: types, ranges, minimum size, location and properties', async () => {
  const charm = await load({
    'metadata.yaml': baseMetadata + [
      'storage:',
      '  data:',
      '    type: filesystem',
      '    description: Site data',
      '    location: /srv/data',
      '    minimum-size: 10G',
      '    multiple: {range: 1-3}',
      '    properties: [transient]',
      '  disks: {type: block, multiple: {range: 2+}, shared: true, read-only: true}',
      '  cache: {type: filesystem, multiple: {range: 4}}',
      '  scratch: {type: filesystem, multiple: {range: 0-}}',
      ''
    ].join('\n')
  })
  assert.equal(charm.metadata.storage.data, {
    type: 'filesystem', description: 'Site data', shared: false, readOnly: false, countMin: 1, countMax: 3, minimumSize: '10G', location: '/srv/data', properties: ['transient']
  })
  assert.equal(charm.metadata.storage.disks, {
    type: 'block', description: '', shared: true, readOnly: true, countMin: 2, countMax: -1, minimumSize: null, location: null, properties: []
  })
  assert.is(charm.metadata.storage.cache!.countMin, 4)
  assert.is(charm.metadata.storage.cache!.countMax, 4)
  assert.is(charm.metadata.storage.scratch!.countMin, 0)
  assert.is(charm.metadata.storage.scratch!.countMax, -1)
  assert.equal(charm.summary.storage, {
    cache: { type: 'filesystem', location: null, countMin: 4, countMax: 4, minimumSizeMiB: 0 },
    data: { type: 'filesystem', location: '/srv/data', countMin: 1, countMax: 3, minimumSizeMiB: 10240 },
    disks: { type: 'block', location: null, countMin: 2, countMax: -1, minimumSizeMiB: 0 },
    scratch: { type: 'filesystem', location: null, countMin: 0, countMax: -1, minimumSizeMiB: 0 }
  })
})

test('config options of every type, with defaults checked against the type', async () => {
  const charm = await load({
    'metadata.yaml': baseMetadata,
    'config.yaml': [
      'options:',
      '  title: {type: string, default: "My site", description: Page title}',
      '  empty-title: {type: string, default: ""}',
      '  untyped: {default: plain}',
      '  bare:',
      '  port: {type: int, default: 8080}',
      '  ratio: {type: float, default: 0.5}',
      '  whole-ratio: {type: float, default: 2}',
      '  debug: {type: boolean, default: false}',
      '  password: {type: secret}',
      '  no-default: {type: int}',
      ''
    ].join('\n')
  })
  assert.equal(charm.config.title, { type: 'string', default: 'My site', description: 'Page title' })
  assert.equal(charm.config['empty-title'], { type: 'string', default: '', description: '' })
  assert.equal(charm.config.untyped, { type: 'string', default: 'plain', description: '' })
  assert.equal(charm.config.bare, { type: 'string', default: null, description: '' })
  assert.equal(charm.config.port, { type: 'int', default: 8080, description: '' })
  assert.equal(charm.config.ratio!.default, 0.5)
  assert.equal(charm.config['whole-ratio']!.default, 2)
  assert.equal(charm.config.debug!.default, false)
  assert.equal(charm.config.password, { type: 'secret', default: null, description: '' })
  assert.equal(charm.summary.config!.port, { type: 'int', default: 8080 })
  assert.equal(Object.keys(charm.summary.config!), Object.keys(charm.summary.config!).sort())
  assert.type(normaliseCharmSummary(charm.summary), 'object')
})

test('actions become JSON-Schema object schemas the way Juju builds them', async () => {
  const charm = await load({
    'metadata.yaml': baseMetadata,
    'actions.yaml': [
      'snapshot:',
      '  description: Take a snapshot.',
      '  params:',
      '    outfile: {type: string, description: Where to write}',
      '    quality: {type: integer, minimum: 0, maximum: 9, default: 5}',
      '  required: [outfile]',
      '  parallel: true',
      '  execution-group: db',
      'restart:',
      'open-ended:',
      '  additionalProperties: true',
      ''
    ].join('\n')
  })
  assert.equal(charm.actions.snapshot, {
    description: 'Take a snapshot.',
    parallel: true,
    executionGroup: 'db',
    schema: {
      required: ['outfile'],
      title: 'snapshot',
      description: 'Take a snapshot.',
      type: 'object',
      properties: {
        outfile: { type: 'string', description: 'Where to write' },
        quality: { type: 'integer', minimum: 0, maximum: 9, default: 5 }
      },
      additionalProperties: false
    }
  })
  assert.equal(charm.actions.restart, {
    description: 'No description',
    parallel: false,
    executionGroup: '',
    schema: { title: 'restart', description: 'No description', type: 'object', properties: {}, additionalProperties: false }
  })
  assert.is(charm.actions['open-ended']!.schema.additionalProperties, true)
  // The summary the model keeps carries each action's schema, so a controller checks parameters before queueing.
  assert.equal(Object.keys(charm.summary.actions ?? {}), ['open-ended', 'restart', 'snapshot'])
  for (const name of ['open-ended', 'restart', 'snapshot']) assert.equal(charm.summary.actions![name], { ...charm.actions[name]!.schema, description: charm.actions[name]!.description })
})

test('an empty actions.yaml declares no actions; a charm named juju-* may use juju- action names', async () => {
  assert.equal((await load({ 'metadata.yaml': baseMetadata, 'actions.yaml': '# none yet\n' })).actions, {})
  const charm = await load({ 'metadata.yaml': 'name: juju-tools\nsummary: s\ndescription: d\n', 'actions.yaml': 'juju-snapshot:\n  description: x\n' })
  assert.equal(Object.keys(charm.actions), ['juju-snapshot'])
})

test('v2 metadata with bases, and a manifest.yaml, make a format 2 charm', async () => {
  const v2 = await load({ 'metadata.yaml': baseMetadata + 'bases:\n  - {name: ubuntu, channel: "22.04"}\nassumes: [juju]\n' })
  assert.is(v2.metadata.format, 2)
  const manifest = await load({ 'metadata.yaml': baseMetadata, 'manifest.yaml': 'bases: []\n' })
  assert.is(manifest.metadata.format, 2)
})

test('unknown top-level keys are ignored, as Juju ignores them; obsolete ones too', async () => {
  const charm = await load({ 'metadata.yaml': baseMetadata + 'revision: 3\nformat: 2\nwebsite: https://example.com\nmaintainer: Someone <a@b.c>\n' })
  assert.is(charm.metadata.name, 'web')
})

test('a loaded and packed charm is what the model\'s add-charm command takes', async () => {
  await withCharm({
    'metadata.yaml': baseMetadata + 'requires:\n  db: {interface: mysql, limit: 1}\nstorage:\n  data: {type: filesystem, location: /srv}\n',
    'config.yaml': 'options:\n  port: {type: int, default: 80}\n',
    'actions.yaml': 'backup:\n  description: Back up.\n',
    'hooks/install': '#!/bin/sh\n'
  }, async dir => {
    const charm = await loadCharmDir(dir)
    const { hash } = await packCharm(dir)
    const command = { type: 'add-charm', requestId: 'req-1', proposer: { kind: 'user', name: 'admin' }, url: 'local:web-0', hash, metadata: charm.summary } as const
    const outcome = applyCommand(emptyModel(), command as unknown as ModelCommand, { index: 1, term: 1 })
    if (!outcome.result.ok) assert.unreachable(outcome.result.error)
    const stored = tableGet(outcome.context.charms, 'local:web-0')!
    assert.is(stored.hash, hash)
    assert.equal(stored.metadata.requires, { db: { interface: 'mysql', scope: 'global' } })
    assert.equal(stored.metadata.config, { port: { type: 'int', default: 80 } })
    assert.equal(stored.metadata.actions, { backup: { description: 'Back up.', schema: { title: 'backup', type: 'object', properties: {}, additionalProperties: false } } })
  })
})

test('the same definition can be built from plain values without the disk', () => {
  const definition = charmDefinition({ metadata: { name: 'db', summary: 's', description: 'd', provides: { db: 'mysql' } } }, { label: 'db' })
  assert.equal(definition.summary.provides, { db: { interface: 'mysql', scope: 'global' } })
})

// ---------------------------------------------------------------------------------
// Charms that are refused, one line each

const metadataRefusals: Array<[string, string, string]> = [
  ['no name', 'summary: s\ndescription: d\n',
    'charm "web": metadata.yaml: field "name": expected a charm name of lower case letters, digits and dashes, like "mysql", got nothing'],
  ['a bad name', 'name: Web_Server\nsummary: s\ndescription: d\n',
    'charm "web": metadata.yaml: field "name": expected a charm name of lower case letters, digits and dashes, like "mysql", got "Web_Server"'],
  ['no summary', 'name: web\ndescription: d\n',
    'charm "web": metadata.yaml: field "summary": expected a string, got nothing'],
  ['a description that is not a string', 'name: web\nsummary: s\ndescription: [a, b]\n',
    'charm "web": metadata.yaml: field "description": expected a string, got an array of 2'],
  ['a scope that is neither global nor container', baseMetadata + 'requires:\n  db: {interface: mysql, scope: galaxy}\n',
    'charm "web": metadata.yaml: field "requires.db.scope": expected "global" or "container", got "galaxy"'],
  ['a long-form endpoint without interface', baseMetadata + 'requires:\n  db: {scope: global}\n',
    'charm "web": metadata.yaml: field "requires.db.interface": expected an interface name of lower case letters and digits separated by "-" or "_", got nothing'],
  ['an endpoint that is neither a name nor a map', baseMetadata + 'provides:\n  website: [http]\n',
    'charm "web": metadata.yaml: field "provides.website": expected an interface name or a map with "interface", got an array of 1'],
  ['a bad interface name', baseMetadata + 'provides:\n  website: HTTP\n',
    'charm "web": metadata.yaml: field "provides.website": expected an interface name of lower case letters and digits separated by "-" or "_", got "HTTP"'],
  ['a bad endpoint name', baseMetadata + 'provides:\n  Website: http\n',
    'charm "web": metadata.yaml: field "provides.Website": expected an endpoint name of lower case letters and digits separated by "-" or "_", got "Website"'],
  ['an endpoint declared in two sections', baseMetadata + 'provides:\n  db: mysql\nrequires:\n  db: mysql\n',
    'charm "web": metadata.yaml: field "requires.db": expected an endpoint name not already declared in "provides", got "db"'],
  ['a negative limit', baseMetadata + 'provides:\n  db: {interface: mysql, limit: -1}\n',
    'charm "web": metadata.yaml: field "provides.db.limit": expected a whole number of relations, 0 or more, got -1'],
  ['optional that is not a boolean', baseMetadata + 'requires:\n  db: {interface: mysql, optional: yes}\n',
    'charm "web": metadata.yaml: field "requires.db.optional": expected true or false, got "yes"'],
  ['a container-scoped peer', baseMetadata + 'peers:\n  cluster: {interface: web-peers, scope: container}\n',
    'charm "web": metadata.yaml: field "peers.cluster.scope": expected "global" for a peer endpoint, got "container"'],
  ['a reserved endpoint name', baseMetadata + 'provides:\n  juju-info: juju-info\n',
    'charm "web": metadata.yaml: field "provides.juju-info": expected an endpoint name other than "juju" or "juju-*" (reserved), got "juju-info"'],
  ['the reserved name "juju"', baseMetadata + 'requires:\n  juju: {interface: juju-info, scope: container}\n',
    'charm "web": metadata.yaml: field "requires.juju": expected an endpoint name other than "juju" or "juju-*" (reserved), got "juju"'],
  ['a reserved interface on a provider', baseMetadata + 'provides:\n  info: juju-info\n',
    'charm "web": metadata.yaml: field "provides.info": expected an interface other than "juju" or "juju-*" (reserved for providers and peers), got "juju-info"'],
  ['a subordinate without a container-scoped requires', baseMetadata + 'subordinate: true\nrequires:\n  db: mysql\n',
    'charm "web": metadata.yaml: field "requires": expected a requires endpoint with scope "container" in a subordinate charm, got none'],
  ['subordinate that is not a boolean', baseMetadata + 'subordinate: "true"\n',
    'charm "web": metadata.yaml: field "subordinate": expected true or false, got "true"'],
  ['storage without type', baseMetadata + 'storage:\n  data: {location: /srv}\n',
    'charm "web": metadata.yaml: field "storage.data.type": expected "filesystem" or "block", got nothing'],
  ['storage of an unknown type', baseMetadata + 'storage:\n  data: {type: tape}\n',
    'charm "web": metadata.yaml: field "storage.data.type": expected "filesystem" or "block", got "tape"'],
  ['a location on block storage', baseMetadata + 'storage:\n  disk: {type: block, location: /dev/x}\n',
    'charm "web": metadata.yaml: field "storage.disk.location": expected no location for block storage, got "/dev/x"'],
  ['a relative location', baseMetadata + 'storage:\n  data: {type: filesystem, location: srv}\n',
    'charm "web": metadata.yaml: field "storage.data.location": expected an absolute path, got "srv"'],
  ['a range that is not m, m-n, m+ or m-', baseMetadata + 'storage:\n  data: {type: filesystem, multiple: {range: "a-b"}}\n',
    'charm "web": metadata.yaml: field "storage.data.multiple.range": expected a count "m" (1 or more), or a range "m-n", "m+" or "m-", got "a-b"'],
  ['a range whose end is below its start', baseMetadata + 'storage:\n  data: {type: filesystem, multiple: {range: 3-1}}\n',
    'charm "web": metadata.yaml: field "storage.data.multiple.range": expected a count "m" (1 or more), or a range "m-n", "m+" or "m-" with n at least m and at least 1, got "3-1"'],
  ['a zero count', baseMetadata + 'storage:\n  data: {type: filesystem, multiple: {range: 0}}\n',
    'charm "web": metadata.yaml: field "storage.data.multiple.range": expected a count "m" (1 or more), or a range "m-n", "m+" or "m-", got 0'],
  ['a property other than transient', baseMetadata + 'storage:\n  data: {type: filesystem, properties: [fast]}\n',
    'charm "web": metadata.yaml: field "storage.data.properties[0]": expected "transient", got "fast"'],
  ['a minimum size without a number', baseMetadata + 'storage:\n  data: {type: filesystem, minimum-size: big}\n',
    'charm "web": metadata.yaml: field "storage.data.minimum-size": expected a size in MiB with an optional M, G, T, P, E, Z or Y suffix, like "10G", got "big"'],
  ['an extra binding named like an endpoint', baseMetadata + 'provides:\n  website: http\nextra-bindings:\n  website:\n',
    'charm "web": metadata.yaml: field "extra-bindings.website": expected a name not used by an endpoint (it is in "provides"), got "website"'],
  ['an extra binding with a value', baseMetadata + 'extra-bindings:\n  admin: eth0\n',
    'charm "web": metadata.yaml: field "extra-bindings.admin": expected no value (extra bindings are names only), got "eth0"'],
  ['empty extra bindings', baseMetadata + 'extra-bindings: {}\n',
    'charm "web": metadata.yaml: field "extra-bindings": expected at least one binding name, got an empty map'],
  ['a series that is not a name', baseMetadata + 'series: [jammy, "22.04"]\n',
    'charm "web": metadata.yaml: field "series[1]": expected a series name like "jammy", got "22.04"'],
  ['v1 and v2 keys together', baseMetadata + 'series: [jammy]\nbases: [{name: ubuntu, channel: "22.04"}]\n',
    'charm "web": metadata.yaml: field "series": expected no v1 key ("deployment", "min-juju-version" or "series") in v2 metadata, which has "bases", got "series"'],
  ['a file resource without a filename', baseMetadata + 'resources:\n  bin: {type: file}\n',
    'charm "web": metadata.yaml: field "resources.bin.filename": expected a file name for a "file" resource, got nothing'],
  ['metadata that is not a map', '- name: web\n',
    'charm "web": metadata.yaml: expected a map of charm metadata, got an array of 1'],
  ['an empty metadata.yaml', '# nothing\n',
    'charm "web": metadata.yaml: expected a map of charm metadata, got an empty file']
]

for (const [what, metadata, message] of metadataRefusals) {
  test(`metadata.yaml refused: ${what}`, async () => {
    assert.is(await refusal({ 'metadata.yaml': metadata }), message)
  })
}

test('metadata.yaml refused: v1 keys in a charm with a manifest.yaml', async () => {
  assert.is(await refusal({ 'metadata.yaml': baseMetadata + 'series: [jammy]\n', 'manifest.yaml': 'bases: []\n' }),
    'charm "web": metadata.yaml: field "series": expected no v1 key ("deployment", "min-juju-version" or "series") in a charm with a manifest.yaml, got "series"')
})

const configRefusals: Array<[string, string, string]> = [
  ['an empty file', '\n', 'charm "web": config.yaml: expected a map with "options", got an empty file'],
  ['no options key', 'settings: {}\n', 'charm "web": config.yaml: field "options": expected a map of option name to option, got nothing'],
  ['options that are not a map', 'options: [a]\n', 'charm "web": config.yaml: field "options": expected a map of option name to option, got an array of 1'],
  ['an unknown type', 'options:\n  port: {type: integer}\n',
    'charm "web": config.yaml: field "options.port.type": expected "string", "int", "float", "boolean" or "secret", got "integer"'],
  ['an int default that is not whole', 'options:\n  port: {type: int, default: 80.5}\n',
    'charm "web": config.yaml: field "options.port.default": expected an int (a whole number) for a int option, got 80.5'],
  ['an int default given as a string', 'options:\n  port: {type: int, default: "80"}\n',
    'charm "web": config.yaml: field "options.port.default": expected an int (a whole number) for a int option, got "80"'],
  ['a boolean default spelled yes', 'options:\n  debug: {type: boolean, default: yes}\n',
    'charm "web": config.yaml: field "options.debug.default": expected a boolean (true or false) for a boolean option, got "yes"'],
  ['a string default that is a number', 'options:\n  title: {type: string, default: 5}\n',
    'charm "web": config.yaml: field "options.title.default": expected a string for a string option, got 5'],
  ['a float default that is not a number', 'options:\n  ratio: {type: float, default: half}\n',
    'charm "web": config.yaml: field "options.ratio.default": expected a float (a number) for a float option, got "half"'],
  ['a bad option name', 'options:\n  -port: {type: int}\n',
    'charm "web": config.yaml: field "options.-port": expected an option name of letters, digits, ".", "_" and "-" starting with a letter or digit, got "-port"'],
  ['an option that is not a map', 'options:\n  port: 8080\n',
    'charm "web": config.yaml: field "options.port": expected a map with "type", "default" and "description", got 8080']
]

for (const [what, config, message] of configRefusals) {
  test(`config.yaml refused: ${what}`, async () => {
    assert.is(await refusal({ 'metadata.yaml': baseMetadata, 'config.yaml': config }), message)
  })
}

const actionRefusals: Array<[string, string, string]> = [
  ['a name with capitals', 'Snapshot:\n  description: x\n',
    'charm "web": actions.yaml: field "Snapshot": expected an action name of lower case letters, digits and dashes, starting and ending with a letter or digit, got "Snapshot"'],
  ['a name ending in a dash', 'snapshot-:\n  description: x\n',
    'charm "web": actions.yaml: field "snapshot-": expected an action name of lower case letters, digits and dashes, starting and ending with a letter or digit, got "snapshot-"'],
  ['a reserved name', 'juju-run:\n  description: x\n',
    'charm "web": actions.yaml: field "juju-run": expected an action name other than "juju" or "juju-*" (reserved), got "juju-run"'],
  ['params that are not a map', 'snapshot:\n  params:\n',
    'charm "web": actions.yaml: field "snapshot.params": expected a map of parameter name to JSON schema, got null'],
  ['a non-string description', 'snapshot:\n  description: [a]\n',
    'charm "web": actions.yaml: field "snapshot.description": expected a string, got an array of 1'],
  ['parallel that is not a boolean', 'snapshot:\n  parallel: "not a bool"\n',
    'charm "web": actions.yaml: field "snapshot.parallel": expected true or false, got "not a bool"'],
  ['an execution group that is not a string', 'snapshot:\n  execution-group: [a]\n',
    'charm "web": actions.yaml: field "snapshot.execution-group": expected a string, got an array of 1'],
  ['required that is not a list', 'snapshot:\n  params:\n    outfile: {type: string}\n  required: outfile\n',
    'charm "web": actions.yaml: field "snapshot.required": expected a list of distinct property names, got "outfile"'],
  ['a parameter type that does not exist', 'snapshot:\n  params:\n    outfile: {type: strin}\n',
    'charm "web": actions.yaml: field "snapshot.params.outfile.type": expected a JSON type name ("array", "boolean", "integer", "null", "number", "object", "string") or a list of distinct ones, got "strin"'],
  ['a $ref', 'snapshot:\n  params:\n    outfile: {$ref: "http://example.com/schema"}\n',
    'charm "web": actions.yaml: field "snapshot.params.outfile": expected only keywords of the draft-4 subset cantrip checks (not "$ref", "$schema", "allOf", "anyOf", "oneOf", "not", "patternProperties", "dependencies"), got "$ref"'],
  ['a combinator', 'snapshot:\n  params:\n    mode: {anyOf: [{type: string}, {type: integer}]}\n',
    'charm "web": actions.yaml: field "snapshot.params.mode": expected only keywords of the draft-4 subset cantrip checks (not "$ref", "$schema", "allOf", "anyOf", "oneOf", "not", "patternProperties", "dependencies"), got "anyOf"'],
  ['a pattern that does not compile', 'snapshot:\n  params:\n    name: {type: string, pattern: "(["}\n',
    'charm "web": actions.yaml: field "snapshot.params.name.pattern": expected an ECMAScript regular expression, got "(["'],
  ['exclusiveMinimum without minimum', 'snapshot:\n  params:\n    n: {type: number, exclusiveMinimum: true}\n',
    'charm "web": actions.yaml: field "snapshot.params.n.exclusiveMinimum": expected "minimum" beside it, got true'],
  ['a parameter schema that is not a map', 'snapshot:\n  params:\n    n: integer\n',
    'charm "web": actions.yaml: field "snapshot.params.n": expected a JSON schema (a map), got "integer"'],
  ['a type other than object', 'snapshot:\n  type: array\n',
    'charm "web": actions.yaml: field "snapshot.type": expected "object" (action parameters are a map), got "array"'],
  ['actions that are not a map', '- snapshot\n',
    'charm "web": actions.yaml: expected a map of action name to action, got an array of 1']
]

for (const [what, actions, message] of actionRefusals) {
  test(`actions.yaml refused: ${what}`, async () => {
    assert.is(await refusal({ 'metadata.yaml': baseMetadata, 'actions.yaml': actions }), message)
  })
}

test('a metadata problem is reported before one in config.yaml', async () => {
  assert.is(await refusal({ 'metadata.yaml': 'name: web\nsummary: s\n', 'config.yaml': 'nonsense: [' }),
    'charm "web": metadata.yaml: field "description": expected a string, got nothing')
})

// ---------------------------------------------------------------------------------
// YAML itself

test('YAML: duplicate keys are refused with their field path and line', async () => {
  assert.is(await refusal({ 'metadata.yaml': baseMetadata + 'requires:\n  db: mysql\n  cache: redis\n  db: pgsql\n' }),
    'charm "web": metadata.yaml: field "requires.db": expected each key once in its map, got a second "db" at line 7, column 3')
  assert.is(await refusal({ 'metadata.yaml': baseMetadata + 'name: other\n' }),
    'charm "web": metadata.yaml: field "name": expected each key once in its map, got a second "name" at line 4, column 1')
})

test('YAML: custom and YAML 1.1 tags are refused; core tags are fine', async () => {
  assert.is(await refusal({ 'metadata.yaml': baseMetadata + 'provides:\n  website: !python/object http\n' }),
    'charm "web": metadata.yaml: field "provides.website": expected no YAML tags beyond the core schema, got "!python/object" at line 5, column 27')
  assert.is(await refusal({ 'metadata.yaml': baseMetadata, 'config.yaml': 'options:\n  key: {type: string, default: !!binary aGVsbG8=}\n' }),
    'charm "web": config.yaml: field "options.key.default": expected no YAML tags beyond the core schema, got "tag:yaml.org,2002:binary" at line 2, column 41')
  const charm = await load({ 'metadata.yaml': baseMetadata, 'config.yaml': 'options:\n  port: {type: string, default: !!str 8080}\n' })
  assert.is(charm.config.port!.default, '8080')
})

test('YAML: syntax errors, several documents and non-string keys are refused', async () => {
  assert.is(await refusal({ 'metadata.yaml': baseMetadata + 'provides: [a\n' }),
    'charm "web": metadata.yaml: expected valid YAML, got "Flow sequence in block collection must be sufficiently indented and end with a ]" at line 5, column 1')
  assert.is(await refusal({ 'metadata.yaml': baseMetadata + '---\nname: other\n' }),
    'charm "web": metadata.yaml: expected valid YAML, got "Source contains multiple documents; please use YAML.parseAllDocuments()" at line 4, column 1')
  assert.is(await refusal({ 'metadata.yaml': '%FOO bar\n---\n' + baseMetadata }),
    'charm "web": metadata.yaml: expected valid YAML without warnings, got "Unknown directive %FOO" at line 1, column 1')
  assert.is(await refusal({ 'metadata.yaml': baseMetadata + 'provides:\n  1: http\n' }),
    'charm "web": metadata.yaml: field "provides": expected map keys that are strings, got 1 at line 5, column 3')
  assert.is(await refusal({ 'metadata.yaml': baseMetadata + 'provides:\n  ? [a]\n  : http\n' }),
    'charm "web": metadata.yaml: field "provides": expected map keys that are strings, got a collection at line 5, column 5')
})

test('YAML: a file over charmFileBytesMax is refused before it is parsed', async () => {
  const big = baseMetadata + '#'.repeat(limits.charmFileBytesMax - baseMetadata.length) + '\n'
  assert.is(await refusal({ 'metadata.yaml': big }),
    `charm "web": metadata.yaml: expected at most ${limits.charmFileBytesMax} bytes, got ${limits.charmFileBytesMax + 1} bytes`)
  // Exactly at the limit still loads.
  const atLimit = baseMetadata + '#'.repeat(limits.charmFileBytesMax - baseMetadata.length - 1) + '\n'
  assert.is((await load({ 'metadata.yaml': atLimit })).metadata.name, 'web')
})

test('YAML: an alias bomb is refused by the alias cap', async () => {
  const bomb = [
    'a: &a [x, x, x, x, x, x, x, x, x, x]',
    'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
    'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
    'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
    'e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
    'f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]',
    ''
  ].join('\n')
  assert.is(await refusal({ 'metadata.yaml': baseMetadata, 'actions.yaml': bomb }),
    `charm "web": actions.yaml: expected YAML whose aliases expand at most ${limits.charmYamlAliasesMax} times each and name earlier anchors, got "Excessive alias count indicates a resource exhaustion attack"`)
})

test('YAML: many anchors each expanded within the alias cap still hit charmYamlValuesMax', async () => {
  // 60 anchors of 100 values, each aliased 50 times: within yaml's per-anchor cap,
  // but 300 000 values once expanded.
  const lines: string[] = []
  const list = `[${Array.from({ length: 100 }, () => 'x').join(', ')}]`
  for (let i = 0; i < 60; i++) lines.push(`a${i}: &a${i} ${list}`)
  for (let i = 0; i < 60; i++) lines.push(`b${i}: [${Array.from({ length: 50 }, () => `*a${i}`).join(', ')}]`)
  assert.is(await refusal({ 'metadata.yaml': baseMetadata, 'actions.yaml': lines.join('\n') + '\n' }),
    `charm "web": actions.yaml: expected at most ${limits.charmYamlValuesMax} YAML values once aliases are expanded, got more`)
})

test('YAML: an undefined alias is refused', async () => {
  assert.is(await refusal({ 'metadata.yaml': baseMetadata + 'provides:\n  website: *nothing\n' }),
    `charm "web": metadata.yaml: expected YAML whose aliases expand at most ${limits.charmYamlAliasesMax} times each and name earlier anchors, got "Unresolved alias (the anchor must be set before the alias): nothing"`)
})

test('YAML: nesting deeper than charmYamlDepthMax is refused, however deep', async () => {
  const nested = (depth: number): string => 'x: ' + '['.repeat(depth) + ']'.repeat(depth) + '\n'
  assert.is(await refusal({ 'metadata.yaml': baseMetadata, 'actions.yaml': nested(limits.charmYamlDepthMax + 1) }),
    `charm "web": actions.yaml: field "x${'[0]'.repeat(limits.charmYamlDepthMax)}": expected YAML nested at most ${limits.charmYamlDepthMax} deep, got deeper nesting at line 1, column ${limits.charmYamlDepthMax + 4}`)
  // One level less (the top-level map is level 0) loads as far as YAML goes.
  assert.is(await refusal({ 'metadata.yaml': baseMetadata, 'actions.yaml': nested(limits.charmYamlDepthMax) }),
    'charm "web": actions.yaml: field "x": expected a map with "description" and "params", got an array of 1')
  // So deep that the parser itself gives up (it reports its own stack overflow).
  const message = await refusal({ 'metadata.yaml': baseMetadata, 'actions.yaml': nested(10_000) })
  assert.match(message, /^charm "web": actions\.yaml: expected valid YAML, got "nesting too deep to parse" at line 1, column \d+$/)
})

test('files that are not UTF-8 text, or not files, are refused', async () => {
  assert.is(await refusal({ 'metadata.yaml': new Uint8Array([0x6e, 0x61, 0x6d, 0x65, 0x3a, 0x20, 0xff, 0x0a]) }),
    'charm "web": metadata.yaml: expected UTF-8 text, got bytes that are not UTF-8')
  assert.is(await refusal({ 'metadata.yaml': baseMetadata, 'config.yaml/x': '' }),
    'charm "web": config.yaml: expected a regular file, got a directory')
})

test('a directory without metadata.yaml, or no directory at all, is a charm missing from disk', async () => {
  await withCharm({ 'hooks/install': '#!/bin/sh\n' }, async dir => {
    const error = await rejects(loadCharmDir(dir), 'CharmNotFoundError')
    assert.is(error.message, `charm missing from disk: ${JSON.stringify(dir)} has no metadata.yaml (nor a charmcraft.yaml)`)
    const missing = join(dir, 'nope')
    const gone = await rejects(loadCharmDir(missing), 'CharmNotFoundError')
    assert.is(gone.message, `charm missing from disk: ${JSON.stringify(missing)} does not exist`)
  })
})

test.run()
