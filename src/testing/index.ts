/**
 * `ptykit/testing`.
 *
 * @packageDocumentation
 */
export {}
