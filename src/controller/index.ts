/**
 * `ptykit/controller`.
 *
 * @packageDocumentation
 */
export {}
