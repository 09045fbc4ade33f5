/**
 * `ptykit/node-pty`.
 *
 * @packageDocumentation
 */
export {}
