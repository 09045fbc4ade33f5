/**
 * `ptykit/spawn`.
 *
 * @packageDocumentation
 */
export {}
