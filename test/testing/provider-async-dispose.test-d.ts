import { expectTypeOf, test } from 'vitest'
import { createNodePtyProvider } from '../../src/node-pty/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

test('providers are AsyncDisposable, so `await using` type-checks (TS2851 before)', () => {
  expectTypeOf(createNodePtyProvider).returns.toMatchTypeOf<AsyncDisposable>()
  expectTypeOf(createFakePtyProvider).returns.toMatchTypeOf<AsyncDisposable>()
})
