/**
 * `ptykit/contracts`.
 *
 * @packageDocumentation
 */
export {}
