// The ptykit/testing half of `forwarded-undefined.ts` (which says why): compiled with
// `exactOptionalPropertyTypes: true` wherever the testing entry's peers (vitest, fast-check) resolve.
import type { ExecutionHostId, ProviderSequence, PtyIncarnationId, WriteSettlement } from 'ptykit/contracts'
import {
  arbitraryWireExit,
  createFakePtyProvider,
  createManualClock,
  fakeScriptMetadata,
  ptyProviderConformanceChecks,
  type FakeExit,
  type FakePtyProviderOptions,
  type FakeSpawnScript,
} from 'ptykit/testing'

declare function maybe<T>(): T | undefined

export function forwardUndefinedToTesting(ptyId: string): void {
  const exit: FakeExit = {
    exitCode: 0,
    signal: maybe<number | null>(),
    hostReportsChildExitStatus: maybe<boolean>(),
    withoutCause: maybe<boolean>(),
    observed: maybe<'provider' | 'synthetic'>(),
    stopRequestedBeforeDeath: maybe<boolean>(),
    diedBeforeStopRequest: maybe<boolean>(),
    incarnationId: maybe<PtyIncarnationId>(),
  }
  const script: FakeSpawnScript = {
    id: maybe<string>(),
    pid: maybe<number>(),
    hang: maybe<boolean>(),
    exitBeforeReply: maybe<FakeExit>(),
    output: maybe<readonly string[]>(),
    exit,
    liveness: maybe<boolean | null>(),
    writeSettlement: maybe<WriteSettlement>(),
    shutdown: maybe<FakeSpawnScript['shutdown']>(),
    providerSequence: maybe<ProviderSequence>(),
    hostReportsChildExitStatus: maybe<boolean>(),
    cols: maybe<number>(),
    rows: maybe<number>(),
    commitOnSpawn: maybe<boolean>(),
  }
  const fake = createFakePtyProvider({
    name: maybe<string>(),
    authoritativeListings: maybe<boolean>(),
    hostReportsChildExitStatus: maybe<boolean>(),
    idPrefix: maybe<string>(),
    hostId: maybe<ExecutionHostId>(),
    now: maybe<() => number>(),
    defaultScript: script,
    scheduling: maybe<FakePtyProviderOptions['scheduling']>(),
    foregroundProcessEvidence: maybe<boolean>(),
  })
  fake.scriptNextSpawn(script)
  fake.setProcessInfo(ptyId, {
    foregroundProcess: maybe<string | null>(),
    hasChildProcesses: maybe<boolean | null>(),
    foregroundEvidence: maybe<Parameters<typeof fake.setProcessInfo>[1]['foregroundEvidence']>(),
  })
  createManualClock({ startAt: maybe<number>() })
  arbitraryWireExit({ malformedCodes: maybe<boolean>(), garbageCauses: maybe<boolean>() })
  ptyProviderConformanceChecks({
    spawnEcho: (text) => ({ metadata: fakeScriptMetadata({ output: [text], exit: { exitCode: 0 } }) }),
    spawnLongRunning: () => ({}),
    spawnExit: (code) => ({ metadata: fakeScriptMetadata({ exit: { exitCode: code } }) }),
    spawnSignaled: maybe<(signal: number) => { cwd?: string | undefined }>(),
    killFromOutside: maybe<() => void>(),
    capabilities: {
      signals: maybe<boolean>(),
      resizeReadback: maybe<boolean>(),
      authoritativeListings: maybe<boolean>(),
      exitsOnDispose: maybe<boolean>(),
      writeBytes: maybe<boolean>(),
    },
    timeoutMs: maybe<number>(),
    afterSpawn: maybe<() => void>(),
    drive: maybe<() => void>(),
  })
}
