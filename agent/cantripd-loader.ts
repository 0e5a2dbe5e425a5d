/**
 * dist/cantripd.mjs, the agent as shipped and as providers and the stub start it: runs
 * the agent bundle (dist/cantripd.cjs, agent/cantripd.ts bundled as one script) with
 * V8's code cache, which the build writes beside it (agent/tools/cached-program.ts).
 */
import { startProgram } from './tools/cached-program.ts'

/** The sha256 of dist/cantripd.cjs, defined by scripts/build.ts. */
declare const cantripdBundleDigest: string

startProgram({ metaUrl: import.meta.url, metaResolve: import.meta.resolve, importModule: async specifier => await import(specifier), bundle: 'cantripd.cjs', digest: cantripdBundleDigest })
