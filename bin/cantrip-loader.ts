/**
 * dist/cantrip.mjs, the `cantrip` executable as shipped: runs the client bundle
 * (dist/cantrip.cjs, bin/cantrip.ts bundled as one script) with V8's code cache, which
 * the build writes beside it (agent/tools/cached-program.ts).
 */
import { startProgram } from '../agent/tools/cached-program.ts'

/** The sha256 of dist/cantrip.cjs, defined by scripts/build.ts. */
declare const cantripBundleDigest: string

startProgram({ metaUrl: import.meta.url, metaResolve: import.meta.resolve, importModule: async specifier => await import(specifier), bundle: 'cantrip.cjs', digest: cantripBundleDigest })
