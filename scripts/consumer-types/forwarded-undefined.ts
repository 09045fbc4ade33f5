// Compiled by `scripts/check-consumer-types.mjs` against the packed declarations, with
// `exactOptionalPropertyTypes: true`: a host forwards optional values it holds as `T | undefined`
// (`cwd: maybeCwd`) into every optional property of every public input (options objects, factory
// options, the provider contract's inputs a host builds). The runtime reads `undefined` as absent,
// so the types must accept it (TS2379 / TS2375 otherwise). The same holds for what a provider
// author builds (the "provider author" section): a provider's events (data, bytes, output loss,
// exit), its spawn reply, its listing rows (`ProviderProcessInfo`) and snapshots
// (`ProviderBufferSnapshot`) take `undefined` for absent, which the controller and the spawn
// pipeline read as absent. What ptykit itself returns to its users (the controller's replies, rows,
// snapshots and events) keeps `?:` without `undefined`: there the key is absent, never `undefined`.
// ptykit/testing is in `forwarded-undefined-testing.ts` (Node10 cannot resolve its peers' types).
import type {
  ExecutionHostId,
  ProviderBufferSnapshot,
  ProviderProcessInfo,
  ProviderSequence,
  ProviderSpawnOptions,
  PtyBytesEvent,
  PtyDataEvent,
  PtyExitEvent,
  PtyForegroundProcessEvidence,
  PtyOutputLossEvent,
  PtySpawnResult,
  PtyClaim,
  PtyCwdOptions,
  PtyIncarnationId,
  PtyProvider,
  PtySlot,
} from 'ptykit/contracts'
import { createListenerSet } from 'ptykit/contracts'
import type { TerminalExitCause } from 'ptykit/exit-cause'
import { createPtyController, type PtyController, type PtyFlowControlOptions, type PtyTerminal } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { createPtyHostProvider, launchPtyHost, startPtyHost, stopPtyHost, type PtyHostProvider } from 'ptykit/pty-host'
import {
  createClaimedOwnerRegistry,
  createInMemoryPtyRuntime,
  createInMemorySlotStore,
  createRuntimePtySpawnState,
  type ClaimedOwnerRegistry,
  type EnsureClaimArgs,
} from 'ptykit/spawn'
import { createSshProvider } from 'ptykit/ssh'

/** Each value a host holds as "maybe": `undefined` at run time, `T | undefined` to the compiler. */
declare function maybe<T>(): T | undefined

export async function forwardUndefined(
  controller: PtyController,
  terminal: PtyTerminal,
  provider: PtyProvider,
  hosted: PtyHostProvider,
  registry: ClaimedOwnerRegistry,
  ptyId: string,
): Promise<void> {
  const slot: PtySlot = { key: 'editor-1', scopeId: maybe<string>() }
  const claim: PtyClaim = { key: 'agent-1', scopeId: maybe<string>() }
  const launch = {
    file: maybe<string>(),
    args: maybe<readonly string[]>(),
    command: maybe<string>(),
    cols: maybe<number>(),
    rows: maybe<number>(),
    cwd: maybe<string>(),
    env: maybe<Readonly<Record<string, string>>>(),
    envToDelete: maybe<readonly string[]>(),
  }
  const spawned = await controller.spawn({
    ...launch,
    hostId: maybe<ExecutionHostId>(),
    scopeId: maybe<string>(),
    slot: maybe<PtySlot>(),
    slotCreateClaim: maybe<() => void>(),
    claim: maybe<PtyClaim>(),
    sessionId: maybe<string>(),
    isNewSession: maybe<boolean>(),
    preAllocatedHandle: maybe<string>(),
    signal: maybe<AbortSignal>(),
    onPtySpawnCommitted: maybe<() => void>(),
    metadata: maybe<Readonly<Record<string, unknown>>>(),
  })
  await controller.spawnTerminal({ cwd: maybe<string>(), slot, claim })
  await controller.attach(spawned.id, { hostId: maybe<ExecutionHostId>(), signal: maybe<AbortSignal>() })
  controller.write(ptyId, 'ls\r', 'driving', { expectedIncarnationId: maybe<PtyIncarnationId>() })
  const budget = { deadlineMs: maybe<number>(), timeoutMs: maybe<number>() }
  await controller.stopAndWait(ptyId, { ...budget, keepHistory: maybe<boolean>(), signal: maybe<AbortSignal>() })
  const listing = { ...budget, signal: maybe<AbortSignal>(), includeForegroundProcessEvidence: maybe<boolean>() }
  await controller.listProcesses(maybe<ExecutionHostId>(), listing)
  await controller.listProcessesWithHostScope(listing)
  const cwdOptions: PtyCwdOptions = { of: maybe<'foreground' | 'leader'>() }
  await controller.getCwd(ptyId, cwdOptions)
  await controller.inspectProcess(ptyId, { expectedIncarnationId: maybe<PtyIncarnationId>(), scanChildProcesses: maybe<boolean>() })
  await controller.serializeBuffer(ptyId, { scrollbackRows: maybe<number>() })
  await controller.serializeProviderBuffer(ptyId, { scrollbackRows: maybe<number>() })
  await controller.adoptSlot({ slot, slotCreateClaim: maybe<() => void>() })
  controller.registerRendererSerializer(ptyId, ({ scrollbackRows }) => (scrollbackRows === undefined ? null : null))
  await terminal.stop({ ...budget, keepHistory: maybe<boolean>(), signal: maybe<AbortSignal>() })
  const output = terminal.output({ signal: maybe<AbortSignal>(), maxQueuedChars: maybe<number>() })
  await output.return?.()
  await controller.dispose({ stopPtys: maybe<boolean>() })

  // The provider contract's inputs, as a host calling a provider (or wrapping one) builds them.
  const providerSpawn: ProviderSpawnOptions = {
    ...launch,
    sessionId: maybe<string>(),
    isNewSession: maybe<boolean>(),
    attachOnly: maybe<boolean>(),
    expectedIncarnationId: maybe<PtyIncarnationId>(),
    scopeId: maybe<string>(),
    slotKey: maybe<string>(),
    claimKey: maybe<string>(),
    metadata: maybe<Readonly<Record<string, unknown>>>(),
    onPtySpawnCommitted: maybe<() => void>(),
  }
  await provider.spawn(providerSpawn)
  await provider.shutdown(ptyId, { ...budget, immediate: maybe<boolean>(), expectedIncarnationId: maybe<PtyIncarnationId>(), keepHistory: maybe<boolean>() })
  await provider.listProcesses({ ...budget, membershipOnly: maybe<boolean>() })
  await provider.probeLiveness?.(ptyId, { incarnationId: maybe<PtyIncarnationId>() })
  await provider.getCwd?.(ptyId, cwdOptions)
  await provider.getBufferSnapshot?.(ptyId, { scrollbackRows: maybe<number>() })
  await hosted.getBufferSnapshot(ptyId, { scrollbackRows: maybe<number>() })
  await hosted.attach(ptyId, { replayFrom: maybe<number | 'retained' | 'live'>(), expectedIncarnationId: maybe<PtyIncarnationId>() })
  const wrapped: PtyProvider = { ...provider, authoritativeListings: maybe<boolean>() }
  const ensure: EnsureClaimArgs = {
    claim,
    hostId: 'local',
    spawn: async () => ({ ptyId }),
    isLive: async () => true,
    onJoin: maybe<() => void>(),
    runSettled: maybe<Promise<void>>(),
  }
  await registry.ensure(ensure)

  // Factory options.
  const flowControl: PtyFlowControlOptions = {
    mode: maybe<PtyFlowControlOptions['mode']>(),
    enabled: maybe<boolean>(),
    highWatermarkChars: maybe<number>(),
    lowWatermarkChars: maybe<number>(),
    pauseReassertIntervalMs: maybe<number>(),
    pauseMaxHoldMs: maybe<number>(),
  }
  createPtyController({
    provider: wrapped,
    providers: maybe<Record<string, PtyProvider>>(),
    store: maybe<ReturnType<typeof createInMemorySlotStore>>(),
    runtime: maybe<ReturnType<typeof createInMemoryPtyRuntime>>(),
    claims: maybe<ClaimedOwnerRegistry>(),
    clock: maybe<Parameters<typeof createPtyController>[0]['clock']>(),
    flowControl,
    stop: { forceAfterMs: maybe<number>(), unconfirmedAfterMs: maybe<number>(), defaultDeadlineMs: maybe<number>() },
    dataBatchMs: maybe<number>(),
  })
  const grace = { hangupGraceMs: maybe<number>(), terminateGraceMs: maybe<number>(), shutdownDeadlineMs: maybe<number>(), maxPendingInputBytes: maybe<number>() }
  const nodePty = {
    ...grace,
    name: maybe<string>(),
    hostId: maybe<ExecutionHostId>(),
    hostReportsChildExitStatus: maybe<boolean>(),
    terminalName: maybe<string>(),
    defaultShell: maybe<string>(),
    defaultCwd: maybe<string>(),
    drainOutputAtExit: maybe<boolean>(),
    output: maybe<'string' | 'bytes'>(),
    sweepSession: maybe<boolean>(),
    killOnProcessExit: maybe<boolean>(),
    loadNodePty: maybe<() => Promise<unknown>>(),
    platform: maybe<NodeJS.Platform>(),
  }
  createNodePtyProvider(nodePty)
  createSshProvider({
    ...grace,
    host: 'build-box',
    username: 'me',
    port: maybe<number>(),
    privateKey: maybe<string>(),
    passphrase: maybe<string>(),
    agent: maybe<string>(),
    knownHostsPath: '/known_hosts',
    hostVerifier: maybe<Parameters<typeof createSshProvider>[0]['hostVerifier']>(),
    hostKeyPolicy: maybe<Parameters<typeof createSshProvider>[0]['hostKeyPolicy']>(),
    name: maybe<string>(),
    hostId: maybe<ExecutionHostId>(),
    terminalName: maybe<string>(),
    connectTimeoutMs: maybe<number>(),
    handshakeTimeoutMs: maybe<number>(),
    keepaliveIntervalMs: maybe<number>(),
    keepaliveCountMax: maybe<number>(),
    launchTimeoutMs: maybe<number>(),
    reconnectMaxAttempts: maybe<number>(),
    loadSsh2: maybe<() => Promise<unknown>>(),
  })
  const screen = { historyChars: maybe<number>(), scrollbackRows: maybe<number>(), exitedHistoryBytes: maybe<number>(), exitedSessionMemory: maybe<number>(), idleExitMs: maybe<number>() }
  createPtyHostProvider({
    ...screen,
    name: maybe<string>(),
    hostId: maybe<ExecutionHostId>(),
    socketPath: maybe<string>(),
    autoStart: maybe<boolean>(),
    hostCommand: maybe<Parameters<typeof launchPtyHost>[0]>(),
    connectTimeoutMs: maybe<number>(),
    requestTimeoutMs: maybe<number>(),
    reconnectAttempts: maybe<number>(),
    spawnEnvironment: maybe<'app' | 'host'>(),
  })
  await startPtyHost({
    ...screen,
    socketPath: maybe<string>(),
    firstClientGraceMs: maybe<number>(),
    screenCharsPerSecond: maybe<number>(),
    maxFrameBytes: maybe<number>(),
    ackMaxHoldMs: maybe<number>(),
    nodePty,
    onClosed: maybe<() => void>(),
  })
  launchPtyHost({ file: process.execPath, args: [] }, { ...screen, socketPath: '/tmp/ptykit.sock' })
  await stopPtyHost({ socketPath: maybe<string>(), timeoutMs: maybe<number>() })
  createClaimedOwnerRegistry({ mintGeneration: maybe<() => string>(), maxEntries: maybe<number>() })
  createListenerSet<string>({ onListenerError: maybe<(error: unknown) => void>() })
  createRuntimePtySpawnState(
    {
      resolveProvider: () => provider,
      listHostIds: maybe<() => Iterable<ExecutionHostId>>(),
      runtime: maybe<ReturnType<typeof createInMemoryPtyRuntime>>(), store: maybe<ReturnType<typeof createInMemorySlotStore>>(), claims: maybe<ClaimedOwnerRegistry>() },
    { cwd: maybe<string>() },
  )
}

/**
 * The provider author: a provider's events and replies, each optional field built from a "maybe"
 * value (an incarnation the host's transport may not have carried, a cause it may not know).
 */
export function buildProviderSide(base: PtyProvider, id: string): PtyProvider {
  const incarnationId = maybe<PtyIncarnationId>()
  const data: PtyDataEvent = { id, data: 'ls\r\n', incarnationId }
  const bytes: PtyBytesEvent = { id, bytes: new Uint8Array([0x6c]), incarnationId }
  const loss: PtyOutputLossEvent = { id, fromSeq: 0, toSeq: 1, incarnationId }
  const exit: PtyExitEvent = {
    id,
    code: 0,
    incarnationId,
    cause: maybe<TerminalExitCause>(),
    observed: maybe<'provider' | 'synthetic'>(),
    diedBeforeStopRequest: maybe<boolean>(),
    stopRequestedBeforeDeath: maybe<boolean>(),
  }
  const reply: PtySpawnResult = {
    id,
    pid: maybe<number | null>(),
    incarnationId,
    isReattach: maybe<boolean>(),
    exitedBeforeSpawnReply: maybe<boolean>(),
    providerSequence: maybe<ProviderSequence>(),
    hostReportsChildExitStatus: maybe<boolean>(),
    cols: maybe<number>(),
    rows: maybe<number>(),
  }
  const row: ProviderProcessInfo = {
    id,
    hostId: 'local',
    cwd: null,
    title: 'sh',
    incarnationId,
    pid: maybe<number | null>(),
    scopeId: maybe<string>(),
    slotKey: maybe<string>(),
    claimKey: maybe<string>(),
    foregroundProcessEvidence: maybe<PtyForegroundProcessEvidence | null>(),
  }
  const snapshot: ProviderBufferSnapshot = {
    data: '',
    cols: 80,
    rows: 24,
    seq: 0,
    source: 'mine',
    incarnationId,
    kittyKeyboardFlags: maybe<number>(),
    lastTitle: maybe<string>(),
  }
  const dataListeners = createListenerSet<PtyDataEvent>()
  const bytesListeners = createListenerSet<PtyBytesEvent>()
  const lossListeners = createListenerSet<PtyOutputLossEvent>()
  const exitListeners = createListenerSet<PtyExitEvent>()
  dataListeners.fire(data)
  bytesListeners.fire(bytes)
  lossListeners.fire(loss)
  exitListeners.fire(exit)
  return {
    ...base,
    spawn: async () => reply,
    listProcesses: async () => [row],
    getBufferSnapshot: async () => snapshot,
    onData: (listener) => dataListeners.add(listener),
    onBytes: (listener) => bytesListeners.add(listener),
    onOutputLoss: (listener) => lossListeners.add(listener),
    onExit: (listener) => exitListeners.add(listener),
  }
}
