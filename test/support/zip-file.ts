/**
 * A small zip writer for tests: each member stored or deflated, with the Unix mode in
 * the external attributes as Go's archive/zip (and so charmcraft and Juju) writes it.
 */
import { crc32, deflateRawSync } from 'node:zlib'

export interface ZipMember {
  name: string
  /** File content (text or bytes), or a symlink's target. */
  data?: string | Uint8Array
  /** Unix mode including the file type; default a 0644 regular file (0755 dir for names ending in "/"). */
  mode?: number
  deflate?: boolean
}

export function zipFile (members: readonly ZipMember[]): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const member of members) {
    const name = Buffer.from(member.name)
    const raw = typeof member.data === 'string' || member.data === undefined ? Buffer.from(member.data ?? '') : Buffer.from(member.data)
    const deflate = member.deflate === true
    const body = deflate ? deflateRawSync(raw) : raw
    const crc = crc32(raw)
    const mode = member.mode ?? (member.name.endsWith('/') ? 0o040755 : 0o100644)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(deflate ? 8 : 0, 8)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(body.length, 18)
    local.writeUInt32LE(raw.length, 22)
    local.writeUInt16LE(name.length, 26)
    locals.push(local, name, body)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE((3 << 8) | 20, 4) // made by Unix
    central.writeUInt16LE(20, 6)
    central.writeUInt16LE(deflate ? 8 : 0, 10)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(body.length, 20)
    central.writeUInt32LE(raw.length, 24)
    central.writeUInt16LE(name.length, 28)
    central.writeUInt32LE((mode << 16) >>> 0, 38)
    central.writeUInt32LE(offset, 42)
    centrals.push(central, name)
    offset += local.length + name.length + body.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(members.length, 8)
  end.writeUInt16LE(members.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, directory, end])
}
