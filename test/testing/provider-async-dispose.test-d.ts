import { expectTypeOf, test } from 'vitest'
import { createNodePtyProvider } from '../../src/node-pty/index.js'
import { createPtyHostProvider, startPtyHost } from '../../src/pty-host/index.js'
import { createSshProvider } from '../../src/ssh/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

test('providers are AsyncDisposable, so `await using` type-checks (TS2851 before)', () => {
  expectTypeOf(createNodePtyProvider).returns.toMatchTypeOf<AsyncDisposable>()
  expectTypeOf(createFakePtyProvider).returns.toMatchTypeOf<AsyncDisposable>()
  expectTypeOf(createSshProvider).returns.toMatchTypeOf<AsyncDisposable>()
  expectTypeOf(createPtyHostProvider).returns.toMatchTypeOf<AsyncDisposable>()
})

test('an in-process pty host is AsyncDisposable: `await using host = await startPtyHost()` closes it', () => {
  expectTypeOf(startPtyHost).returns.resolves.toMatchTypeOf<AsyncDisposable>()
})
