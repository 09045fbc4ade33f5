import { expect } from './conformance-expect.js'
import { isWriteSettlement, type PtyProvider, type WriteSettlement } from '../contracts/index.js'
import type { PtyProviderConformanceCheck, PtyProviderConformanceHarness, PtyProviderConformanceOptions } from './conformance-types.js'

// The conformance checks of writes of raw bytes (`PtyProvider.writeBytes`), for providers that
// declare them: settled as honestly as text, and only ever bytes — never anything else.

/**
 * What a check writes: the bytes 0x80 to 0xFF, which no string written as UTF-8 can carry. Not the
 * control bytes: into a terminal in its default (cooked) mode, `0x03` is a ^C that ends the
 * long-running program the check writes to.
 */
const HIGH_BYTES = Uint8Array.from({ length: 128 }, (_, i) => 0x80 + i)

/**
 * The checks of `writeBytes` (see `ptyProviderConformanceChecks`): registered unless the
 * `writeBytes` capability is `false`; each passes at once for a provider without `writeBytes`,
 * unless the capability says it has one.
 *
 * @param options - how to drive the provider (as for the whole suite).
 */
export function bytesConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  const declared = options.capabilities?.writeBytes
  if (declared === false) return []
  /** The provider's `writeBytes`, or `undefined` when it has none and does not declare one (the check then passes at once). */
  const writeBytesOf = (h: PtyProviderConformanceHarness): ((id: string, bytes: Uint8Array) => WriteSettlement | Promise<WriteSettlement>) | undefined => {
    const provider: PtyProvider = h.provider
    if (typeof provider.writeBytes !== 'function') {
      expect(declared, 'the `writeBytes` capability is declared, but the provider has no writeBytes method').not.toBe(true)
      return undefined
    }
    return (id, bytes) => (provider.writeBytes as NonNullable<PtyProvider['writeBytes']>)(id, bytes)
  }
  return [
    {
      name: 'writes bytes as honestly as text: not refused for a live PTY, never accepted after exit (refused at once after an exit it reported) nor to an unknown id',
      async run(h) {
        const writeBytes = writeBytesOf(h)
        if (writeBytes === undefined) return
        const live = await h.spawn(options.spawnLongRunning())
        const settled = await settlementOf(writeBytes(live.id, HIGH_BYTES))
        expect(['accepted', 'unverifiable'], `writeBytes to a live PTY answered ${JSON.stringify(settled)}`).toContain(settled.kind)
        // Text still goes through after bytes.
        expect(['accepted', 'unverifiable']).toContain((await settlementOf(h.provider.write(live.id, '\r'))).kind)
        const ended = await h.spawn(options.spawnExit(0))
        await h.waitForExit(ended.id)
        const answer = writeBytes(ended.id, HIGH_BYTES)
        const afterExit = await settlementOf(answer)
        // Why at once: the controller's boolean `write` reads a pending settlement as "handed over".
        expect(answer instanceof Promise, 'a write of bytes after the exit this provider reported answers its refusal synchronously, not as a promise').toBe(false)
        expect(afterExit.kind).not.toBe('accepted')
        expect((await settlementOf(writeBytes('ptykit-conformance-no-such-pty', HIGH_BYTES))).kind).not.toBe('accepted')
      },
    },
    {
      name: 'refuses bytes that are not a Uint8Array (a string, an array, an ArrayBuffer) with a TypeError, never a settlement claiming bytes were handed over',
      async run(h) {
        const writeBytes = writeBytesOf(h)
        if (writeBytes === undefined) return
        const live = await h.spawn(options.spawnLongRunning())
        for (const bytes of ['text', [1, 2], new ArrayBuffer(2), 42, undefined]) {
          let thrown: unknown
          let answer: unknown
          try {
            answer = await writeBytes(live.id, bytes as never)
          } catch (error) {
            thrown = error
          }
          expect(thrown, `writeBytes(id, ${Object.prototype.toString.call(bytes)}) answered ${JSON.stringify(answer)}`).toBeInstanceOf(TypeError)
        }
        // The PTY is unharmed: well-formed bytes after them are not refused.
        const after = await settlementOf(writeBytes(live.id, new Uint8Array([0x0d])))
        expect(after.kind, `writeBytes after them answered ${JSON.stringify(after)}`).not.toBe('refused')
      },
    },
  ]
}

/** A write's answer once settled, failing the check when it rejects or is not a `WriteSettlement`. */
async function settlementOf(answer: WriteSettlement | Promise<WriteSettlement>): Promise<WriteSettlement> {
  let settled: unknown
  try {
    settled = await answer
  } catch (error) {
    throw new Error(`writeBytes rejected (${String(error)}): it must settle with a WriteSettlement, never reject — answer refused(...) or unverifiable(...) instead`)
  }
  expect(isWriteSettlement(settled), `writeBytes answered ${JSON.stringify(settled)}, not a WriteSettlement`).toBe(true)
  return settled as WriteSettlement
}
