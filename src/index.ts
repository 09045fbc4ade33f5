/**
 * `ptykit`: the platform-free core — the exit-cause algebra, the contracts, the spawn pipeline and
 * the default controller. Providers live in `ptykit/node-pty` and `ptykit/testing`.
 *
 * @packageDocumentation
 */
export * from './exit-cause/index.js'
export * from './contracts/index.js'
export * from './spawn/index.js'
export * from './controller/index.js'
