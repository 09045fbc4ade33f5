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
 * @throws the `unavailable` error: "is not installed" when the import found no module, "could not be
 * loaded (…)" for any other import failure, "loaded but {lacks}" when it is not the expected module.
 */
export async function loadOptionalPeer<T>(load: OptionalPeerLoad): Promise<T> {
  let loaded: unknown
  try {
    loaded = await load.loader()
  } catch (error) {
    throw load.unavailable(error, whyNotLoaded(error))
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
    throw load.unavailable(error, whyNotLoaded(error))
  }
  return optionalPeerModule<T>(loaded, load)
}

/** "is not installed" when the import found no module, "could not be loaded (…)" for any other failure. */
function whyNotLoaded(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return 'is not installed'
  return `could not be loaded (${error instanceof Error ? error.message : String(error)})`
}

/** The module object in what the loader returned, or the `unavailable` error "loaded but {lacks}". */
function optionalPeerModule<T>(loaded: unknown, load: Pick<OptionalPeerLoad, 'isModule' | 'lacks' | 'unavailable'>): T {
  const module = interopOptionalPeer<T>(loaded, load.isModule)
  if (module === null) throw load.unavailable(undefined, `loaded but ${load.lacks}`)
  return module
}
