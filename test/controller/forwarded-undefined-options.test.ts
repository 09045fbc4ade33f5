// A host compiled with `exactOptionalPropertyTypes` forwards the optional values it holds as
// `T | undefined` (`spawn({ cwd: maybeCwd })`): the public input types say `| undefined` (helper-173;
// scripts/consumer-types/forwarded-undefined.ts proves the types), and here the runtime reads an
// undefined-valued option as absent — the default applies, nothing is refused.
import { describe, expect, it } from 'vitest'
import { createListenerSet } from '../../src/contracts/index.js'
import { createPtyController } from '../../src/controller/index.js'
import { createNodePtyProvider } from '../../src/node-pty/index.js'
import { createPtyHostProvider } from '../../src/pty-host/index.js'
import { createClaimedOwnerRegistry } from '../../src/spawn/index.js'
import { createSshProvider } from '../../src/ssh/index.js'
import { createFakePtyProvider, createManualClock, ptyProviderConformanceChecks } from '../../src/testing/index.js'

/** Every key of `keys` present, valued `undefined`. */
const absent = <K extends string>(...keys: K[]): Record<K, undefined> => Object.fromEntries(keys.map((key) => [key, undefined])) as Record<K, undefined>

describe('undefined-valued options are absent', () => {
  it('the controller: factory, spawn, per-call options and dispose take their defaults', async () => {
    const provider = createFakePtyProvider(absent('name', 'authoritativeListings', 'hostReportsChildExitStatus', 'idPrefix', 'hostId', 'now', 'defaultScript', 'scheduling', 'foregroundProcessEvidence'))
    const controller = createPtyController({
      provider,
      ...absent('providers', 'store', 'runtime', 'claims', 'clock', 'dataBatchMs'),
      flowControl: absent('mode', 'enabled', 'highWatermarkChars', 'lowWatermarkChars', 'pauseReassertIntervalMs', 'pauseMaxHoldMs'),
      stop: absent('forceAfterMs', 'unconfirmedAfterMs', 'defaultDeadlineMs'),
    })
    const launch = absent('file', 'args', 'command', 'cols', 'rows', 'cwd', 'env', 'envToDelete')
    const spawnOnly = absent('hostId', 'scopeId', 'slot', 'slotCreateClaim', 'claim', 'sessionId', 'isNewSession', 'preAllocatedHandle', 'signal', 'onPtySpawnCommitted', 'metadata')
    const terminal = await controller.spawnTerminal({ ...launch, ...spawnOnly })
    expect([terminal.cols, terminal.rows, terminal.hostId]).toEqual([80, 24, 'local'])
    await expect(controller.attach(terminal.id, absent('hostId', 'signal'))).resolves.toBe(true)
    expect(controller.write(terminal.id, 'ls\r', 'driving', absent('expectedIncarnationId'))).toBe(true)
    const budget = absent('deadlineMs', 'timeoutMs')
    const listing = { ...budget, ...absent('signal', 'includeForegroundProcessEvidence') }
    expect((await controller.listProcesses(undefined, listing)).map((row) => row.id)).toEqual([terminal.id])
    expect((await controller.listProcessesWithHostScope(listing)).processes.map((row) => row.id)).toEqual([terminal.id])
    await controller.getCwd(terminal.id, absent('of'))
    await expect(controller.inspectProcess(terminal.id, absent('expectedIncarnationId', 'scanChildProcesses'))).resolves.toBeDefined()
    await expect(controller.serializeBuffer(terminal.id, absent('scrollbackRows'))).resolves.toMatchObject({ cols: 80, rows: 24 })
    const output = terminal.output(absent('signal', 'maxQueuedChars'))
    await output.return?.()
    const second = await controller.spawn({})
    await expect(controller.stopAndWait(second.id, { ...budget, ...absent('keepHistory', 'signal') })).resolves.toBe(true)
    // `stopPtys: undefined` is the default (`true`): the live PTY is stopped.
    await controller.dispose(absent('stopPtys'))
    expect(provider.livePtyIds()).toEqual([])
  })

  it('the provider contract: shutdown, listing and probe options', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({
      ...absent('file', 'args', 'command', 'cols', 'rows', 'cwd', 'env', 'envToDelete'),
      ...absent('sessionId', 'isNewSession', 'attachOnly', 'expectedIncarnationId', 'scopeId', 'slotKey', 'claimKey', 'metadata', 'onPtySpawnCommitted'),
    })
    const budget = absent('deadlineMs', 'timeoutMs')
    expect((await provider.listProcesses({ ...budget, ...absent('membershipOnly') })).map((row) => row.id)).toEqual([id])
    await expect(provider.probeLiveness(id, absent('incarnationId'))).resolves.toBe(true)
    await expect(provider.getBufferSnapshot(id, absent('scrollbackRows'))).resolves.toBeDefined()
    await provider.shutdown(id, { ...budget, ...absent('immediate', 'expectedIncarnationId', 'keepHistory') })
    expect(provider.livePtyIds()).toEqual([])
  })

  it('the factories accept every optional option undefined', () => {
    const grace = absent('hangupGraceMs', 'terminateGraceMs', 'shutdownDeadlineMs', 'maxPendingInputBytes')
    expect(() =>
      createNodePtyProvider({
        ...grace,
        ...absent('name', 'hostId', 'hostReportsChildExitStatus', 'terminalName', 'defaultShell', 'defaultCwd', 'drainOutputAtExit', 'output'),
        ...absent('sweepSession', 'killOnProcessExit', 'loadNodePty', 'platform'),
      }).dispose(),
    ).not.toThrow()
    expect(() =>
      createSshProvider({
        ...grace,
        host: 'build-box',
        username: 'me',
        knownHostsPath: '/known_hosts',
        privateKey: 'key',
        ...absent('port', 'passphrase', 'agent', 'hostVerifier', 'hostKeyPolicy', 'name', 'hostId', 'terminalName', 'connectTimeoutMs', 'handshakeTimeoutMs'),
        ...absent('keepaliveIntervalMs', 'keepaliveCountMax', 'launchTimeoutMs', 'reconnectMaxAttempts', 'loadSsh2'),
      }),
    ).not.toThrow()
    expect(() =>
      createPtyHostProvider({
        socketPath: '/tmp/ptykit-h173-never-started.sock',
        autoStart: false,
        ...absent('name', 'hostId', 'hostCommand', 'idleExitMs', 'historyChars', 'scrollbackRows', 'exitedHistoryBytes', 'exitedSessionMemory', 'connectTimeoutMs'),
        ...absent('requestTimeoutMs', 'reconnectAttempts', 'spawnEnvironment'),
      }),
    ).not.toThrow()
    expect(() => createClaimedOwnerRegistry(absent('mintGeneration', 'maxEntries'))).not.toThrow()
    expect(createManualClock(absent('startAt')).now()).toBe(0)
    expect(() => createListenerSet(absent('onListenerError'))).not.toThrow()
    expect(
      ptyProviderConformanceChecks({
        spawnEcho: () => ({}),
        spawnLongRunning: () => ({}),
        spawnExit: () => ({}),
        ...absent('spawnSignaled', 'killFromOutside', 'timeoutMs', 'afterSpawn', 'drive'),
        capabilities: absent('signals', 'resizeReadback', 'authoritativeListings', 'exitsOnDispose', 'writeBytes'),
      }).length,
    ).toBeGreaterThan(0)
  })
})
