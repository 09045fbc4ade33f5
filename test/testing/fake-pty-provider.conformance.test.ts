import { afterAll, beforeAll, describe, vi } from 'vitest'
import type { PtyProvider, PtySpawnResult } from 'ptykit/contracts'
import { createFakePtyProvider, describePtyProviderConformance, fakeScriptMetadata, type FakePtyProvider } from 'ptykit/testing'

// The fake is scripted through spawn metadata, so the generic suite needs no handle on it.
const fakeDrivers = {
  spawnEcho: (text: string) => ({ metadata: fakeScriptMetadata({ output: [text], exit: { exitCode: 0 } }) }),
  spawnLongRunning: () => ({}),
  spawnExit: (code: number) => ({ metadata: fakeScriptMetadata({ exit: { exitCode: code } }) }),
  // As node-pty reports a signalled death: code 0 with the signal.
  spawnSignaled: (signal: number) => ({ metadata: fakeScriptMetadata({ exit: { exitCode: 0, signal } }) }),
  killFromOutside: (result: PtySpawnResult, provider: PtyProvider) => (provider as FakePtyProvider).emitExit(result.id, { exitCode: 0, signal: 9 }),
  stopReadingInput: (result: PtySpawnResult, provider: PtyProvider) => (provider as FakePtyProvider).setInputHeld(result.id, true),
}

describePtyProviderConformance('fake (default macrotask delivery)', () => createFakePtyProvider(), { ...fakeDrivers, capabilities: { detach: true, refusesMisspeltSpawnOptions: true } })

describePtyProviderConformance('fake (microtask delivery)', () => createFakePtyProvider({ scheduling: 'microtask' }), { ...fakeDrivers, capabilities: { detach: true, refusesMisspeltSpawnOptions: true } })

// Manual delivery only progresses when driven: proves the suite's `drive` hook is honoured.
describePtyProviderConformance(
  'fake (manual delivery, non-authoritative listings)',
  () => createFakePtyProvider({ scheduling: 'manual', authoritativeListings: false }),
  {
    ...fakeDrivers,
    capabilities: { detach: true },
    drive: async (provider) => {
      if ('settle' in provider && typeof provider.settle === 'function') await provider.settle()
    },
  },
)

// A wrapper host that cannot report its child's status: causes are host_status_unavailable.
describePtyProviderConformance(
  'fake (wrapper host)',
  () => createFakePtyProvider({ hostReportsChildExitStatus: false }),
  fakeDrivers,
)

// A provider author's test that freezes `Date` (mocking only Date, for stable timestamps) still
// runs the suite to its end: its waits count on the timers' clock. (They counted on `Date.now()`:
// a frozen one never passed a deadline, and the suite hung.)
describe('with Date frozen', () => {
  beforeAll(() => {
    vi.spyOn(Date, 'now').mockReturnValue(Date.now())
  })
  afterAll(() => {
    vi.restoreAllMocks()
  })
  describePtyProviderConformance('fake (Date frozen)', () => createFakePtyProvider(), fakeDrivers)
})
