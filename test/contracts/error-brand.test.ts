import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { defineErrorBrand } from '../../src/contracts/error-brand.js'
import { NodePtyOptionError, NodePtyProviderError, isNodePtyOptionError, isNodePtyProviderError } from 'ptykit/node-pty'
import { PtyHostError, isPtyHostError } from 'ptykit/pty-host'
import { PtySpawnError, isPtySpawnError } from 'ptykit/spawn'
import { SshOptionError, SshProviderError, isSshOptionError, isSshProviderError } from 'ptykit/ssh'
import {
  FakePtyAbsentError,
  FakePtyLiveOtherIncarnationError,
  isFakePtyAbsentError,
  isFakePtyLiveOtherIncarnationError,
} from 'ptykit/testing'
import { PtyExitedDuringStartError } from '../../src/spawn/pty-exited-during-start-error.js'
import { PtyHostFrameError } from '../../src/pty-host/pty-host-frame-error.js'

/** Every branded error of the SDK outside the controller: a sample instance, its class name, its guard. */
const families: Array<{ name: string; make: () => Error; is: (value: unknown) => boolean }> = [
  { name: 'NodePtyOptionError', make: () => new NodePtyOptionError('cols', 'a positive integer', 0), is: isNodePtyOptionError },
  { name: 'NodePtyProviderError', make: () => new NodePtyProviderError('spawn_failed', 'no'), is: isNodePtyProviderError },
  { name: 'PtyHostError', make: () => new PtyHostError('host_unavailable', 'no'), is: isPtyHostError },
  { name: 'PtySpawnError', make: () => new PtySpawnError('scope_lease_refused', 'no'), is: isPtySpawnError },
  { name: 'SshOptionError', make: () => new SshOptionError('port', 'a port', -1), is: isSshOptionError },
  { name: 'SshProviderError', make: () => new SshProviderError('auth_failed', 'no'), is: isSshProviderError },
  { name: 'FakePtyAbsentError', make: () => new FakePtyAbsentError('a'), is: isFakePtyAbsentError },
  {
    name: 'FakePtyLiveOtherIncarnationError',
    make: () => new FakePtyLiveOtherIncarnationError('a', { expectedIncarnationId: 'x', liveIncarnationId: 'y' }),
    is: isFakePtyLiveOtherIncarnationError,
  },
]

describe('one error family: defineErrorBrand', () => {
  it('each guard accepts its own class only, and each class keeps its public name (not enumerable)', () => {
    for (const family of families) {
      const error = family.make()
      expect(error.name).toBe(family.name)
      expect(Object.keys(error)).not.toContain('name')
      expect(error).toBeInstanceOf(Error)
      for (const other of families) expect(other.is(error)).toBe(other === family)
    }
  })

  it('the guards refuse every value that is not a branded error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string().map((message) => new Error(message))), (value) => {
        for (const family of families) expect(family.is(value)).toBe(false)
      }),
    )
  })

  it('recognizes an error of another copy of the package (same brand name, another class)', () => {
    class CopyA extends Error {
      constructor() {
        super('a')
        brandA.mark(this)
      }
    }
    const brandA = defineErrorBrand(CopyA, 'TestDuplicateCopyError')
    class CopyB extends Error {}
    const brandB = defineErrorBrand(CopyB, 'TestDuplicateCopyError')
    const fromA = new CopyA()
    expect(fromA).not.toBeInstanceOf(CopyB)
    expect(brandB.is(fromA)).toBe(true)
    expect(fromA.name).toBe('TestDuplicateCopyError')
  })

  it('the unguarded internal errors carry their names too', () => {
    expect(new PtyExitedDuringStartError('p', null).name).toBe('PtyExitedDuringStartError')
    expect(new PtyHostFrameError('oversized', 'too big').name).toBe('PtyHostFrameError')
  })
})
