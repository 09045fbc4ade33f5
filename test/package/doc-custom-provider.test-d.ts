// scripts/consumer-types/custom-provider.ts stands in, in the consumer type check, for the module
// docs/writing-a-provider.md builds (examples/custom-provider.ts), which its samples import as
// `./custom-provider.js`. Its declarations must stay those of the example.
import { describe, expectTypeOf, it } from 'vitest'
import type * as example from '../../examples/custom-provider.js'
import type * as stub from '../../scripts/consumer-types/custom-provider.js'

describe("the doc check's custom-provider.ts", () => {
  it('declares what examples/custom-provider.ts exports, with the same types', () => {
    expectTypeOf<typeof stub.createJsonLinesPtyProvider>().toEqualTypeOf<typeof example.createJsonLinesPtyProvider>()
    expectTypeOf<stub.JsonLinesPtyProviderOptions>().toEqualTypeOf<example.JsonLinesPtyProviderOptions>()
    expectTypeOf<stub.JsonLinesPtyProvider>().toEqualTypeOf<example.JsonLinesPtyProvider>()
    expectTypeOf<stub.JsonLinesHostCommand>().toEqualTypeOf<example.JsonLinesHostCommand>()
  })
})
