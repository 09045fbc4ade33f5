import { describe, it, expect } from 'vitest'
import type { PtyDataEvent, PtyExitEvent, PtyProvider, WriteSettlement } from 'ptykit/contracts'
import {
  createFakePtyProvider,
  fakeScriptMetadata,
  ptyProviderConformanceChecks,
  runPtyProviderConformanceCheck,
  type FakePtyProvider,
  type PtyProviderConformanceOptions,
} from 'ptykit/testing'

const drivers: PtyProviderConformanceOptions = {
  spawnEcho: (text) => ({ metadata: fakeScriptMetadata({ output: [text], exit: { exitCode: 0 } }) }),
  spawnLongRunning: () => ({}),
  spawnExit: (code) => ({ metadata: fakeScriptMetadata({ exit: { exitCode: code } }) }),
  spawnSignaled: (signal) => ({ metadata: fakeScriptMetadata({ exit: { exitCode: 0, signal } }) }),
  killFromOutside: (result, provider) => (provider as FakePtyProvider).emitExit(result.id, { exitCode: 0, signal: 9 }),
  stopReadingInput: (result, provider) => (provider as FakePtyProvider).setInputHeld(result.id, true),
  // Short: a broken provider that never sends an event should fail fast, not slow the suite.
  timeoutMs: 100,
}

const checks = ptyProviderConformanceChecks(drivers)

function checkNamed(fragment: string): (typeof checks)[number] {
  const check = checks.find((candidate) => candidate.name.includes(fragment))
  if (check === undefined) throw new Error(`No conformance check mentions ${JSON.stringify(fragment)}`)
  return check
}

// A provider that behaves like the fake except for the overridden members.
function broken(override: (fake: FakePtyProvider) => Partial<PtyProvider>): () => PtyProvider {
  return () => {
    const fake = createFakePtyProvider()
    return { ...fake, ...override(fake) }
  }
}

// Output that arrives after the exit: data listeners hear it one macrotask late.
const lateData = (fake: FakePtyProvider): Partial<PtyProvider> => ({
  onData: (listener: (event: PtyDataEvent) => void) => fake.onData((event) => setTimeout(() => listener(event), 0)),
})

const rewriteExits =
  (rewrite: (event: PtyExitEvent) => PtyExitEvent) =>
  (fake: FakePtyProvider): Partial<PtyProvider> => ({
    onExit: (listener: (event: PtyExitEvent) => void) => fake.onExit((event) => listener(rewrite(event))),
  })

/** A provider whose writes the fake held settle as `rewrite` makes of the fake's settlement. */
const settleHeldWrites =
  (rewrite: (settlement: WriteSettlement) => unknown) =>
  (fake: FakePtyProvider): Partial<PtyProvider> => ({
    write: (id: string, data: string) => {
      const answer = fake.write(id, data)
      return answer instanceof Promise ? (answer.then(rewrite) as Promise<WriteSettlement>) : answer
    },
  })

const cases: Array<[string, string, () => PtyProvider]> = [
  ['output before its single exit', 'delivers output after the exit', broken(lateData)],
  ['output before its single exit', 'reports a foreign incarnation on exit', broken(rewriteExits((e) => ({ ...e, incarnationId: 'other' as never })))],
  ['output before its single exit', 'reports two exits', broken((fake) => ({
    onExit: (listener: (event: PtyExitEvent) => void) => fake.onExit((event) => { listener(event); listener(event) }),
  }))],
  ['reports the exit code', 'rewrites every code to 0', broken(rewriteExits((e) => ({ ...e, code: 0 })))],
  ['reports the exit code', 'sends a cause that contradicts the code', broken(rewriteExits((e) => ({ ...e, cause: { kind: 'exited', exitCode: 99 } })))],
  // Found by the cross-provider matrix (docs/exit-causes.md, "Across providers").
  ['reports the exit code', 'reads a code above 128 as a signal (exit 130 as SIGINT)', broken(rewriteExits((e) => (e.code > 128 ? { ...e, cause: { kind: 'signaled', signal: e.code - 128 } } : e)))],
  ['killed itself with a signal', 'sends a signalled death as 128 + n with no cause (read as exited(128 + n))', broken(rewriteExits(({ cause, ...e }) => (cause?.kind === 'signaled' ? { ...e, code: 128 + cause.signal } : { ...e, ...(cause ? { cause } : {}) })))],
  ['killed itself with a signal', 'reports a signalled death as an exit code', broken(rewriteExits((e) => (e.cause?.kind === 'signaled' ? { ...e, code: 128 + e.cause.signal, cause: { kind: 'exited', exitCode: 128 + e.cause.signal } } : e)))],
  ['SIGKILLed from outside', 'leaves diedBeforeStopRequest off a death its stop did not cause', broken(rewriteExits(({ diedBeforeStopRequest: _dropped, ...e }) => e))],
  ['SIGKILLed from outside', 'attests its stop came before a death it did not cause', broken(rewriteExits(({ diedBeforeStopRequest: _dropped, ...e }) => ({ ...e, stopRequestedBeforeDeath: true })))],
  ['plain serializable data', 'puts a live object into events', broken(rewriteExits((e) => ({ ...e, when: new Date(0) }) as PtyExitEvent))],
  ['once it unsubscribed', 'ignores unsubscribe', broken((fake) => ({
    onData: (listener: (event: PtyDataEvent) => void) => { fake.onData(listener); return () => undefined },
  }))],
  ['graceful stop', 'never confirms a stop', broken((fake) => ({
    shutdown: async (id: string) => { fake.setShutdownBehaviour(id, 'never_confirm'); await fake.shutdown(id) },
  }))],
  ['immediate stop', 'reports a kill as a clean exit', broken(rewriteExits((e) => ({ ...e, cause: { kind: 'exited', exitCode: 0 } })))],
  ['stop of an id it never held', 'rejects a stop of an unknown id', broken((fake) => ({
    shutdown: async (id: string, options) => {
      if (fake.getPty(id) === undefined) throw new Error(`no such PTY: ${id}`)
      await fake.shutdown(id, options)
    },
  }))],
  ['stop of an id it never held', 'stops its live PTYs on a stop of an unknown id', broken((fake) => ({
    shutdown: async (id: string, options) => {
      if (fake.getPty(id) === undefined) for (const live of fake.livePtyIds()) await fake.shutdown(live, options)
      else await fake.shutdown(id, options)
    },
  }))],
  ['write after exit', 'accepts writes after exit', broken(() => ({ write: () => ({ kind: 'accepted' }) }))],
  ['write after exit', 'wraps its refusal of a write after exit in a promise', broken((fake) => ({ write: async (id: string, data: string) => fake.write(id, data) }))],
  ['never answers `false`', 'denies a live PTY in hasPty', broken(() => ({ hasPty: () => false }))],
  ['never answers `false`', 'denies a live PTY in probeLiveness', broken(() => ({ probeLiveness: async () => false }))],
  ['never answers `false`', 'refuses writes to a live PTY', broken(() => ({ write: () => ({ kind: 'refused', reason: 'provider_refused_write' }) }))],
  ['lists every live PTY', 'lists nothing', broken(() => ({ listProcesses: async () => [] }))],
  ['lists every live PTY', 'keeps exited PTYs in an authoritative listing', broken((fake) => {
    const ever: string[] = []
    return {
      spawn: async (options) => { const result = await fake.spawn(options); ever.push(result.id); return result },
      listProcesses: async () => ever.map((id) => ({ id, hostId: 'local', cwd: null, title: 'x' })),
    }
  })],
  ['reflects a resize', 'reads back a stale size', broken(() => ({ getSize: () => ({ cols: 80, rows: 24 }) }))],
  ['reflects a resize', 'claims to resize an unknown PTY', broken((fake) => ({ resize: (id: string, cols: number, rows: number) => fake.resize(id, cols, rows) || true }))],
  // A bad size (the conformance suite did not check it before 7 Dec).
  ['not an integer from 1 to 65535', 'refuses a bad size with a bare TypeError, no code (as the fake did until 7 Dec)', broken((fake) => ({
    resize: (id: string, cols: number, rows: number) => {
      try {
        return fake.resize(id, cols, rows)
      } catch (error) {
        throw new TypeError((error as Error).message)
      }
    },
  }))],
  ['not an integer from 1 to 65535', 'answers a bad size `false`, as if the PTY were gone', broken((fake) => ({
    resize: (id: string, cols: number, rows: number) => (Number.isInteger(cols) && Number.isInteger(rows) && cols >= 1 && rows >= 1 && cols <= 65_535 && rows <= 65_535 ? fake.resize(id, cols, rows) : false),
  }))],
  ['not an integer from 1 to 65535', 'clamps and rounds a bad size instead of refusing it', broken((fake) => ({
    resize: (id: string, cols: number, rows: number) => {
      const clamp = (value: number, fallback: number) => (Number.isFinite(value) ? Math.min(65_535, Math.max(1, Math.round(value))) : fallback)
      return fake.resize(id, clamp(cols, 80), clamp(rows, 24))
    },
  }))],
  ['not an integer from 1 to 65535', 'names the wrong argument', broken((fake) => ({
    resize: (id: string, cols: number, rows: number) => {
      try {
        return fake.resize(id, cols, rows)
      } catch (error) {
        throw Object.assign(error as Error, { option: 'size' })
      }
    },
  }))],
  // Writes held for a program that reads nothing, when the PTY ends first (not checked before 7 Dec).
  ['held for a program that reads nothing', 'settles held writes `accepted` when the PTY ends (the bytes went nowhere)', broken(settleHeldWrites((settlement) => (settlement.kind === 'refused' ? { kind: 'accepted' } : settlement)))],
  ['held for a program that reads nothing', 'settles held writes refused with another reason than `pty_exited`', broken(settleHeldWrites((settlement) => (settlement.kind === 'refused' ? { kind: 'refused', reason: 'provider_refused_write' } : settlement)))],
  ['held for a program that reads nothing', 'settles held writes of bytes (writeBytes) `accepted` when the PTY ends', broken((fake) => ({
    writeBytes: (id: string, bytes: Uint8Array) => {
      const answer = fake.writeBytes(id, bytes)
      return answer instanceof Promise ? answer.then((): WriteSettlement => ({ kind: 'accepted' })) : answer
    },
  }))],
  ['held for a program that reads nothing', 'settles held writes `unverifiable` saying no byte left', broken(settleHeldWrites(() => ({ kind: 'unverifiable', reason: 'partial_write', bytesHandedToTransport: false })))],
  ['held for a program that reads nothing', 'settles held writes accepted only when its provider is disposed', broken((fake) => {
    let disposing = false
    return {
      ...settleHeldWrites((settlement) => (disposing && settlement.kind === 'refused' ? { kind: 'accepted' } : settlement))(fake),
      dispose: async () => {
        disposing = true
        await fake.dispose()
      },
    }
  })],
  ['nothing running after dispose', 'disposes without stopping anything', broken(() => ({ dispose: async () => undefined }))],
  // The seed's provider-side rules (issue 11).
  ['`deadlineMs` as an absolute time', 'reads deadlineMs as a duration (its timer overflows and it gives up empty)', broken((fake) => ({
    listProcesses: async (options) => (options?.deadlineMs !== undefined && options.deadlineMs > 2 ** 31 - 1 ? [] : fake.listProcesses(options)),
  }))],
  ['`deadlineMs` as an absolute time', 'hangs on a past deadline', broken((fake) => ({
    listProcesses: (options) => (options?.deadlineMs !== undefined && options.deadlineMs < Date.now() ? new Promise(() => undefined) : fake.listProcesses(options)),
  }))],
  ['duration given as `deadlineMs`', 'takes deadlineMs 5000 as a deadline long past and KILLs at once', broken((fake) => ({
    shutdown: (id: string, options) => fake.shutdown(id, options?.deadlineMs !== undefined && options.deadlineMs < Date.now() ? { immediate: true } : options),
    listProcesses: (options) => fake.listProcesses(options?.deadlineMs === undefined ? options : { timeoutMs: 0 }),
  }))],
  ['duration given as `deadlineMs`', 'refuses the listing but still stops the PTY', broken((fake) => ({
    shutdown: async (id: string, options) => {
      if (options?.deadlineMs !== undefined) {
        void fake.shutdown(id, { immediate: true })
        throw new TypeError('Expected the `deadlineMs` option to be an epoch time')
      }
      return fake.shutdown(id, options)
    },
  }))],
  ['well-formed WriteSettlement', 'answers writes with a bare boolean', broken((fake) => ({
    write: (id: string, data: string) => ((fake.write(id, data) as { kind: string }).kind === 'accepted') as never,
  }))],
  ['`pty_live_other_incarnation`', 'calls another live incarnation absent', broken((fake) => ({
    spawn: (options) =>
      options.attachOnly === true ? Promise.reject(Object.assign(new Error('absent'), { code: 'pty_absent' })) : fake.spawn(options),
  }))],
  ['`pty_live_other_incarnation`', 'attaches to whatever runs under the id', broken((fake) => ({
    spawn: ({ expectedIncarnationId: _ignored, ...options }) => fake.spawn(options),
  }))],
  ['names the spawned incarnation on every exit', 'drops incarnations from exits', broken(rewriteExits((e) => ({ id: e.id, code: e.code, ...(e.cause ? { cause: e.cause } : {}) })))],
  // Found by a user-side hunt of custom providers: each passed the suite, then misled the controller.
  ['output before its single exit', 'leaves the incarnation off its data events', broken((fake) => ({
    onData: (listener: (event: PtyDataEvent) => void) => fake.onData(({ incarnationId: _dropped, ...event }) => listener(event)),
  }))],
  ['output before its single exit', 'reports its exit again a moment later', broken((fake) => ({
    onExit: (listener: (event: PtyExitEvent) => void) => fake.onExit((event) => { listener(event); setTimeout(() => listener(event), 20) }),
  }))],
  ['until its exit is reported', 'drops a PTY from its listing at the stop, and reports the exit later', broken((fake) => {
    const stopping = new Set<string>()
    return {
      listProcesses: async (options) => (await fake.listProcesses(options)).filter((row) => !stopping.has(row.id)),
      shutdown: async (id: string, options) => {
        stopping.add(id)
        fake.setShutdownBehaviour(id, 'never_confirm')
        await fake.shutdown(id, options)
        setTimeout(() => {
          // Unless the suite's clean-up ended it first.
          if (fake.livePtyIds().includes(id)) fake.emitExit(id, { exitCode: 0, signal: 1 })
        }, 30)
      },
    }
  })],
  ['naming an incarnation about that one', 'answers a liveness probe by id, whatever incarnation it names', broken((fake) => ({ probeLiveness: (id: string) => fake.probeLiveness(id) }))],
  ['no longer holds', 'answers a liveness probe by id, whatever incarnation it names', broken((fake) => ({ probeLiveness: (id: string) => fake.probeLiveness(id) }))],
  ['new incarnation after a respawn', 'keeps the first incarnation in its listing rows after a respawn', broken((fake) => {
    const first = new Map<string, string>()
    return {
      spawn: async (options) => {
        const result = await fake.spawn(options)
        if (!first.has(result.id) && result.incarnationId !== undefined) first.set(result.id, result.incarnationId)
        return result
      },
      listProcesses: async (options) => (await fake.listProcesses(options)).map((row) => ({ ...row, incarnationId: (first.get(row.id) ?? row.incarnationId) as never })),
    }
  })],
  // Writes of raw bytes.
  ['writes bytes as honestly as text', 'accepts bytes after exit', broken(() => ({ writeBytes: () => ({ kind: 'accepted' }) }))],
  ['writes bytes as honestly as text', 'refuses bytes to a live PTY', broken(() => ({ writeBytes: () => ({ kind: 'refused', reason: 'provider_cannot_write_bytes' }) }))],
  ['writes bytes as honestly as text', 'wraps its refusal of bytes after exit in a promise', broken((fake) => ({ writeBytes: async (id: string, bytes: Uint8Array) => fake.writeBytes(id, bytes) }))],
  ['writes bytes as honestly as text', 'answers bytes with a bare boolean', broken((fake) => ({ writeBytes: (id: string, bytes: Uint8Array) => ((fake.writeBytes(id, bytes) as { kind: string }).kind === 'accepted') as never }))],
  ['refuses bytes that are not a Uint8Array', 'writes a string given as bytes as text', broken((fake) => ({
    writeBytes: (id: string, bytes: Uint8Array) => (typeof bytes === 'string' ? fake.write(id, bytes) : fake.writeBytes(id, bytes)),
  }))],
  ['refuses bytes that are not a Uint8Array', 'settles malformed bytes as handed over', broken((fake) => ({
    writeBytes: (id: string, bytes: Uint8Array) => (bytes instanceof Uint8Array ? fake.writeBytes(id, bytes) : { kind: 'unverifiable', reason: 'provider_threw_after_handoff', bytesHandedToTransport: true }),
  }))],
]

// Mistakes whose failure must also say what to fix (a bare "expected false to be true" did not).
const explained: Array<[string, string, () => PtyProvider, RegExp]> = [
  ['graceful stop', 'never settles a stop', broken(() => ({ shutdown: () => new Promise<void>(() => undefined) })), /provider\.shutdown\("fake-1"\) did not settle within 100 ms: every provider method must settle/],
  ['never answers `false`', 'never settles a liveness probe', broken(() => ({ probeLiveness: () => new Promise<never>(() => undefined) })), /provider\.probeLiveness\("fake-1"\) did not settle/],
  ['write after exit', 'rejects a write (an async write that throws)', broken(() => ({ write: async () => { throw new Error('closed') } })), /write rejected \(Error: closed\): it must settle with a WriteSettlement, never reject/],
  ['graceful stop', 'returns nothing from onData', broken((fake) => ({ onData: (listener: (event: PtyDataEvent) => void) => void fake.onData(listener) as never })), /provider\.onData\(listener\) must return an unsubscribe function/],
  ['not an integer from 1 to 65535', 'resizes to 0 columns (what the kernel does with a size past 65535)', broken((fake) => ({ resize: (id: string) => fake.livePtyIds().includes(id) })),
    /resize\(id, 0, 24\) answered true: a bad size is refused by throwing an error with code 'invalid_option', option and value/],
  ['not an integer from 1 to 65535', 'throws a bare TypeError', broken((fake) => ({
    resize: (id: string, cols: number, rows: number) => {
      try {
        return fake.resize(id, cols, rows)
      } catch (error) {
        throw new TypeError((error as Error).message)
      }
    },
  })), /resize\(id, 0, 24\): the error's code: expected undefined \(undefined\) to be "invalid_option" \(string\)$/],
  ['held for a program that reads nothing', 'leaves held writes pending when the PTY ends', broken(settleHeldWrites(() => new Promise(() => undefined))),
    /^The write #1 \(262144 bytes\), held for a program that reads nothing when the PTY ended by an immediate stop, did not settle with a WriteSettlement \(ProviderCallHungError: provider\.write\("fake-1", .*\) did not settle within 100 ms/],
  ['held for a program that reads nothing', 'rejects held writes when the PTY ends', broken(settleHeldWrites(() => Promise.reject(new Error('the PTY is gone')))),
    /^The write #1 \(262144 bytes\), held for a program that reads nothing when the PTY ended by an immediate stop, did not settle with a WriteSettlement \(Error: the PTY is gone\): once the PTY ended, settle it refused\('pty_exited'\) or unverifiable\('partial_write', true\)/],
  ['held for a program that reads nothing', 'settles held writes accepted when the PTY ends', broken(settleHeldWrites(() => ({ kind: 'accepted' }))),
    /^the write #1 \(262144 bytes\), held for a program that reads nothing when the PTY ended by an immediate stop, settled \{"kind":"accepted"\}: bytes dropped at the PTY's end settle refused\('pty_exited'\) when none of them had gone on, unverifiable\('partial_write', true\) when some had — never accepted: expected false \(boolean\) to be true \(boolean\)$/],
  ['lists every live PTY', 'puts null into its listing', broken((fake) => ({ listProcesses: async () => [...(await fake.listProcesses()), null as never] })), /every listing row is an object with a non-empty string `id`/],
  // Before: "expected {…"at":"1970-01-01T00:00:00.000Z"…} to deeply equal {…"at":"1970-01-01T00:00:00.000Z"…}", the two sides shown alike.
  ['plain serializable data', 'stamps its exits with a Date', broken(rewriteExits((e) => ({ ...e, at: new Date(0) }) as PtyExitEvent)), /: at \.at, "1970-01-01T00:00:00\.000Z" \(string\) where a Date "1970-01-01T00:00:00\.000Z" was expected$/],
  ['graceful stop', 'names a signal in its cause', broken(rewriteExits((e) => ({ ...e, cause: { kind: 'signaled', signal: 'SIGHUP' as never } }))), /is not a TerminalExitCause: build it with resolveProcessExitCause/],
  ['once it unsubscribed', 'removes another listener on a second unsubscribe (splice of indexOf -1)', broken((fake) => {
    const listeners: ((event: PtyExitEvent) => void)[] = []
    fake.onExit((event) => { for (const listener of [...listeners]) listener(event) })
    return {
      onExit: (listener: (event: PtyExitEvent) => void) => {
        listeners.push(listener)
        return () => void listeners.splice(listeners.indexOf(listener), 1)
      },
    }
  }), /a second unsubscribe must not remove a different listener/],
]

describe('ptyProviderConformanceChecks', () => {
  it('should pass every check against the fake provider', async () => {
    for (const check of checks) await runPtyProviderConformanceCheck(check, () => createFakePtyProvider(), drivers)
  })

  it.each(cases)('should fail the “%s” check for a provider that %s', async (fragment, _what, makeBroken) => {
    const check = checkNamed(fragment)
    await expect(runPtyProviderConformanceCheck(check, makeBroken, drivers)).rejects.toThrow()
    // Control: the same check passes for the healthy fake, so the failure is the breakage's.
    await expect(runPtyProviderConformanceCheck(check, () => createFakePtyProvider(), drivers)).resolves.toBeUndefined()
  })

  it.each(explained)('should fail the “%s” check for a provider that %s, saying what to fix', async (fragment, _what, makeBroken, message) => {
    await expect(runPtyProviderConformanceCheck(checkNamed(fragment), makeBroken, drivers)).rejects.toThrow(message)
  })

  it('should still dispose a provider whose subscription it refuses (nothing the provider made is leaked)', async () => {
    let disposed = 0
    const leaky = (): PtyProvider => {
      const fake = createFakePtyProvider()
      return {
        ...fake,
        onData: (listener: (event: PtyDataEvent) => void) => void fake.onData(listener) as never,
        dispose: async () => {
          disposed += 1
          await fake.dispose()
        },
      }
    }
    await expect(runPtyProviderConformanceCheck(checkNamed('graceful stop'), leaky, drivers)).rejects.toThrow(/must return an unsubscribe function/)
    // Before: the recorder threw before the clean-up was armed, and the provider was never disposed.
    expect(disposed).toBe(1)
  })

  it('should accept a provider that refuses calls after dispose when it reported the exits', async () => {
    const strict = (): PtyProvider => {
      const fake = createFakePtyProvider()
      let disposed = false
      const guard = <T>(call: () => T): T => {
        if (disposed) throw new Error('used after dispose')
        return call()
      }
      return {
        ...fake,
        listProcesses: () => guard(() => fake.listProcesses()),
        hasPty: (id: string) => guard(() => fake.hasPty(id)),
        shutdown: (id: string, o?: object) => guard(() => fake.shutdown(id, o)),
        dispose: async () => {
          if (disposed) throw new Error('disposed twice')
          await fake.dispose()
          disposed = true
        },
      }
    }
    const check = checkNamed('nothing running after dispose')
    await expect(runPtyProviderConformanceCheck(check, strict, drivers)).resolves.toBeUndefined()
    // Without exits there is no evidence left at all: the check must fail.
    const withoutExits = { ...drivers, capabilities: { exitsOnDispose: false } }
    const strictCheck = ptyProviderConformanceChecks(withoutExits).find((c) => c.name === check.name)
    expect(strictCheck).toBeDefined()
    if (strictCheck === undefined) return
    await expect(runPtyProviderConformanceCheck(strictCheck, strict, withoutExits)).rejects.toThrow('dispose must be verifiable')
  })

  it('should clean up after a failing check: stop what it spawned and dispose the provider', async () => {
    const fake = createFakePtyProvider({ scheduling: 'manual' })
    const failing = { name: 'fails', run: async (h: { spawn: (o: object) => Promise<unknown> }) => {
      await h.spawn({})
      throw new Error('boom')
    } }
    await expect(runPtyProviderConformanceCheck(failing, () => fake, drivers)).rejects.toThrow('boom')
    expect(fake.livePtyIds()).toEqual([])
    expect(fake.listenerCount()).toBe(0)
    expect(fake.calls.map((call) => call.method)).toContain('dispose')
  })

  it('should run the bytes checks only where the provider writes bytes, or says so', async () => {
    const ofBytes = /^writes bytes as honestly|^refuses bytes that are not/
    const names = (options: PtyProviderConformanceOptions) => ptyProviderConformanceChecks(options).map((check) => check.name).filter((name) => ofBytes.test(name))
    expect(names(drivers)).toHaveLength(2)
    expect(names({ ...drivers, capabilities: { writeBytes: false } })).toEqual([])
    // A provider written before writeBytes passes them (it has nothing to check)…
    const textOnly = (): PtyProvider => {
      const { writeBytes: _writeBytes, ...provider } = createFakePtyProvider()
      return provider
    }
    for (const check of ptyProviderConformanceChecks(drivers).filter((check) => ofBytes.test(check.name))) {
      await expect(runPtyProviderConformanceCheck(check, textOnly, drivers)).resolves.toBeUndefined()
    }
    // …unless it declares the capability it does not have.
    const declaring = { ...drivers, capabilities: { writeBytes: true } }
    for (const check of ptyProviderConformanceChecks(declaring).filter((check) => ofBytes.test(check.name))) {
      await expect(runPtyProviderConformanceCheck(check, textOnly, declaring)).rejects.toThrow(/declared, but the provider has no writeBytes method/)
    }
    expect(() => ptyProviderConformanceChecks({ ...drivers, capabilities: { writeByte: true } as never })).toThrow(/writeByte/)
  })

  it('should run the held-write check only with a stopReadingInput driver, ending the PTY each way the provider can be', () => {
    const held = (options: PtyProviderConformanceOptions) => ptyProviderConformanceChecks(options).filter((check) => check.name.includes('held for a program that reads nothing'))
    const { stopReadingInput: _stopReadingInput, ...withoutDriver } = drivers
    expect(held(withoutDriver)).toEqual([])
    expect(held(drivers).map((check) => check.name)).toEqual([
      expect.stringContaining('(an immediate stop, a SIGKILL from outside, dispose)'),
      expect.stringContaining('a stop given no time (timeoutMs: 0)'),
    ])
    const { killFromOutside: _killFromOutside, ...withoutKill } = drivers
    expect(held({ ...withoutKill, capabilities: { exitsOnDispose: false } }).map((check) => check.name)).toEqual([
      expect.stringContaining('(an immediate stop)'),
      expect.stringContaining('a stop given no time'),
    ])
    expect(() => ptyProviderConformanceChecks({ ...drivers, stopReadingInput: 'SIGSTOP' as never })).toThrow('Expected the `stopReadingInput` option to be a function (or left out), got "SIGSTOP" (string)')
  })

  it('should not register a suite with a non-positive timeout', async () => {
    const { describePtyProviderConformance } = await import('ptykit/testing')
    expect(() => describePtyProviderConformance('bad', () => createFakePtyProvider(), { ...drivers, timeoutMs: 0 })).toThrow(
      'Expected the `timeoutMs` option to be a positive number, got 0 (number)',
    )
  })
})

// Added by helper-208: the checks of held writes at a stop that may close its transport before the
// end is proven (SSH), and of a PTY that ends while its producer is paused.
describe('the conformance checks of a stop given no time, and of an end while paused', () => {
  const refusedAsTransportClosed = settleHeldWrites((settlement) =>
    settlement.kind === 'refused' && settlement.reason === 'pty_exited' ? { kind: 'refused', reason: 'provider_refused_write' } : settlement,
  )
  const noTimeCheck = (options: PtyProviderConformanceOptions) => {
    const check = ptyProviderConformanceChecks(options).find((candidate) => candidate.name.includes('a stop given no time'))
    if (check === undefined) throw new Error('no check of a stop given no time')
    return check
  }

  it('accepts held writes refused provider_refused_write only from a provider whose stop may close its transport first', async () => {
    await expect(runPtyProviderConformanceCheck(noTimeCheck(drivers), broken(refusedAsTransportClosed), drivers)).rejects.toThrow(/settled \{"kind":"refused","reason":"provider_refused_write"\}: it must settle refused\('pty_exited'\) or unverifiable\('partial_write', true\): expected false/)
    const closesFirst = { ...drivers, capabilities: { stopClosesTransportFirst: true } }
    await expect(runPtyProviderConformanceCheck(noTimeCheck(closesFirst), broken(refusedAsTransportClosed), closesFirst)).resolves.toBeUndefined()
    // Never accepted, whatever the provider says of its stop.
    const accepting = settleHeldWrites(() => ({ kind: 'accepted' }))
    await expect(runPtyProviderConformanceCheck(noTimeCheck(closesFirst), broken(accepting), closesFirst)).rejects.toThrow(/settled \{"kind":"accepted"\}/)
    expect(() => ptyProviderConformanceChecks({ ...drivers, capabilities: { stopClosesTransportFirst: true, stopClosesTransport: true } as never })).toThrow(/stopClosesTransport\b/)
  })

  /**
   * The fake, its output split in two (a PTY's output comes in chunks), with a producer pause that
   * `whilePaused` handles: the second half of a chunk arrives after the listener paused on the first.
   */
  function pausable(whilePaused: 'drop output' | 'hold the exit for good' | 'exit first'): () => PtyProvider {
    return broken((fake) => {
      let paused = false
      const held: Array<() => void> = []
      const dataListeners = new Set<(event: PtyDataEvent) => void>()
      const fanOut = (event: PtyDataEvent) => {
        for (const listener of [...dataListeners]) listener(event)
      }
      fake.onData((event) => {
        const half = Math.ceil(event.data.length / 2)
        fanOut({ ...event, data: event.data.slice(0, half) })
        const rest = () => fanOut({ ...event, data: event.data.slice(half) })
        if (!paused) rest()
        else if (whilePaused !== 'drop output') held.push(rest)
      })
      return {
        pauseProducer: (id: string) => {
          paused = true
          fake.pauseProducer(id)
        },
        resumeProducer: (id: string) => {
          fake.resumeProducer(id)
          if (whilePaused === 'hold the exit for good') return
          paused = false
          for (const deliver of held.splice(0)) deliver()
        },
        onData: (listener: (event: PtyDataEvent) => void) => {
          dataListeners.add(listener)
          return () => void dataListeners.delete(listener)
        },
        onExit: (listener: (event: PtyExitEvent) => void) =>
          fake.onExit((event) => {
            if (paused && whilePaused === 'hold the exit for good') held.push(() => listener(event))
            else listener(event)
          }),
      }
    })
  }

  it.each([
    ['drop output', /all 16410 chars the program printed must arrive before its exit/],
    ['hold the exit for good', /Timed out after 100 ms waiting for the exit/],
    ['exit first', /nothing of a PTY may follow its exit/],
  ] as const)('fails a provider that, while its producer is paused, would %s', async (whilePaused, message) => {
    const check = checkNamed('ended while its producer was paused')
    await expect(runPtyProviderConformanceCheck(check, pausable(whilePaused), drivers)).rejects.toThrow(message)
  })

  it('passes a provider without flow control (it has nothing to hold)', async () => {
    const withoutFlowControl = (): PtyProvider => {
      const { pauseProducer: _pause, resumeProducer: _resume, ...provider } = createFakePtyProvider()
      return provider
    }
    await expect(runPtyProviderConformanceCheck(checkNamed('ended while its producer was paused'), withoutFlowControl, drivers)).resolves.toBeUndefined()
  })
})

// Added by helper-213 (review): the check of the rule of `PtyProvider.dispose` passed the four
// bundled providers, but nothing showed it could fail — nor that its capability skips it.
describe('the conformance check of calls after dispose', () => {
  const disposeCheckName = 'once disposed, refuses every call'

  it('fails a provider that answers after its dispose ([] for a listing, a throw where a rejection is due, another code)', async () => {
    const check = checkNamed(disposeCheckName)
    // Answered: an empty listing after dispose, a guess passed off as an answer.
    const answersEmpty = broken((fake) => {
      let disposed = false
      return {
        dispose: async () => {
          await fake.dispose()
          disposed = true
        },
        listProcesses: (options) => (disposed ? Promise.resolve([]) : fake.listProcesses(options)),
      }
    })
    await expect(runPtyProviderConformanceCheck(check, answersEmpty, drivers)).rejects.toThrow(/provider\.listProcesses\(\) after dispose must be refused \(a rejection\), not answered/)
    // A synchronous throw from a method that answers with a promise (a caller's `.catch` misses it).
    const throwsSync = broken((fake) => ({
      getCwd: (id, options) => {
        if (fake.calls.some((call) => call.method === 'dispose')) throw Object.assign(new Error('Cannot call `getCwd`'), { code: 'provider_disposed' })
        return fake.getCwd(id, options)
      },
    }))
    await expect(runPtyProviderConformanceCheck(check, throwsSync, drivers)).rejects.toThrow(/provider\.getCwd\(\) after dispose must be refused \(a rejection\)/)
    // Refused, but with another code than provider_disposed.
    const otherCode = broken((fake) => ({
      hasPty: (id) => {
        if (fake.calls.some((call) => call.method === 'dispose')) throw Object.assign(new Error('Cannot call `hasPty`'), { code: 'pty_not_found' })
        return fake.hasPty(id)
      },
    }))
    await expect(runPtyProviderConformanceCheck(check, otherCode, drivers)).rejects.toThrow(/the code of provider\.hasPty\(\)'s refusal after dispose/)
    // The fake itself follows the rule.
    await expect(runPtyProviderConformanceCheck(check, () => createFakePtyProvider(), drivers)).resolves.toBeUndefined()
  })

  it('is skipped with refusesCallsAfterDispose: false', () => {
    expect(ptyProviderConformanceChecks({ ...drivers, capabilities: { refusesCallsAfterDispose: false } }).some((check) => check.name.includes(disposeCheckName))).toBe(false)
    expect(ptyProviderConformanceChecks(drivers).some((check) => check.name.includes(disposeCheckName))).toBe(true)
  })
})

// The check of a provider's `detach()` (the pty host provider's, played by the fake): it must be
// able to fail, and run only where the provider opts in.
describe('the conformance check of calls after detach', () => {
  const detachCheckName = 'once detached, refuses a spawn'
  const detaching = { ...drivers, capabilities: { detach: true } }
  const detachCheck = (): (typeof checks)[number] => {
    const check = ptyProviderConformanceChecks(detaching).find((candidate) => candidate.name.includes(detachCheckName))
    if (check === undefined) throw new Error('no detach check')
    return check
  }
  /** A fake whose `detach()` is overridden by `override` once detached (or the detach itself). */
  const brokenAfterDetach = (override: (fake: FakePtyProvider) => Partial<FakePtyProvider>): (() => PtyProvider) => broken((fake) => override(fake) as Partial<PtyProvider>)
  const detached = (fake: FakePtyProvider): boolean => fake.calls.some((call) => call.method === 'detach')

  it('passes the fake, and fails a provider that answers a listing, stops a PTY it no longer sees, or vouches for it', async () => {
    await expect(runPtyProviderConformanceCheck(detachCheck(), () => createFakePtyProvider(), detaching)).resolves.toBeUndefined()
    // An empty listing after detach: it would prove every PTY gone.
    const answersEmpty = brokenAfterDetach((fake) => ({ listProcesses: (options) => (detached(fake) ? Promise.resolve([]) : fake.listProcesses(options)) }))
    await expect(runPtyProviderConformanceCheck(detachCheck(), answersEmpty, detaching)).rejects.toThrow(/provider\.listProcesses\(\) after detach is refused `provider_detached`/)
    // A stop refused with the dispose's code.
    const otherCode = brokenAfterDetach((fake) => ({
      shutdown: (id, options) => (detached(fake) && fake.getPty(id)?.live === true ? Promise.reject(Object.assign(new Error('Cannot call `shutdown`'), { code: 'provider_disposed', ptyId: id })) : fake.shutdown(id, options)),
    }))
    await expect(runPtyProviderConformanceCheck(detachCheck(), otherCode, detaching)).rejects.toThrow(/provider\.shutdown\(\) after detach is refused `provider_detached`/)
    // Still vouching for a PTY it no longer sees.
    const vouching = brokenAfterDetach((fake) => ({ hasPty: (id) => (detached(fake) && fake.getPty(id)?.live === true ? true : fake.hasPty(id)) }))
    await expect(runPtyProviderConformanceCheck(detachCheck(), vouching, detaching)).rejects.toThrow(/hasPty of a PTY that runs on after detach is null/)
    // A provider without detach() that says it has one.
    const { detach: _detach, ...withoutDetach } = createFakePtyProvider()
    await expect(runPtyProviderConformanceCheck(detachCheck(), () => withoutDetach as PtyProvider, detaching)).rejects.toThrow(/has a detach\(\) method/)
  })

  it('runs only with the detach capability', () => {
    expect(checks.some((check) => check.name.includes(detachCheckName))).toBe(false)
    expect(ptyProviderConformanceChecks(detaching).some((check) => check.name.includes(detachCheckName))).toBe(true)
  })
})

// Added by helper-240: the check of a provider's refusal of a misspelt spawn option (opt in, as the
// bundled providers refuse one): it must pass the fake, be able to fail, and run only where asked.
describe('the conformance check of a misspelt spawn option', () => {
  const checkName = 'refuses a misspelt spawn option'
  const refusing = { ...drivers, capabilities: { refusesMisspeltSpawnOptions: true } }
  const misspeltCheck = (): (typeof checks)[number] => {
    const check = ptyProviderConformanceChecks(refusing).find((candidate) => candidate.name.includes(checkName))
    if (check === undefined) throw new Error('no misspelt spawn option check')
    return check
  }

  it('passes the fake, and fails a provider that ignores a misspelt key, names no option, or shows a misspelt `env`', async () => {
    await expect(runPtyProviderConformanceCheck(misspeltCheck(), () => createFakePtyProvider(), refusing)).resolves.toBeUndefined()
    // `cdw` dropped, the spawn started in the default directory: what a provider written before the rule does.
    const ignoring = broken((fake) => ({
      spawn: (options) => {
        const { cdw: _cdw, ...rest } = options as Record<string, unknown>
        return fake.spawn(rest)
      },
    }))
    await expect(runPtyProviderConformanceCheck(misspeltCheck(), ignoring, refusing)).rejects.toThrow(/the code of the refusal of a spawn with `cdw`/)
    // Refused, but naming the option meant instead of the key as given.
    const namesMeant = broken((fake) => ({
      spawn: (options) => ('col' in options ? Promise.reject(Object.assign(new TypeError('Unknown option `col`: did you mean `cols`?'), { code: 'invalid_spawn_option', option: 'cols', value: 100 })) : fake.spawn(options)),
    }))
    await expect(runPtyProviderConformanceCheck(misspeltCheck(), namesMeant, refusing)).rejects.toThrow(/the `option` of the refusal of a spawn with `col`/)
    // A misspelt `env` refused with its value in the message: a token in the logs.
    const showsSecret = broken((fake) => ({
      spawn: (options) => {
        const { evn } = options as { evn?: unknown }
        if (evn === undefined) return fake.spawn(options)
        return Promise.reject(Object.assign(new TypeError(`Unknown option \`evn\` (did you mean \`env\`?), got ${JSON.stringify(evn)}`), { code: 'invalid_spawn_option', option: 'evn' }))
      },
    }))
    await expect(runPtyProviderConformanceCheck(misspeltCheck(), showsSecret, refusing)).rejects.toThrow(/a misspelt `env`\) shows no value of it/)
    // Refused as asked, but started anyway: the process runs on, unseen by the caller.
    const startsAnyway = broken((fake) => ({
      spawn: async (options) => {
        const { argv, ...rest } = options as Record<string, unknown>
        if (argv === undefined) return fake.spawn(options)
        await fake.spawn(rest)
        throw Object.assign(new TypeError('Expected the `argv` option to be left out (did you mean `args`?)'), { code: 'invalid_spawn_option', option: 'argv', value: argv })
      },
    }))
    await expect(runPtyProviderConformanceCheck(misspeltCheck(), startsAnyway, refusing)).rejects.toThrow(/the PTY ids listed after spawns refused for a misspelt option \(none started\)/)
  })

  it('runs only with the refusesMisspeltSpawnOptions capability', () => {
    expect(checks.some((check) => check.name.includes(checkName))).toBe(false)
    expect(ptyProviderConformanceChecks(refusing).some((check) => check.name.includes(checkName))).toBe(true)
    expect(() => ptyProviderConformanceChecks({ ...drivers, capabilities: { refusesMisspeltSpawnOption: true } as never })).toThrow(/refusesMisspeltSpawnOption\b.*did you mean `refusesMisspeltSpawnOptions`/)
  })
})
