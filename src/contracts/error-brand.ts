/**
 * Internal (not exported from `ptykit/contracts`): the one way every ptykit error class is branded
 * so that its `is*` guard recognizes it across duplicate copies of the package (two versions in one
 * `node_modules`, a CJS and an ESM copy) — where `instanceof` fails. The brand is a global
 * `Symbol.for('ptykit.<ClassName>')` own property; the class's `name` is set on its prototype
 * (not enumerable), so it survives minification.
 */

/** The brand of an error class, and its guard. */
export interface ErrorBrand<T extends Error> {
  /** Mark a freshly constructed error (call it last in the constructor). */
  mark(error: T): void
  /** True for an error marked with this brand, from any copy of the package. */
  is(value: unknown): value is T
}

/**
 * Brand the error class `errorClass` under `name` (its public class name, e.g. `'PtySpawnError'`):
 * sets `errorClass.prototype.name` and returns the `mark`/`is` pair for its constructor and guard.
 */
export function defineErrorBrand<T extends Error>(
  errorClass: abstract new (...args: never[]) => T,
  name: string,
): ErrorBrand<T> {
  const brand = Symbol.for(`ptykit.${name}`)
  Object.defineProperty(errorClass.prototype, 'name', { value: name, enumerable: false })
  return {
    mark(error) {
      Object.defineProperty(error, brand, { value: true })
    },
    is(value: unknown): value is T {
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
    },
  }
}
