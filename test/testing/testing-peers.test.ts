// How ptykit/testing loads its optional peers (src/testing/testing-peers*.ts): a missing one is a
// TestingPeerUnavailableError naming it, the install command and ptykit/testing/fake — not Node's
// bare "Cannot find package". scripts/check-packed-consumer.mjs proves it from the packed tarball,
// ESM and CommonJS, in projects without fast-check and without vitest.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadOptionalPeer, requireOptionalPeer } from '../../src/contracts/optional-peer.js'
import { FAST_CHECK_PEER, VITEST_PEER } from '../../src/testing/testing-peer-modules.js'
import {
  TESTING_PEERS_INSTALL_COMMAND,
  TESTING_PEER_RANGES,
  TestingPeerUnavailableError,
  isTestingPeerUnavailableError,
} from 'ptykit/testing/fake'
import * as testing from 'ptykit/testing'

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  peerDependencies: Record<string, string>
  peerDependenciesMeta: Record<string, { optional?: boolean }>
}

/** What Node throws for an import of a package that is not installed. */
const notFound = (name: string): Error => Object.assign(new Error(`Cannot find package '${name}'`), { code: 'ERR_MODULE_NOT_FOUND' })

describe('the optional peers of ptykit/testing', () => {
  it('should name each peer at the range package.json gives it, as an optional peer', () => {
    expect(Object.keys(TESTING_PEER_RANGES).sort()).toEqual(['fast-check', 'vitest'])
    for (const [peer, range] of Object.entries(TESTING_PEER_RANGES)) {
      expect(packageJson.peerDependencies[peer], peer).toBe(range)
      expect(packageJson.peerDependenciesMeta[peer]?.optional, peer).toBe(true)
    }
    expect(TESTING_PEERS_INSTALL_COMMAND).toBe(`npm i -D "fast-check@${packageJson.peerDependencies['fast-check']}" "vitest@${packageJson.peerDependencies.vitest}"`)
  })

  it.each([
    ['import (ESM)', (loader: () => never) => loadOptionalPeer({ ...FAST_CHECK_PEER, loader: async () => loader() })],
    ['require (CJS)', (loader: () => never) => Promise.resolve().then(() => requireOptionalPeer({ ...FAST_CHECK_PEER, loader }))],
  ])('a missing fast-check (%s) is a typed error naming it, the install command and ptykit/testing/fake', async (_how, load) => {
    const cause = notFound('fast-check')
    const failure: unknown = await load(() => {
      throw cause
    }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(TestingPeerUnavailableError)
    expect(isTestingPeerUnavailableError(failure)).toBe(true)
    expect(failure).toMatchObject({ code: 'testing_peer_unavailable', peer: 'fast-check', cause })
    const { message } = failure as Error
    expect(message).toMatch(/^ptykit\/testing needs the optional peer dependency `fast-check`, which is not installed\./)
    expect(message).toContain(`\`npm i -D "fast-check@^4.0.0" "vitest@>=3.0.0"\``)
    expect(message).toContain('import `ptykit/testing/fake`: it needs neither peer')
  })

  it('a fast-check that fails for another reason, or is not fast-check, says so', async () => {
    const broken = await loadOptionalPeer({ ...FAST_CHECK_PEER, loader: () => Promise.reject(new SyntaxError('Unexpected token')) }).catch((error: unknown) => error)
    expect((broken as Error).message).toContain('`fast-check`, which could not be loaded (Unexpected token)')
    const impostor = await loadOptionalPeer({ ...FAST_CHECK_PEER, loader: async () => ({ default: {} }) }).catch((error: unknown) => error)
    expect((impostor as Error).message).toContain('`fast-check`, which loaded but has no `integer` and `oneof` functions')
  })

  it('a missing vitest fails describePtyProviderConformance(), pointing to the checks that need no vitest', async () => {
    const failure = await loadOptionalPeer({ ...VITEST_PEER, loader: () => Promise.reject(notFound('vitest')) }).catch((error: unknown) => error)
    expect(failure).toMatchObject({ code: 'testing_peer_unavailable', peer: 'vitest' })
    const { message } = failure as Error
    expect(message).toMatch(/^describePtyProviderConformance\(\) needs the optional peer dependency `vitest`, which is not installed\./)
    expect(message).toContain('ptyProviderConformanceChecks(options) and runPtyProviderConformanceCheck(check, makeProvider, options), which need no vitest')
    expect(message).toContain(TESTING_PEERS_INSTALL_COMMAND)
  })

  it('ptykit/testing exports the error class of ptykit/testing/fake (the one a suite without fast-check can import)', () => {
    expect(testing.TestingPeerUnavailableError).toBe(TestingPeerUnavailableError)
    expect(new TestingPeerUnavailableError('vitest', 'x', 'y', { installHelps: false }).message).not.toContain('npm i')
  })
})
