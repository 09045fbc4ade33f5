// fc.commands model of the app's PTY records: whatever sequence of spawns, state changes, exits,
// losses of contact and forgets, `anyLive()` (a count kept by the transitions) equals a scan of
// the records, and the hold callback fires exactly when that answer flips.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ClientPtyRecords, type ClientPtyState } from '../../src/pty-host/client-pty-records.js'
import { PTY_HOST_EXITED_ID_MEMORY } from '../../src/pty-host/pty-host-provider-options.js'
import { PTY_HOST_PROTOCOL_VERSION } from '../../src/pty-host/protocol.js'

type Real = { records: ClientPtyRecords; flips: number }
type Model = { lastAnswer: boolean; flips: number }

const IDS = ['a', 'b', 'c', 'd', 'e']
const STATES: ClientPtyState[] = ['spawning', 'live', 'unknown', 'exited']

const scan = (records: ClientPtyRecords): boolean => [...records.ptys.values()].some((record) => record.state === 'live' || record.state === 'spawning')

/** After any command: the count agrees with the scan, and the callback fired once per flip. */
function checkAgainstScan(model: Model, real: Real): void {
  const answer = scan(real.records)
  expect(real.records.anyLive()).toBe(answer)
  if (answer !== model.lastAnswer) model.flips++
  model.lastAnswer = answer
  expect(real.flips).toBe(model.flips)
}

class RecordCommand implements fc.Command<Model, Real> {
  constructor(
    readonly id: string,
    readonly forSpawn: boolean,
  ) {}
  check = (): boolean => true
  run(model: Model, real: Real): void {
    const record = this.forSpawn ? real.records.recordForSpawn(this.id, 'host') : real.records.recordForAttach(this.id, 'host', undefined)
    expect(real.records.ptys.get(this.id)).toBe(record)
    checkAgainstScan(model, real)
  }
  toString = (): string => `${this.forSpawn ? 'recordForSpawn' : 'recordForAttach'}(${this.id})`
}

class SetStateCommand implements fc.Command<Model, Real> {
  constructor(
    readonly id: string,
    readonly state: ClientPtyState,
    readonly stale: boolean,
  ) {}
  check = (): boolean => true
  run(model: Model, real: Real): void {
    const record = real.records.ptys.get(this.id)
    if (record === undefined) return
    if (this.stale) {
      // A record already forgotten (a caller still holding it after an await) changes uncounted.
      real.records.forget(record)
      checkAgainstScan(model, real)
    }
    real.records.setState(record, this.state)
    expect(record.state).toBe(this.state)
    checkAgainstScan(model, real)
  }
  toString = (): string => `setState(${this.id}, ${this.state}${this.stale ? ', after forget' : ''})`
}

class ExitEventCommand implements fc.Command<Model, Real> {
  constructor(readonly id: string) {}
  check = (): boolean => true
  run(model: Model, real: Real): void {
    real.records.onEvent({ v: 2, type: 'exit', ptyId: this.id, code: 0 })
    checkAgainstScan(model, real)
  }
  toString = (): string => `exit(${this.id})`
}

class ForgetCommand implements fc.Command<Model, Real> {
  constructor(readonly id: string) {}
  check = (): boolean => true
  run(model: Model, real: Real): void {
    const record = real.records.ptys.get(this.id)
    if (record === undefined) return
    real.records.forget(record)
    real.records.forget(record) // twice: a no-op
    expect(real.records.ptys.has(this.id)).toBe(false)
    checkAgainstScan(model, real)
  }
  toString = (): string => `forget(${this.id})`
}

class MarkUnknownCommand implements fc.Command<Model, Real> {
  check = (): boolean => true
  run(model: Model, real: Real): void {
    real.records.markUnknown()
    expect(real.records.anyLive()).toBe(false)
    checkAgainstScan(model, real)
  }
  toString = (): string => 'markUnknown()'
}

const id = fc.constantFrom(...IDS)
const commands = [
  fc.tuple(id, fc.boolean()).map(([ptyId, forSpawn]) => new RecordCommand(ptyId, forSpawn)),
  fc.tuple(id, fc.constantFrom(...STATES), fc.boolean()).map(([ptyId, state, stale]) => new SetStateCommand(ptyId, state, stale)),
  id.map((ptyId) => new ExitEventCommand(ptyId)),
  id.map((ptyId) => new ForgetCommand(ptyId)),
  fc.constant(new MarkUnknownCommand()),
]

describe('client PTY records: the live count', () => {
  it('answers anyLive() as a scan of the records would, and signals exactly its flips', () => {
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 60 }), (cmds) => {
        const real: Real = { records: new ClientPtyRecords(() => real.flips++), flips: 0 }
        fc.modelRun(() => ({ model: { lastAnswer: false, flips: 0 }, real }), cmds)
      }),
    )
  })

  it('keeps counting right when exited records are dropped from memory', () => {
    let flips = 0
    const records = new ClientPtyRecords(() => flips++)
    for (let i = 0; i < PTY_HOST_EXITED_ID_MEMORY + 10; i++) {
      records.recordForSpawn(`p${i}`, 'host')
      records.onEvent({ v: 2, type: 'exit', ptyId: `p${i}`, code: 0 })
    }
    expect(records.ptys.size).toBe(PTY_HOST_EXITED_ID_MEMORY)
    records.recordForSpawn('live', 'host')
    expect(records.anyLive()).toBe(scan(records))
    expect(records.anyLive()).toBe(true)
    expect(flips).toBe(2 * (PTY_HOST_EXITED_ID_MEMORY + 10) + 1)
  })
})

describe('the app’s PTY records: output losses', () => {
  it('report only what lies past what was delivered or reported already, so a gap is never counted twice', () => {
    const records = new ClientPtyRecords(() => undefined)
    const losses: { fromSeq: number; toSeq: number }[] = []
    let delivered = ''
    records.loss.add(({ fromSeq, toSeq }) => losses.push({ fromSeq, toSeq }))
    records.data.add(({ data }) => (delivered += data))
    const record = records.recordForSpawn('p', 'host')
    records.setState(record, 'live')
    const v = PTY_HOST_PROTOCOL_VERSION
    records.onEvent({ type: 'data', ptyId: 'p', data: 'abcd', seq: 4 })
    // Two re-attaches from seq 4 (a reconnect's and a caller's) each get the host's loss and replay.
    for (let attach = 0; attach < 2; attach++) {
      records.onEvent({ v, type: 'loss', ptyId: 'p', fromSeq: 4, toSeq: 10 })
      records.onEvent({ type: 'data', ptyId: 'p', data: 'KLM', seq: 13 })
    }
    // A loss partly behind what was delivered, and one wholly behind it.
    records.onEvent({ v, type: 'loss', ptyId: 'p', fromSeq: 11, toSeq: 20 })
    records.onEvent({ v, type: 'loss', ptyId: 'p', fromSeq: 0, toSeq: 12 })
    expect(losses).toEqual([
      { fromSeq: 4, toSeq: 10 },
      { fromSeq: 13, toSeq: 20 },
    ])
    expect(delivered).toBe('abcdKLM')
  })
})
