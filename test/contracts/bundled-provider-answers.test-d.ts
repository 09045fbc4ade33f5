// The provider-side types take `undefined` for absent (what a host's own provider builds), but the
// providers ptykit ships answer exactly: a host calling one directly (a listing before the
// controller exists, a tool that inspects the pty host) keeps `PtyProcessInfo` rows, whose optional
// fields are absent, never `undefined` — assignable where `exactOptionalPropertyTypes` is on.
// (Assignment, not expectTypeOf's equality: that does not tell `a?: T` from `a?: T | undefined`.)
import { test } from 'vitest'
import type { PtyProcessInfo } from '../../src/contracts/index.js'
import { createNodePtyProvider } from '../../src/node-pty/index.js'
import { createPtyHostProvider } from '../../src/pty-host/index.js'
import { createSshProvider } from '../../src/ssh/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

test('a direct call of each bundled provider assigns to PtyProcessInfo[] under exactOptionalPropertyTypes (before: ProviderProcessInfo[], refused for node-pty, pty-host and ssh)', async () => {
  const take = (rows: PtyProcessInfo[]): number => rows.length
  take(await createNodePtyProvider().listProcesses())
  take(await createPtyHostProvider({ socketPath: '/nonexistent' }).listProcesses())
  take(await createSshProvider({} as Parameters<typeof createSshProvider>[0]).listProcesses())
  take(await createFakePtyProvider().listProcesses())
})
