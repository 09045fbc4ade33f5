// Compiled by `scripts/check-consumer-types.mjs` in a consumer project where NEITHER vitest NOR
// fast-check is installed (a Jest or `node:test` suite): ptykit/testing/fake's declarations must
// resolve whole there, strict and without skipLibCheck. (ptykit/testing's do not: they name the
// types of fast-check and vitest, its optional peers.) The `@ts-expect-error` lines fail if a type
// silently became `any`.
import { STOP_UNCONFIRMED_AFTER_MS, createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import type { TerminalExitCause } from 'ptykit/exit-cause'
import {
  FAKE_SCRIPT_METADATA_KEY,
  FakePtyAbsentError,
  FakePtyIdInUseError,
  FakePtyLiveOtherIncarnationError,
  FakePtyProviderDetachedError,
  FakePtyProviderDisposedError,
  createFakePtyProvider,
  createManualClock,
  fakeScriptMetadata,
  isFakePtyAbsentError,
  type FakeExit,
  type FakePtyInspection,
  type FakePtyProvider,
  type FakeSpawnScript,
  type ManualClock,
} from 'ptykit/testing/fake'

export async function fakeWithoutPeers(): Promise<TerminalExitCause[]> {
  const clock: ManualClock = createManualClock({ startAt: 0 })
  const provider: FakePtyProvider = createFakePtyProvider({ idPrefix: 'jest' })
  const controller = createPtyController({ provider, clock })
  const causes: TerminalExitCause[] = []
  controller.on('exit', (exit: PtyControllerExitEvent) => causes.push(exit.cause))
  const exit: FakeExit = { exitCode: 0, signal: 9 }
  const script: FakeSpawnScript = { output: ['working'], exit }
  provider.scriptNextSpawn(script)
  const { id } = await controller.spawn({ file: 'agent', metadata: fakeScriptMetadata({ shutdown: 'never_confirm' }) })
  await provider.settle()
  clock.advance(STOP_UNCONFIRMED_AFTER_MS)
  const inspected: FakePtyInspection | undefined = provider.getPty(id)
  const metadataKey: string = FAKE_SCRIPT_METADATA_KEY
  // @ts-expect-error `hang` is a boolean
  provider.scriptNextSpawn({ hang: 'yes' })
  // @ts-expect-error `advance` takes milliseconds
  clock.advance('5s')
  const failure: unknown = await provider.spawn({ attachOnly: true, sessionId: 'gone' }).catch((error: unknown) => error)
  if (isFakePtyAbsentError(failure)) {
    const code: 'pty_absent' = failure.code
    void code
  }
  const errors = [FakePtyAbsentError, FakePtyIdInUseError, FakePtyLiveOtherIncarnationError, FakePtyProviderDetachedError, FakePtyProviderDisposedError]
  void [inspected, metadataKey, errors]
  await controller.dispose()
  return causes
}
