// describePtyProviderConformance where vitest is installed but does not run the file (a `node:test`
// or Jest suite in a project that has vitest too): vitest's own `describe` then throws an internal
// TypeError. The call says what to do instead, as a TestingPeerUnavailableError (`peer: 'vitest'`).
// scripts/check-packed-consumer.mjs does the same from the tarball, under node:test.
import { describe, expect, it, vi } from 'vitest'

/** What vitest 4's `describe` throws when called outside a vitest run. */
const outsideARun = new TypeError("Cannot read properties of undefined (reading 'config')")

vi.mock('../../src/testing/testing-peers.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/testing/testing-peers.js')>()
  const thrown = new TypeError("Cannot read properties of undefined (reading 'config')")
  return {
    ...original,
    vitestPeer: {
      vitest: {
        describe: () => {
          throw thrown
        },
        it: () => undefined,
      },
    },
  }
})

const { createFakePtyProvider, describePtyProviderConformance, fakeScriptMetadata, isTestingPeerUnavailableError } = await import('../../src/testing/index.js')

const drivers = {
  spawnEcho: (text: string) => ({ metadata: fakeScriptMetadata({ output: [text], exit: { exitCode: 0 } }) }),
  spawnLongRunning: () => ({}),
  spawnExit: (code: number) => ({ metadata: fakeScriptMetadata({ exit: { exitCode: code } }) }),
}

describe('describePtyProviderConformance outside a vitest run', () => {
  it('throws a TestingPeerUnavailableError naming vitest and the checks that need no vitest (before: vitest\'s bare TypeError)', () => {
    let failure: unknown
    try {
      describePtyProviderConformance('fake', () => createFakePtyProvider(), drivers)
    } catch (error) {
      failure = error
    }
    expect(isTestingPeerUnavailableError(failure)).toBe(true)
    expect(failure).toMatchObject({ code: 'testing_peer_unavailable', peer: 'vitest', cause: { message: outsideARun.message } })
    const { message } = failure as Error
    expect(message).toMatch(
      /^describePtyProviderConformance\(\) needs the optional peer dependency `vitest`, which is installed but could not register a suite \(TypeError: Cannot read properties of undefined \(reading 'config'\)\): call describePtyProviderConformance from a test file that vitest runs\. /,
    )
    expect(message).toContain('ptyProviderConformanceChecks(options) and runPtyProviderConformanceCheck(check, makeProvider, options), which need no vitest')
    // Installing it would not help: it is installed.
    expect(message).not.toContain('npm i')
  })
})
