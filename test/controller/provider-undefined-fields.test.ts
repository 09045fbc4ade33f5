// A provider written by a host compiled with `exactOptionalPropertyTypes` builds its events and
// replies from values it holds as `T | undefined` (`{ id, code, incarnationId: maybeIncarnation }`):
// the provider-side types say `| undefined` (scripts/consumer-types/forwarded-undefined.ts proves
// the types), and here the controller and the spawn pipeline read an undefined-valued field exactly
// as an absent one — and never pass the `undefined` key on in what they return to their own users.
import { describe, expect, it } from 'vitest'
import type { ProviderProcessInfo, PtyProvider, PtySpawnResult } from '../../src/contracts/index.js'
import { createPtyController, type PtyControllerError } from '../../src/controller/index.js'
import { fakeWithTestDrivenEvents } from '../support/test-driven-events.js'

/** Every key of `keys` present, valued `undefined`. */
const absent = <K extends string>(...keys: K[]): Record<K, undefined> => Object.fromEntries(keys.map((key) => [key, undefined])) as Record<K, undefined>

/** The keys of `value` whose value is `undefined` (what "absent, never `undefined`" forbids). */
function undefinedKeys(value: object): string[] {
  return Object.entries(value)
    .filter(([, field]) => field === undefined)
    .map(([key]) => key)
}

/** The fake, with its spawn reply, listing rows and snapshots passed through `reshape`, and every event channel driven by the test. */
function handWrittenProvider(
  reshape: { reply?: (reply: PtySpawnResult) => PtySpawnResult; row?: (row: ProviderProcessInfo) => ProviderProcessInfo; quietShutdown?: boolean } = {},
) {
  const { fake, provider: base, channels } = fakeWithTestDrivenEvents({ authoritativeListings: true })
  const provider: PtyProvider = {
    ...base,
    spawn: async (options) => (reshape.reply ?? ((reply) => reply))(await fake.spawn(options)),
    listProcesses: async (options) => (await fake.listProcesses(options)).map(reshape.row ?? ((row) => row)),
    // A stop the test answers itself (its exit event), when asked for.
    shutdown: reshape.quietShutdown === true ? async () => {} : (id, options) => fake.shutdown(id, options),
    getBufferSnapshot: async (id, options) => {
      const snapshot = await fake.getBufferSnapshot(id, options)
      return snapshot === null ? null : { ...snapshot, ...absent('incarnationId', 'kittyKeyboardFlags', 'lastTitle') }
    },
  }
  return { fake, provider, emit: channels }
}

describe('undefined-valued fields of what a provider builds are absent', () => {
  it('a spawn reply: every optional field undefined spawns as if it were left out', async () => {
    const { provider } = handWrittenProvider({
      reply: (reply) => ({
        id: reply.id,
        ...absent('pid', 'incarnationId', 'isReattach', 'exitedBeforeSpawnReply', 'providerSequence', 'hostReportsChildExitStatus', 'cols', 'rows'),
      }),
    })
    const controller = createPtyController({ provider })
    const spawns: object[] = []
    controller.on('spawn', (event) => spawns.push(event))
    const reply = await controller.spawn({ cols: 100, rows: 30 })
    // Not a reattach, not exited during start, the requested size, no incarnation, no pid.
    expect(reply).toMatchObject({ isReattach: false, hostId: 'local' })
    expect(controller.hasPty(reply.id)).toBe(true)
    expect(undefinedKeys(reply)).toEqual([])
    expect(spawns).toHaveLength(1)
    expect(spawns[0]).toMatchObject({ ptyId: reply.id, isReattach: false, cols: 100, rows: 30 })
    expect(undefinedKeys(spawns[0]!)).toEqual([])
    await controller.dispose()
  })

  it('events of a provider that attests no incarnation: an undefined incarnationId is unattested, an undefined cause is resolved from the code', async () => {
    const { provider, emit } = handWrittenProvider({ reply: (reply) => ({ ...reply, incarnationId: undefined }) })
    const controller = createPtyController({ provider })
    const output: string[] = []
    const sequences: number[] = []
    const exits: object[] = []
    const errors: PtyControllerError[] = []
    controller.on('data', (event) => {
      output.push(event.data)
      sequences.push(event.seq)
    })
    controller.on('exit', (event) => exits.push(event))
    controller.on('error', (error) => errors.push(error))
    const reply = await controller.spawn({})
    const { id } = reply
    expect(undefinedKeys(reply)).toEqual([])

    emit.data.fire({ id, data: 'abc', incarnationId: undefined })
    emit.loss.fire({ id, fromSeq: 3, toSeq: 5, incarnationId: undefined })
    emit.data.fire({ id, data: 'de', incarnationId: undefined })
    expect(output).toEqual(['abc', 'de'])
    expect(sequences).toEqual([3, 7])

    emit.exits.fire({ id, code: 3, ...absent('incarnationId', 'cause', 'observed', 'diedBeforeStopRequest', 'stopRequestedBeforeDeath') })
    expect(exits).toEqual([{ ptyId: id, hostId: 'local', code: 3, cause: { kind: 'exited', exitCode: 3 } }])
    expect(undefinedKeys(exits[0]!)).toEqual([])
    expect(controller.hasPty(id)).toBe(false)
    expect(errors).toEqual([])
    await controller.dispose()
  })

  it('events of an attested incarnation: one whose incarnationId is undefined is fenced exactly as one without the key', async () => {
    const outcome = async (incarnation: object) => {
      const { provider, emit } = handWrittenProvider()
      const controller = createPtyController({ provider })
      const seen: string[] = []
      controller.on('data', (event) => seen.push(`data ${event.data}`))
      controller.on('exit', (event) => seen.push(`exit ${event.cause.kind}`))
      const { id } = await controller.spawn({})
      emit.data.fire({ id, data: 'abc', ...incarnation })
      emit.exits.fire({ id, code: 3, ...incarnation })
      seen.push(`live ${controller.hasPty(id)}`)
      await controller.dispose()
      return seen
    }
    expect(await outcome({ incarnationId: undefined })).toEqual(await outcome({}))
  })

  it('an exit with `cause: undefined` and code 0 is unreported, never a clean exit; `observed: undefined` certifies the death as an absent one does', async () => {
    const { provider, emit } = handWrittenProvider()
    const controller = createPtyController({ provider })
    const exits: object[] = []
    const verdicts: string[] = []
    controller.on('exit', (event) => exits.push(event))
    controller.on('liveness', (event) => verdicts.push(event.verdict.kind))
    const { id, incarnationId } = await controller.spawn({})
    emit.exits.fire({ id, code: 0, incarnationId, ...absent('cause', 'observed', 'diedBeforeStopRequest', 'stopRequestedBeforeDeath') })
    expect(exits).toEqual([{ ptyId: id, hostId: 'local', incarnationId, code: 0, cause: { kind: 'unknown', reason: 'cause_unreported' } }])
    expect(verdicts).toEqual(['exited'])
    await controller.dispose()
  })

  it('a stop: `diedBeforeStopRequest: undefined` does not keep the operator-close rule from applying', async () => {
    const { provider, emit } = handWrittenProvider({ quietShutdown: true })
    const controller = createPtyController({ provider })
    const exits: object[] = []
    controller.on('exit', (event) => exits.push(event))
    const { id, incarnationId } = await controller.spawn({})
    controller.kill(id)
    emit.exits.fire({ id, code: 0, incarnationId, cause: { kind: 'signaled', signal: 1 }, ...absent('observed', 'diedBeforeStopRequest', 'stopRequestedBeforeDeath') })
    expect(exits[0]).toEqual({ ptyId: id, hostId: 'local', incarnationId, code: 0, cause: { kind: 'operator_close' } })
    await controller.dispose()
  })

  it('listing rows and snapshots: undefined fields read as absent, and the controller answers them absent, never `undefined`', async () => {
    const { provider } = handWrittenProvider({
      row: (row) => ({ ...row, ...absent('incarnationId', 'pid', 'scopeId', 'slotKey', 'claimKey', 'foregroundProcessEvidence') }),
    })
    const controller = createPtyController({ provider })
    const { id } = await controller.spawn({})
    const rows = await controller.listProcesses('local')
    expect(rows.map((row) => row.id)).toEqual([id])
    expect(undefinedKeys(rows[0]!)).toEqual([])
    const scoped = await controller.listProcessesWithHostScope()
    expect(undefinedKeys(scoped.processes[0]!)).toEqual([])
    // An unattested row agrees with the record's incarnation: the PTY is still live, not replaced.
    expect(controller.hasPty(id)).toBe(true)
    const snapshot = await controller.serializeProviderBuffer(id)
    expect(snapshot).not.toBeNull()
    expect(undefinedKeys(snapshot!)).toEqual([])
    await controller.dispose()
  })
})
