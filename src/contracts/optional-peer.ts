/**
 * Internal (not exported from `ptykit/contracts`): loading an optional peer dependency on first
 * use, as the node-pty and SSH providers do, so importing their subpath works without the peer
 * installed and a missing install is one typed error with an install hint.
 */

/**
 * Pick the module object out of whatever a dynamic `import()` returned: ESM-from-CJS gives a
 * namespace whose `default` is `module.exports`, a CJS bundle's `require` gives `module.exports`
 * itself, and some bundlers nest the default twice. `null` when no level `isModule` accepts.
 */
export function interopOptionalPeer<T>(loaded: unknown, isModule: (candidate: object) => boolean): T | null {
  let candidate: unknown = loaded
  for (let depth = 0; depth < 3 && candidate !== null && typeof candidate === 'object'; depth += 1) {
    if (isModule(candidate)) return candidate as T
    candidate = (candidate as { default?: unknown }).default
  }
  return null
}

/** How to load one optional peer. */
export type OptionalPeerLoad = {
  /** The dynamic import (a literal specifier at the call site, so bundlers keep it external). */
  loader: () => Promise<unknown>
  /**
   * The peer's package name (`node-pty`). A failure to find it is "is not installed" wherever the
   * import was made (ptykit bundled into another package). Without it, a module missing for a file
   * of another installed package than ptykit counts as a module the peer needs.
   */
  peer?: string | undefined
  /** Recognizes the module object (e.g. it has a `spawn` function). */
  isModule: (candidate: object) => boolean
  /** What the module lacked when `isModule` refused every level, for the message ("has no `spawn` function"). */
  lacks: string
  /** The provider's typed error, given the cause and why the peer cannot be used. */
  unavailable: (cause: unknown, why: string) => Error
}

/**
 * Load an optional peer and normalize the result.
 *
 * @throws the `unavailable` error: "is not installed" when the import found no module, "is
 * installed, but a module it needs is missing: `{module}` (imported by `{package}`)" when the peer
 * (or a package it loads) was found but one of its own imports was not (fast-check without
 * pure-rand), "could not be loaded (…)" for any other import failure, "loaded but {lacks}" when it is
 * not the expected module.
 */
export async function loadOptionalPeer<T>(load: OptionalPeerLoad): Promise<T> {
  let loaded: unknown
  try {
    loaded = await load.loader()
  } catch (error) {
    throw load.unavailable(error, whyNotLoaded(error, load.peer))
  }
  return optionalPeerModule<T>(loaded, load)
}

/**
 * {@link loadOptionalPeer} for a synchronous loader (a `require` in a CommonJS build, which has no
 * top-level `await`): the same errors, with the same words.
 */
export function requireOptionalPeer<T>(load: Omit<OptionalPeerLoad, 'loader'> & { loader: () => unknown }): T {
  let loaded: unknown
  try {
    loaded = load.loader()
  } catch (error) {
    throw load.unavailable(error, whyNotLoaded(error, load.peer))
  }
  return optionalPeerModule<T>(loaded, load)
}

/**
 * "is not installed" when the import found no module, "is installed, but a module it needs is
 * missing: …" when what was not found was imported by a file of another installed package (the
 * peer, or a package it loads), "could not be loaded (…)" for any other failure.
 */
function whyNotLoaded(error: unknown, peer: string | undefined): string {
  const code = (error as { code?: unknown } | null)?.code
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') {
    return `could not be loaded (${error instanceof Error ? error.message : String(error)})`
  }
  const missing = missingModule(error)
  if (missing === null || (peer !== undefined && packageOfSpecifier(missing.specifier) === peer)) return 'is not installed'
  const importer = missing.importer === undefined ? null : packageOfFile(missing.importer)
  if (importer === null || importer === PTYKIT_PACKAGE_NAME) return 'is not installed'
  return `is installed, but a module it needs is missing: \`${missing.specifier}\` (imported by \`${importer}\`)`
}

/** ptykit's own package name: a module it fails to find is the peer itself. */
const PTYKIT_PACKAGE_NAME = 'ptykit'

/**
 * The module Node could not find and the file that imported it, from the error's message (ESM:
 * "Cannot find package 'x' imported from /file"; CommonJS: "Cannot find module 'x'" with
 * `requireStack`). `null` when the message does not name it.
 */
function missingModule(error: unknown): { specifier: string; importer?: string } | null {
  const message = error instanceof Error ? error.message : ''
  const named = /^Cannot find (?:package|module) '([^']+)'(?: imported from (.+))?/.exec(message)
  if (named === null) return null
  const [, specifier, importedFrom] = named as unknown as [string, string, string | undefined]
  const requireStack = (error as { requireStack?: unknown }).requireStack
  const importer = importedFrom?.trim() ?? (Array.isArray(requireStack) && typeof requireStack[0] === 'string' ? requireStack[0] : undefined)
  return importer === undefined ? { specifier } : { specifier, importer }
}

/** The package a bare specifier names (`@scope/name`, `name`); `null` for a path or URL. */
function packageOfSpecifier(specifier: string): string | null {
  if (/^(?:[./\\]|[a-zA-Z]:|[a-z]+:)/.test(specifier)) return null
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? null)
}

/** The installed package a file belongs to (the name after its last `node_modules`); `null` for none. */
function packageOfFile(file: string): string | null {
  const parts = file.replace(/^file:\/\//, '').split(/[\\/]/)
  const at = parts.lastIndexOf('node_modules')
  if (at === -1 || at + 1 >= parts.length) return null
  const name = parts[at + 1] as string
  return name.startsWith('@') && at + 2 < parts.length ? `${name}/${parts[at + 2]}` : name
}

/** The module object in what the loader returned, or the `unavailable` error "loaded but {lacks}". */
function optionalPeerModule<T>(loaded: unknown, load: Pick<OptionalPeerLoad, 'isModule' | 'lacks' | 'unavailable'>): T {
  const module = interopOptionalPeer<T>(loaded, load.isModule)
  if (module === null) throw load.unavailable(undefined, `loaded but ${load.lacks}`)
  return module
}
